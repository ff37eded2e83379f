/**
 * What the console needs of the client, against a small scripted HTTP server:
 * one cursor page at a time, per-call options (`withOptions`: a signal, a deadline), a bearer
 * session, and retries turned off.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Arbiter } from '../src/index.js';
import { ArbiterClient, ArbiterError, type ArbiterOptions } from '../src/client-entry.js';
import { uuidFromBytes } from '../src/http.js';

type Reply = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server;
let baseUrl: string;
let script: Reply[] = [];
let seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
/** Resolved when the server has taken the next request (so an abort comes after its arrival). */
let arrival = Promise.withResolvers<void>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      arrival.resolve();
      const reply = script.shift();
      if (reply) reply(req, res);
      else json(500, { code: 'internal', detail: 'unscripted' })(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  script = [];
  seen = [];
  arrival = Promise.withResolvers<void>();
});

const json =
  (status: number, body: unknown): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' });
    res.end(JSON.stringify(body));
  };
/** Holds the answer until the test lets it go (`release`), so a call stays pending as long as needed. */
function held(): { reply: Reply; release: () => void } {
  const gate = Promise.withResolvers<void>();
  return {
    reply: (req, res) => void gate.promise.then(() => json(200, {})(req, res)),
    release: () => gate.resolve(),
  };
}

const client = (opts: Partial<ArbiterOptions> = {}) =>
  new ArbiterClient({ baseUrl, apiKey: 'arb_test', retries: { max: 0 }, ...opts } as ArbiterOptions);

describe('one page at a time', () => {
  it('page() fetches the first page, page(cursor) the one a nextCursor names, with the filters and page size', async () => {
    script = [json(200, { items: [1, 2], nextCursor: 'c1' }), json(200, { items: [3], nextCursor: null })];
    const list = client().policies.list({ q: 'age', status: 'published', pageSize: 2 });
    const first = await list.page();
    expect(first).toEqual({ items: [1, 2], nextCursor: 'c1' });
    expect(await list.page(first.nextCursor)).toEqual({ items: [3], nextCursor: null });
    expect(seen.map((s) => s.url)).toEqual([
      '/policies?q=age&status=published&limit=2',
      '/policies?q=age&status=published&limit=2&cursor=c1',
    ]);
  });

  it('page(null) and page(undefined) are the first page', async () => {
    script = [json(200, { items: [], nextCursor: null }), json(200, { items: [], nextCursor: null })];
    await client().users.list({ pageSize: 25 }).page(null);
    await client()
      .audit.list({ kind: ['executed'], pageSize: 25 })
      .page(undefined);
    expect(seen.map((s) => s.url)).toEqual(['/users?limit=25', '/audit?kind=executed&limit=25']);
  });
});

describe('withOptions', () => {
  it('a signal aborts the calls made through it, with its reason; the client itself goes on', async () => {
    const slow = held();
    script = [slow.reply, json(200, { userId: 'u' })];
    const base = client();
    const controller = new AbortController();
    const pending = base.withOptions({ signal: controller.signal }).policies.get('p1');
    await arrival.promise;
    controller.abort(new Error('left the page'));
    await expect(pending).rejects.toThrow('left the page');
    slow.release();
    expect(await base.me()).toEqual({ userId: 'u' });
    expect(seen.map((s) => s.url)).toEqual(['/policy/p1', '/me']);
  });

  it('an aborted signal is not a transport error and is not retried', async () => {
    const controller = new AbortController();
    controller.abort(new Error('already gone'));
    const scoped = client({ retries: { max: 3, baseDelayMs: 1 } }).withOptions({ signal: controller.signal });
    await expect(scoped.me()).rejects.toThrow('already gone');
    expect(seen).toEqual([]);
  });

  it('keeps the credential and the class, joins a client-wide signal, and sets a deadline per call', async () => {
    const slow = held();
    script = [json(200, {}), slow.reply];
    const everything = new AbortController();
    const arbiter = new Arbiter({ baseUrl, token: 'session-token', retries: { max: 0 }, signal: everything.signal });
    const scoped = arbiter.withOptions({ signal: new AbortController().signal, timeoutMs: 50 });
    expect(scoped).toBeInstanceOf(Arbiter);
    expect(scoped.baseUrl).toBe(baseUrl);
    await scoped.me();
    expect(seen[0].headers.authorization).toBe('Bearer session-token');
    const err = await scoped.policies.get('p2').catch((e: unknown) => e);
    slow.release();
    expect(err).toBeInstanceOf(ArbiterError);
    expect(err).toMatchObject({ code: 'timeout', status: 504 });

    everything.abort(new Error('signed out'));
    await expect(scoped.me()).rejects.toThrow('signed out');
    await expect(arbiter.me()).rejects.toThrow('signed out');
  });
});

describe('retries off', () => {
  it('`retries: {max: 0}` sends a refused change once, and a failed GET once', async () => {
    script = [json(429, { code: 'rate_limited', detail: 'slow down' }), json(503, { code: 'dependency_unavailable', detail: 'down' })];
    const api = client();
    await expect(api.policies.create({ name: 'n', rule: 'r' })).rejects.toMatchObject({ code: 'rate_limited', detail: 'slow down' });
    await expect(api.policies.get('p')).rejects.toMatchObject({ code: 'dependency_unavailable', status: 503 });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /policy', 'GET /policy/p']);
  });
});

