import { connect, type NatsConnection } from '@nats-io/transport-node';
import { testServers } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestMiss, RequestMux } from '../src/request-mux.js';
import { randomPrefix } from './helpers.js';

const NATS_URL = testServers().nats;
const subject = `${randomPrefix()}.mux`;
const encoder = new TextEncoder();

let nc: NatsConnection;
let mux: RequestMux;
beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
  mux = new RequestMux(nc);
  // Answers every request whose body is not "silent", after `wait` ms when the body says so.
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      const body = msg.string();
      if (body === 'silent') return;
      const wait = Number(/^wait:(\d+)$/.exec(body)?.[1] ?? 0);
      setTimeout(() => msg.respond(`echo ${body}`), wait);
    },
  });
  await nc.flush();
});
afterAll(async () => {
  await nc?.close();
});

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('RequestMux', () => {
  it('keeps one deadline timer for all requests in flight, not one per request', async () => {
    const before = timers();
    const pending = Array.from({ length: 200 }, () =>
      mux.request(subject, encoder.encode('silent'), { timeoutMs: 300 }).catch((e: unknown) => e),
    );
    expect(mux.inFlight).toBe(200);
    expect(timers() - before).toBeLessThanOrEqual(1);
    const outcomes = await Promise.all(pending);
    expect(outcomes.every((e) => e instanceof RequestMiss && e.reason === 'timeout')).toBe(true);
    expect(mux.inFlight).toBe(0);
  });

  it('times out only the requests left unanswered, each at its own time-out', async () => {
    let longSettled = false;
    let leftWhenShortTimedOut: { longSettled: boolean; inFlight: number } | undefined;
    const longRequest = mux.request(subject, encoder.encode('silent'), { timeoutMs: 400 });
    void longRequest.finally(() => (longSettled = true)).catch(() => undefined);
    const shortRequest = mux.request(subject, encoder.encode('silent'), { timeoutMs: 100 });
    void shortRequest.catch(() => (leftWhenShortTimedOut = { longSettled, inFlight: mux.inFlight }));
    const [answered, short, long] = await Promise.allSettled([
      mux.request(subject, encoder.encode('wait:50'), { timeoutMs: 2000 }),
      shortRequest,
      longRequest,
    ]);
    expect(answered.status === 'fulfilled' && answered.value.string()).toBe('echo wait:50');
    expect(short).toMatchObject({ status: 'rejected', reason: { reason: 'timeout' } });
    expect(long).toMatchObject({ status: 'rejected', reason: { reason: 'timeout' } });
    // The 400 ms one was not cut short by the 100 ms one's sweep: still in flight when that one timed out.
    expect(leftWhenShortTimedOut).toEqual({ longSettled: false, inFlight: 1 });
  });

  it('answers no_responders at once when nobody listens', async () => {
    await expect(mux.request(`${subject}.nobody`, encoder.encode('x'), { timeoutMs: 5000 })).rejects.toMatchObject({
      reason: 'no_responders',
    });
  });
});
