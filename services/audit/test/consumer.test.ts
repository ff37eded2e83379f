/**
 * The consumer's pipeline on a real JetStream stream, with a store the test holds and releases:
 * two batches are stored at once (the next ones fetched meanwhile), a batch's messages are acked
 * only once its own store has resolved, whatever the order the stores end in, and a failed store
 * hands its batch, and every batch fetched and not yet stored, back for redelivery, so each event
 * ends in exactly one successful store. The last batch of a backlog is asked for at its size, so
 * its fetch does not wait for more events until it expires.
 */
import { createLogger, createRegistry } from '@arbiter/service-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditConsumer, type EventBatch, type Turn } from '../src/consumer.js';
import { event, startTestEnv, type TestEnv } from './support.js';

const BATCH = 10;
const DURABLE = 'pipeline';

let t: TestEnv | undefined;
let consumer: AuditConsumer | undefined;
afterEach(async () => {
  // Stopping waits for the fetch under way; closing the environment (the stream deleted) ends it.
  const stopped = consumer?.stop();
  await t?.close();
  await stopped;
});

/** A store call the test ends: `ids` the batch's event ids. */
interface HeldStore {
  ids: string[];
  turn: Turn;
  resolve(): void;
  reject(err: Error): void;
}

/** Whether a promise has settled, once the promise callbacks already due have run. */
const settled = (p: Promise<unknown>): Promise<boolean> =>
  Promise.race([p.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);

describe('the audit consumer', () => {
  it('stores two batches at once, acks each only after its own store, and hands back every unstored batch when one fails', async () => {
    t = await startTestEnv();
    const env = t;
    const events = Array.from({ length: 6 * BATCH }, () => event('edited', { orgId: 'pipeline' }));
    await env.publish(events);
    const calls: HeldStore[] = [];
    /** Ids of the batches whose store resolved. */
    const stored: string[][] = [];
    let holding = true;
    const store = (batch: EventBatch, turn: Turn): Promise<void> => {
      const ids = batch.trail.map((e) => e.eventId);
      if (!holding) {
        stored.push(ids);
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) =>
        calls.push({
          ids,
          turn,
          resolve: () => {
            stored.push(ids);
            resolve();
          },
          reject,
        }),
      );
    };
    const metrics = createRegistry('audit');
    consumer = new AuditConsumer(
      env.client.nc,
      { prefix: env.prefix, durable: DURABLE, batchSize: BATCH, expiresMs: 1000, ackWaitMs: 30_000, timeoutMs: 5000 },
      store,
      createLogger({ service: 'audit-test', level: 'silent' }),
      metrics,
    );
    const info = () => env.jsm.consumers.info(env.streamName, DURABLE);
    consumer.start();

    // Two stores under way, and the next two batches delivered (one waiting for a store, one fetched ahead).
    await expect.poll(async () => (await info()).num_ack_pending, { timeout: 10_000 }).toBe(4 * BATCH);
    expect(calls.length).toBe(2);
    expect((await info()).ack_floor.stream_seq).toBe(0);
    // The second store is in line behind the first: it may write once the first has, commit once it has.
    expect(await settled(calls[1]!.turn.previousWritten)).toBe(false);
    expect(await settled(calls[1]!.turn.previousSettled)).toBe(false);
    calls[0]!.turn.written();
    expect(await settled(calls[1]!.turn.previousWritten)).toBe(true);
    expect(await settled(calls[1]!.turn.previousSettled)).toBe(false);

    // The second store ends first: its batch alone is acked, and the waiting batch takes its place.
    calls[1]!.resolve();
    await expect.poll(() => calls.length, { timeout: 10_000 }).toBe(3);
    await expect.poll(async () => (await info()).num_ack_pending, { timeout: 10_000 }).toBe(4 * BATCH);
    expect((await info()).ack_floor.stream_seq).toBe(0);

    // The first store fails: once the third has ended, the batches not stored are delivered again.
    calls[0]!.reject(new Error('PostgreSQL went away'));
    // A failed store does not hold up the commit of the one behind it.
    await calls[1]!.turn.previousSettled;
    calls[2]!.resolve();
    holding = false;
    await expect.poll(() => stored.flat().length, { timeout: 20_000 }).toBe(events.length);
    await expect.poll(async () => (await info()).num_ack_pending, { timeout: 10_000 }).toBe(0);
    const ids = stored.flat();
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(events.map((e) => e.eventId)));
    expect((await info()).num_pending).toBe(0);
    expect(await metrics.metrics()).toMatch(/^arbiter_audit_consumer_failures_total\{service="audit"\} 1$/m);
    expect(await metrics.metrics()).toMatch(new RegExp(`^arbiter_audit_events_ingested_total\\{service="audit"\\} ${events.length}$`, 'm'));
  });

  it('stores the last, partial batch of a backlog without waiting for its fetch to expire', async () => {
    t = await startTestEnv();
    const env = t;
    const events = Array.from({ length: 2 * BATCH + 5 }, () => event('edited', { orgId: 'backlog' }));
    await env.publish(events);
    const stored: string[] = [];
    consumer = new AuditConsumer(
      env.client.nc,
      // A fetch of a full batch would wait a minute for the 5 events missing from the last one.
      { prefix: env.prefix, durable: DURABLE, batchSize: BATCH, expiresMs: 60_000, ackWaitMs: 30_000, timeoutMs: 5000 },
      (batch) => {
        stored.push(...batch.trail.map((e) => e.eventId));
        return Promise.resolve();
      },
      createLogger({ service: 'audit-test', level: 'silent' }),
      createRegistry('audit'),
    );
    consumer.start();
    await expect.poll(() => stored.length, { timeout: 10_000 }).toBe(events.length);
    expect(new Set(stored)).toEqual(new Set(events.map((e) => e.eventId)));
  });
});
