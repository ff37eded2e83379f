import { ArbiterError, isArbiterError, pingSubject, PingReply } from '@arbiter/contracts';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectBus, defineEndpoint, ReplyBytes, type Bus } from '../src/bus.js';
import { encodeFrame } from '../src/frame.js';
import { testServers } from '@arbiter/test-kit';
import { memoryLogger, randomPrefix } from './helpers.js';

const NATS_URL = testServers().nats;
const prefix = randomPrefix();
const { logger, lines } = memoryLogger('bus-test');

const Sum = z.strictObject({ a: z.number(), b: z.number() });
const SumReply = z.object({ sum: z.number() });

let server: Bus;
let client: Bus;
let release: () => void = () => {};
let gate = new Promise<void>((r) => (release = r));
/** Told when `calc.slow`'s handler has a request: it is in flight at the server. */
let slowArrived: () => void = () => {};
const seenRequestIds: (string | undefined)[] = [];
const serverMetrics = new Registry();

async function caught(p: Promise<unknown>): Promise<ArbiterError> {
  try {
    await p;
  } catch (err) {
    if (isArbiterError(err)) return err;
    throw err;
  }
  throw new Error('expected the request to fail');
}

beforeAll(async () => {
  server = await connectBus({ url: NATS_URL, prefix, name: 'bus-test-server', logger, metrics: serverMetrics });
  client = await connectBus({ url: NATS_URL, prefix, name: 'bus-test-client', logger });
  await server.serve({
    name: 'calc',
    version: '1.0.0',
    endpoints: {
      sum: defineEndpoint({
        subject: 'calc.sum',
        request: Sum,
        handler: async (req, ctx) => {
          seenRequestIds.push(ctx.requestId);
          return { sum: req.a + req.b };
        },
      }),
      conflict: {
        subject: 'calc.conflict',
        request: z.object({}),
        handler: async () => {
          throw new ArbiterError('conflict', 'already there');
        },
      },
      crash: {
        subject: 'calc.crash',
        request: z.object({}),
        handler: async () => {
          throw new Error('secret internals');
        },
      },
      big: {
        subject: 'calc.big',
        request: z.object({}),
        handler: async () => ({ sum: 0, pad: 'x'.repeat(server.nc.info?.max_payload ?? 1024 * 1024) }),
      },
      wrongShape: { subject: 'calc.wrong', request: z.object({}), handler: async () => ({ total: 'x' }) },
      echoBytes: {
        subject: 'calc.bytes',
        raw: true,
        handler: async (data: Uint8Array) => {
          if (new TextDecoder().decode(data) === 'fail') throw new ArbiterError('conflict', 'raw refused');
          return data;
        },
      },
      frame: defineEndpoint({
        subject: 'calc.frame',
        request: Sum,
        handler: async (req) => new ReplyBytes(encodeFrame({ sum: req.a + req.b }, ['{"a":1}', '[2]'], { raw: '{"x":[1,2]}' })),
      }),
      slow: {
        subject: 'calc.slow',
        request: z.object({}),
        handler: async () => {
          slowArrived();
          await gate;
          return { sum: 0 };
        },
      },
    },
  });
});

afterAll(async () => {
  release();
  await client.close();
  await server.close();
});