describe('problems', () => {
  it('a 401 is an `unauthenticated` ArbiterError with the detail and the reasons', async () => {
    script = [
      json(401, { code: 'unauthenticated', detail: 'the API key is revoked', errors: [{ code: 'revoked', message: 'revoked at noon' }] }),
    ];
    const err = await client()
      .me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArbiterError);
    expect(err).toMatchObject({ status: 401, code: 'unauthenticated', detail: 'the API key is revoked', errors: [{ code: 'revoked' }] });
  });
});

describe('impact analysis', () => {
  it('posts the options to /policy/{id}/impact and /flow/{id}/impact, and retries a 503 as a run is', async () => {
    const report = { impactId: 'i', replayed: 0 };
    script = [json(200, report), json(503, { code: 'dependency_unavailable', detail: 'down' }), json(200, report)];
    expect(await client().policies.impact('p1')).toEqual(report);
    const retrying = client({ retries: { max: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    expect(await retrying.flows.impact('f/1', { limit: 5, from: '2026-01-01T00:00:00Z' })).toEqual(report);
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', '/policy/p1/impact', '{}'],
      ['POST', '/flow/f%2F1/impact', '{"limit":5,"from":"2026-01-01T00:00:00Z"}'],
      ['POST', '/flow/f%2F1/impact', '{"limit":5,"from":"2026-01-01T00:00:00Z"}'],
    ]);
  });
});

describe('saved-test runs', () => {
  it('posts to /policy/{baseId}/tests/run and /flow/{baseId}/tests/run, with ?version=N when asked, and retries a 503 as a run is', async () => {
    const report = { passed: 1, failed: 0, results: [], coverage: { summary: { percent: 100 }, uncovered: [] } };
    script = [json(200, report), json(503, { code: 'dependency_unavailable', detail: 'down' }), json(200, report)];
    expect(await client().policies.runTests('b1')).toEqual(report);
    const retrying = client({ retries: { max: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    expect(await retrying.flows.runTests('b/2', { version: 3 })).toEqual(report);
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', '/policy/b1/tests/run', ''],
      ['POST', '/flow/b%2F2/tests/run?version=3', ''],
      ['POST', '/flow/b%2F2/tests/run?version=3', ''],
    ]);
  });

  it('rejects with the problem the service answers', async () => {
    script = [json(404, { code: 'not_found', status: 404, detail: 'policy `b1` not found' })];
    await expect(client().policies.runTests('b1')).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('webhooks', () => {
  it('sends each /webhooks call to its path and method (PATCH for a change), a creation never twice', async () => {
    script = [
      json(201, { id: 'w1', secret: 'whsec_x' }),
      json(200, { items: [], nextCursor: null }),
      json(200, { id: 'w1' }),
      json(200, { id: 'w1', enabled: true }),
      json(200, { secret: 'whsec_y' }),
      json(202, { deliveryId: 'd1', eventId: 'e1' }),
      json(200, { items: [], nextCursor: null }),
      json(202, { id: 'd1' }),
      json(200, { id: 'w1', deleted: true }),
      json(503, { code: 'dependency_unavailable', detail: 'down' }),
    ];
    const api = client().webhooks;
    expect(await api.create({ url: 'https://ci.example.com/h', events: ['published'] })).toEqual({ id: 'w1', secret: 'whsec_x' });
    await api.list({ pageSize: 10 }).page();
    await api.get('w1');
    await api.update('w1', { enabled: true });
    await api.rotateSecret('w1');
    expect(await api.test('w1')).toEqual({ deliveryId: 'd1', eventId: 'e1' });
    await api.deliveries('w1', { status: 'failed', pageSize: 5 }).page();
    await api.retry('w1', 'd1');
    await api.remove('w1');
    const retrying = client({ retries: { max: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(retrying.webhooks.create({ url: 'https://ci.example.com/h', events: ['*'] })).rejects.toMatchObject({ status: 503 });
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['POST', '/webhooks'],
      ['GET', '/webhooks?limit=10'],
      ['GET', '/webhooks/w1'],
      ['PATCH', '/webhooks/w1'],
      ['POST', '/webhooks/w1/secret'],
      ['POST', '/webhooks/w1/test'],
      ['GET', '/webhooks/w1/deliveries?status=failed&limit=5'],
      ['POST', '/webhooks/w1/deliveries/d1/retry'],
      ['DELETE', '/webhooks/w1'],
      ['POST', '/webhooks'],
    ]);
    expect(seen[3]!.body).toBe('{"enabled":true}');
  });
});

describe('request ids', () => {
  it('are version 4 UUIDs made from random bytes where crypto.randomUUID is missing (a page on plain HTTP)', async () => {
    expect(uuidFromBytes(new Uint8Array(16))).toBe('00000000-0000-4000-8000-000000000000');
    expect(uuidFromBytes(new Uint8Array(16).fill(0xff))).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    script = [json(200, {})];
    Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      await client().me();
    } finally {
      delete (globalThis.crypto as { randomUUID?: unknown }).randomUUID;
    }
    expect(typeof globalThis.crypto.randomUUID).toBe('function');
    expect(seen[0].headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