describe('Bus', () => {
  it('prefixes subjects', () => {
    expect(client.subject('exec.run')).toBe(`${prefix}.exec.run`);
    expect(client.connected()).toBe(true);
  });

  it('answers `<queue group>._ping` for every service it serves, with its name and version (the gateway probes it for /readyz)', async () => {
    expect(await client.request(pingSubject('calc'), {}, PingReply)).toEqual({ service: 'calc', version: '1.0.0' });
    const none = await caught(client.request(pingSubject('nobody-serves-this'), {}, PingReply, { timeoutMs: 2000 }));
    expect(none.code).toBe('dependency_unavailable');
  });

  it("keeps a service's own endpoint named `ping` at `<group>.ping`, and refuses one on the probe's reserved subject", async () => {
    const Pong = z.object({ pong: z.boolean() });
    await server.serve({
      name: 'pinger',
      version: '2.0.0',
      description: 'a service with a ping of its own',
      endpoints: { ping: defineEndpoint({ subject: 'pinger.ping', request: z.object({}), handler: async () => ({ pong: true }) }) },
    });
    expect(await client.request('pinger.ping', {}, Pong)).toEqual({ pong: true });
    expect(await client.request(pingSubject('pinger'), {}, PingReply)).toEqual({ service: 'pinger', version: '2.0.0' });
    await expect(
      server.serve({
        name: 'taker',
        version: '1.0.0',
        description: 'takes the reserved subject',
        endpoints: { mine: defineEndpoint({ subject: pingSubject('taker'), request: z.object({}), handler: async () => ({}) }) },
      }),
    ).rejects.toThrow(/reserved name or subject/);
  });

  it('sends JSON and returns the validated reply data', async () => {
    await expect(client.request('calc.sum', { a: 2, b: 3 }, SumReply)).resolves.toEqual({ sum: 5 });
  });

  it("answers a handler's ReplyBytes as they are: requestFrame decodes the frame, and an error envelope as its error", async () => {
    const frame = await client.requestFrame('calc.frame', { a: 2, b: 3 });
    expect(frame.header).toEqual({ sum: 5, ends: [7, 10], raw: { x: [1, 2] } });
    expect(frame.items.map((item) => new TextDecoder().decode(item))).toEqual(['{"a":1}', '[2]']);
    expect((await caught(client.requestFrame('calc.frame', { a: 'x' }))).code).toBe('bad_request');
    expect((await caught(client.requestFrame('calc.conflict', {}))).code).toBe('conflict');
    // A reply that is not a frame (an envelope around a value) is the server's fault.
    expect((await caught(client.requestFrame('calc.sum', { a: 2, b: 3 }))).code).toBe('internal');
  });

  it("returns a reply's data as raw JSON without decoding it (requestData), and an error envelope as its error", async () => {
    const data = await client.requestData('calc.sum', { a: 2, b: 3 });
    expect(new TextDecoder().decode(data)).toBe('{"sum":5}');
    expect((await caught(client.requestData('calc.conflict', {}))).code).toBe('conflict');
    expect((await caught(client.requestData('calc.sum', { a: 'x' }))).code).toBe('bad_request');
  });

  it('serves a raw endpoint: bytes in, bytes out; a throw is the usual error envelope', async () => {
    const reply = await client.requestRaw('calc.bytes', new TextEncoder().encode('{"x":1}\nanything'));
    expect(new TextDecoder().decode(reply)).toBe('{"x":1}\nanything');
    const refused = JSON.parse(
      new TextDecoder().decode(await client.requestRaw('calc.bytes', new TextEncoder().encode('fail'))),
    ) as unknown;
    expect(refused).toMatchObject({ ok: false, error: { code: 'conflict', message: 'raw refused' } });
  });

  it('passes the request id to the handler', async () => {
    await client.request('calc.sum', { a: 1, b: 1 }, SumReply, { requestId: 'req-42' });
    expect(seenRequestIds).toContain('req-42');
  });

  it('answers bad_request, listing the reasons, when the body fails the schema', async () => {
    const err = await caught(client.request('calc.sum', { a: 'two' }, SumReply));
    expect(err.code).toBe('bad_request');
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^invalid request to `calc\.sum`: /);
    expect(err.errors?.map((e) => e.path).sort()).toEqual(['a', 'b']);
  });

  it('carries a handler ArbiterError across the bus', async () => {
    const err = await caught(client.request('calc.conflict', {}, SumReply));
    expect(err).toBeInstanceOf(ArbiterError);
    expect(err.name).toBe('ArbiterError');
    expect([err.code, err.status, err.message]).toEqual(['conflict', 409, 'already there']);
  });

  it('answers internal for any other handler error, hides its detail and logs it', async () => {
    const err = await caught(client.request('calc.crash', {}, SumReply));
    expect([err.code, err.status, err.message]).toEqual(['internal', 500, 'internal error']);
    const logged = lines.find((l) => l.msg === 'handler failed');
    expect(logged).toMatchObject({ level: 50, subject: 'calc.crash', err: { message: 'secret internals' } });
  });

  it('treats a reply that fails the reply schema as internal', async () => {
    const err = await caught(client.request('calc.wrong', {}, SumReply));
    expect(err.code).toBe('internal');
    expect(err.message).toBe('malformed reply from `calc.wrong`');
  });

  it('maps no responders to dependency_unavailable', async () => {
    const err = await caught(client.request('calc.nobody', {}, SumReply));
    expect([err.code, err.status]).toEqual(['dependency_unavailable', 503]);
    expect(err.cause).toBeDefined();
  });

  it('maps a missing reply to timeout', async () => {
    const err = await caught(client.request('calc.slow', {}, SumReply, { timeoutMs: 50 }));
    expect([err.code, err.status]).toEqual(['timeout', 504]);
  });

  it('refuses a payload above the server max payload before sending', async () => {
    const max = client.nc.info?.max_payload ?? 1024 * 1024;
    const err = await caught(client.request('calc.sum', { pad: 'x'.repeat(max) }, SumReply));
    expect([err.code, err.status]).toEqual(['payload_too_large', 413]);
  });

  it('answers validation_failed for a request nested deeper than MAX_JSON_DEPTH, before its schema walks it', async () => {
    let deep: unknown = {};
    for (let i = 0; i < 300; i++) deep = { a: deep };
    const err = await caught(client.request('calc.sum', { a: 1, b: 2, deep }, SumReply));
    expect([err.code, err.status, err.message]).toEqual([
      'validation_failed',
      400,
      'request to `calc.sum` is nested deeper than 256 levels',
    ]);
  });

  it('answers validation_failed, not a crash, for a value too deep to encode', async () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const err = await caught(client.request('calc.sum', { deep }, SumReply));
    expect([err.code, err.status]).toEqual(['validation_failed', 400]);
  });

  it('answers result_too_large (422), naming the limit, when the reply is above the server max payload', async () => {
    const max = server.nc.info?.max_payload ?? 1024 * 1024;
    const err = await caught(client.request('calc.big', {}, SumReply));
    expect([err.code, err.status]).toEqual(['result_too_large', 422]);
    expect(err.message).toContain(`the bus limit is ${max} bytes`);
  });
});

describe('Bus metrics', () => {
  it('counts served requests per subject and outcome, and times them', async () => {
    const count = async (subject: string, outcome: string) =>
      ((await serverMetrics.getSingleMetric('arbiter_bus_requests_total')?.get())?.values ?? []).find(
        (v) => v.labels.subject === subject && v.labels.outcome === outcome,
      )?.value ?? 0;
    const [okBefore, conflictBefore] = [await count('calc.sum', 'ok'), await count('calc.conflict', 'conflict')];
    await client.request('calc.sum', { a: 1, b: 1 }, SumReply);
    await client.request('calc.sum', { a: 2, b: 2 }, SumReply);
    await caught(client.request('calc.conflict', {}, SumReply));
    expect(await count('calc.sum', 'ok')).toBe(okBefore + 2);
    expect(await count('calc.conflict', 'conflict')).toBe(conflictBefore + 1);
    const text = await serverMetrics.metrics();
    expect(text).toMatch(/arbiter_bus_request_duration_seconds_count\{subject="calc.sum"\} \d+/);
  });
});

describe('Bus.serve queue group', () => {
  it('shares requests between replicas, each request handled once', async () => {
    const replicaPrefix = randomPrefix();
    const handled: string[][] = [[], []];
    const replicas = await Promise.all(
      [0, 1].map((i) => connectBus({ url: NATS_URL, prefix: replicaPrefix, name: `replica-${i}`, logger })),
    );
    const caller = await connectBus({ url: NATS_URL, prefix: replicaPrefix, name: 'caller', logger });
    try {
      for (const [i, bus] of replicas.entries()) {
        await bus.serve({
          name: 'echo',
          version: '1.0.0',
          endpoints: {
            echo: {
              subject: 'echo.say',
              request: z.object({ n: z.number() }),
              handler: async (req: { n: number }) => {
                handled[i]?.push(String(req.n));
                return { n: req.n, replica: i };
              },
            },
          },
        });
      }
      const count = 60;
      const replies = await Promise.all(
        Array.from({ length: count }, (_, n) => caller.request('echo.say', { n }, z.object({ n: z.number(), replica: z.number() }))),
      );
      expect(replies.map((r) => r.n)).toEqual(Array.from({ length: count }, (_, n) => n));
      const all = [...(handled[0] ?? []), ...(handled[1] ?? [])];
      expect(all).toHaveLength(count);
      expect(new Set(all).size).toBe(count);
      expect(handled[0]?.length).toBeGreaterThan(0);
      expect(handled[1]?.length).toBeGreaterThan(0);
    } finally {
      await caller.close();
      await Promise.all(replicas.map((b) => b.close()));
    }
  });
});

describe('Bus.close', () => {
  it('stops taking requests but finishes the ones in flight before draining', async () => {
    const closePrefix = randomPrefix();
    let enter: () => void = () => {};
    const entered = new Promise<void>((r) => (enter = r));
    let finish: () => void = () => {};
    const finished = new Promise<void>((r) => (finish = r));
    const service = await connectBus({ url: NATS_URL, prefix: closePrefix, name: 'closing', logger });
    const caller = await connectBus({ url: NATS_URL, prefix: closePrefix, name: 'closing-caller', logger });
    try {
      await service.serve({
        name: 'work',
        version: '1.0.0',
        endpoints: {
          work: {
            subject: 'work.do',
            request: z.object({}),
            handler: async () => {
              enter();
              await finished;
              return { done: true };
            },
          },
        },
      });
      const inflight = caller.request('work.do', {}, z.object({ done: z.boolean() }), { timeoutMs: 10_000 });
      await entered;
      const closing = service.close();
      finish();
      await expect(inflight).resolves.toEqual({ done: true });
      await closing;
      expect(service.nc.isClosed()).toBe(true);
      expect(service.connected()).toBe(false);
      const err = await caught(caller.request('work.do', {}, z.object({ done: z.boolean() })));
      expect(err.code).toBe('dependency_unavailable');
    } finally {
      finish();
      await caller.close();
      await service.close();
    }
  });
});

describe('Bus.request over its inbox', () => {
  it('answers many concurrent requests, each with its own reply', async () => {
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => client.request('calc.sum', { a: i, b: 1 }, SumReply)));
    expect(replies.map((r) => r.sum)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });

  it('ignores a reply that comes after its time-out, and later requests still get theirs', async () => {
    const lateGate = gate;
    const err = await caught(client.request('calc.slow', {}, SumReply, { timeoutMs: 30 }));
    expect(err.code).toBe('timeout');
    release();
    await lateGate;
    gate = new Promise<void>((r) => (release = r));
    expect(await client.request('calc.sum', { a: 2, b: 3 }, SumReply)).toEqual({ sum: 5 });
  });

  it('fails requests in flight with dependency_unavailable when its connection closes', async () => {
    const closing = await connectBus({ url: NATS_URL, prefix, name: 'bus-test-closing', logger });
    // the request's own time-out is far beyond the test's (5 s): only the close can end it in time
    const arrived = new Promise<void>((r) => (slowArrived = r));
    const inFlight = caught(closing.request('calc.slow', {}, SumReply, { timeoutMs: 60_000 }));
    await arrived;
    await closing.nc.close();
    const err = await inFlight;
    expect([err.code, err.status]).toEqual(['dependency_unavailable', 503]);
  });

  it('answers dependency_unavailable for a request on a closed connection', async () => {
    const closed = await connectBus({ url: NATS_URL, prefix, name: 'bus-test-closed', logger });
    await closed.nc.close();
    const err = await caught(closed.request('calc.sum', { a: 1, b: 1 }, SumReply));
    expect([err.code, err.status]).toEqual(['dependency_unavailable', 503]);
  });
});
