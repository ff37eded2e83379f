import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventStreamName, type ArbiterEvent } from '@arbiter/contracts';
import {
  CLEANUP_TIMEOUT_MS,
  dropDatabases,
  eventually,
  startNatsServer,
  streamMessages,
  testServers,
  withDatabase,
  type OwnServer,
} from '@arbiter/test-kit';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { Registry } from 'prom-client';
import { v7 } from 'uuid';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureDatabase, openDatabase } from '../src/database.js';
import { EventRelay } from '../src/events/event-relay.js';
import { outboxTableSql, PgOutbox } from '../src/events/pg-outbox.js';
import { RedisOutbox } from '../src/events/redis-outbox.js';
import { ensureEventStream } from '../src/events/stream.js';
import { memoryLogger, randomPrefix } from './helpers.js';

const { nats: NATS_URL, redis: REDIS_URL, postgres: PG_URL } = testServers();

const database = `arbiter_test_outbox_${randomBytes(4).toString('hex')}`;
let db: Knex;
let nc: NatsConnection;
let jsm: JetStreamManager;
let redis: Redis;
const relays: EventRelay[] = [];
const streams: string[] = [];

function event(orgId = 'acme'): ArbiterEvent {
  return {
    eventId: v7(),
    orgId,
    kind: 'created',
    at: new Date().toISOString(),
    actor: { userId: 'u1' },
    resource: { type: 'policy', id: v7() },
    details: {},
  };
}

async function streamEvents(prefix: string): Promise<ArbiterEvent[]> {
  const messages = await streamMessages(jsm, eventStreamName(prefix)).catch(() => []);
  return messages.map((m) => m.json<ArbiterEvent>());
}

function relay(store: PgOutbox | RedisOutbox, prefix: string, metrics = new Registry()): EventRelay {
  const r = new EventRelay(nc, store, prefix, memoryLogger().logger, { intervalMs: 100, publishTimeoutMs: 1000, metrics });
  relays.push(r);
  return r;
}

async function newTable(): Promise<string> {
  const table = `outbox_${randomBytes(4).toString('hex')}`;
  await db.raw(outboxTableSql(table));
  return table;
}

async function newStream(): Promise<string> {
  const prefix = randomPrefix();
  await ensureEventStream(nc, prefix);
  streams.push(eventStreamName(prefix));
  return prefix;
}

beforeAll(async () => {
  await ensureDatabase(withDatabase(PG_URL, database));
  db = openDatabase(withDatabase(PG_URL, database), { poolMax: 5 });
  nc = await connect({ servers: NATS_URL });
  jsm = await jetstreamManager(nc);
  redis = new Redis(REDIS_URL);
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  for (const s of streams) await jsm.streams.delete(s).catch(() => undefined);
  await nc?.close();
  redis?.disconnect();
  await db?.destroy();
  await dropDatabases(PG_URL, [database]);
}, CLEANUP_TIMEOUT_MS);

describe('PgOutbox with the relay', () => {
  it('publishes committed events in order, each under its subject with its id as message id, and marks them sent', async () => {
    const [table, prefix] = [await newTable(), await newStream()];
    const outbox = new PgOutbox(db, table);
    const events = [event(), event(), event('beta')];
    await db.transaction((trx) => outbox.enqueue(trx, events));
    relay(outbox, prefix).kick();
    const published = await eventually(async () => {
      const got = await streamEvents(prefix);
      expect(got).toHaveLength(3);
      return got;
    });
    expect(published.map((e) => e.eventId)).toEqual(events.map((e) => e.eventId));
    const msg = await jsm.streams.getMessage(eventStreamName(prefix), { last_by_subj: `${prefix}.events.beta.created` });
    expect(msg?.header.get('Nats-Msg-Id')).toBe(events[2]!.eventId);
    await eventually(async () => expect((await db(table).whereNull('sent_at').count({ n: '*' }).first())?.n).toBe('0'));
  });

  it('writes nothing when the change rolls back', async () => {
    const table = await newTable();
    const outbox = new PgOutbox(db, table);
    await expect(
      db.transaction(async (trx) => {
        await outbox.enqueue(trx, [event()]);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await db(table).count({ n: '*' }).first()).toEqual({ n: '0' });
  });

  it('keeps events while the stream is missing and publishes them once it exists, with the failure recorded', async () => {
    const table = await newTable();
    const prefix = randomPrefix(); // no stream yet
    const outbox = new PgOutbox(db, table);
    const e = event();
    await db.transaction((trx) => outbox.enqueue(trx, [e]));
    relay(outbox, prefix).kick();
    const row = await eventually(async () => {
      const r = (await db(table).first()) as { attempts: number; last_error: string | null; sent_at: Date | null };
      expect(r.attempts).toBeGreaterThanOrEqual(1);
      return r;
    });
    expect(row.sent_at).toBeNull();
    expect(row.last_error).toBeTruthy();
    await ensureEventStream(nc, prefix);
    streams.push(eventStreamName(prefix));
    await eventually(async () => expect((await streamEvents(prefix)).map((x) => x.eventId)).toEqual([e.eventId]), 20_000);
  });

  it('shares the work between relays without publishing an event twice', async () => {
    const [table, prefix] = [await newTable(), await newStream()];
    const outbox = new PgOutbox(db, table);
    const events = Array.from({ length: 600 }, () => event());
    await db.transaction((trx) => outbox.enqueue(trx, events));
    const [m1, m2] = [new Registry(), new Registry()];
    relay(outbox, prefix, m1).kick();
    relay(new PgOutbox(db, table), prefix, m2).kick();
    await eventually(async () => expect(await db(table).whereNull('sent_at').count({ n: '*' }).first()).toEqual({ n: '0' }));
    const sent = async (m: Registry) =>
      (await m.getSingleMetric('arbiter_outbox_published_total')!.get()).values.reduce((n, v) => n + v.value, 0);
    expect((await sent(m1)) + (await sent(m2))).toBe(600);
    expect(new Set((await streamEvents(prefix)).map((e) => e.eventId)).size).toBe(600);
  });

  it('reports the outbox lag on /metrics', async () => {
    const table = await newTable();
    const outbox = new PgOutbox(db, table);
    const metrics = new Registry();
    const r = relay(outbox, randomPrefix(), metrics); // no stream: events stay
    await db.transaction((trx) => outbox.enqueue(trx, [event(), event()]));
    const text = await metrics.metrics();
    expect(text).toContain(`arbiter_outbox_pending{outbox="postgres:${table}"} 2`);
    expect(text).toMatch(new RegExp(`arbiter_outbox_oldest_seconds\\{outbox="postgres:${table}"\\} \\d`));
    await r.stop();
  });
});

describe('RedisOutbox with the relay', () => {
  it('publishes appended events and deletes them from the stream', async () => {
    const prefix = await newStream();
    const key = `${prefix}:outbox:test`;
    const outbox = new RedisOutbox(redis, key);
    const events = [event(), event()];
    await outbox.enqueue(events);
    relay(outbox, prefix).kick();
    await eventually(async () => expect((await streamEvents(prefix)).map((e) => e.eventId)).toEqual(events.map((e) => e.eventId)));
    await eventually(async () => expect(await redis.xlen(key)).toBe(0));
    await redis.del(key);
  });

  it('gives an event another relay claimed but never acknowledged to the next relay once the lease lapses', async () => {
    const prefix = await newStream();
    const key = `${prefix}:outbox:test`;
    const dying = new RedisOutbox(redis, key, { leaseMs: 200 });
    const e = event();
    await dying.enqueue([e]);
    expect((await dying.claim(10)).map((c) => c.event.eventId)).toEqual([e.eventId]); // then it "dies"
    const survivor = new RedisOutbox(redis, key, { leaseMs: 200 });
    relay(survivor, prefix).kick();
    await eventually(async () => expect((await streamEvents(prefix)).map((x) => x.eventId)).toEqual([e.eventId]));
    await redis.del(key);
  });

  it('keeps events while JetStream refuses them and publishes them after the lease', async () => {
    const prefix = randomPrefix(); // no stream yet
    const key = `${prefix}:outbox:test`;
    const outbox = new RedisOutbox(redis, key, { leaseMs: 200 });
    const e = event();
    await outbox.enqueue([e]);
    const r = relay(outbox, prefix);
    r.kick();
    await r.settled();
    expect(await redis.xlen(key)).toBe(1);
    await ensureEventStream(nc, prefix);
    streams.push(eventStreamName(prefix));
    await eventually(async () => expect((await streamEvents(prefix)).map((x) => x.eventId)).toEqual([e.eventId]));
    await eventually(async () => expect(await redis.xlen(key)).toBe(0));
    await redis.del(key);
  });
});

describe('an event larger than the server takes (max_payload)', () => {
  /** The throwaway server's limit: small, so the test needs no megabytes. */
  const MAX_PAYLOAD = 4096;
  let server: OwnServer;
  let small: NatsConnection;
  let confDir: string;

  beforeAll(async () => {
    confDir = mkdtempSync(path.join(tmpdir(), 'relay-max-payload-'));
    const conf = path.join(confDir, 'nats.conf');
    writeFileSync(conf, `max_payload: ${MAX_PAYLOAD}\n`);
    server = await startNatsServer(['-c', conf]);
    small = await connect({ servers: server.url });
  }, 30_000);

  afterAll(async () => {
    await small?.close();
    await server?.stop();
    rmSync(confDir, { recursive: true, force: true });
  });

  function bigEvent(): ArbiterEvent {
    return { ...event(), details: { pad: 'x'.repeat(MAX_PAYLOAD) } };
  }

  function smallRelay(store: PgOutbox | RedisOutbox, prefix: string, metrics: Registry, dropped: ArbiterEvent[]): EventRelay {
    const r = new EventRelay(small, store, prefix, memoryLogger().logger, {
      intervalMs: 100,
      retryMs: 100,
      publishTimeoutMs: 1000,
      metrics,
      onDropped: (events, reason) => {
        expect(reason).toBe('too_large');
        dropped.push(...events);
      },
    });
    relays.push(r);
    return r;
  }

  async function droppedCount(metrics: Registry): Promise<number> {
    const m = metrics.getSingleMetric('arbiter_outbox_dropped_total');
    if (!m) return 0;
    return (await m.get()).values.filter((v) => v.labels.reason === 'too_large').reduce((n, v) => n + v.value, 0);
  }

  it('RedisOutbox: the entry is removed and counted at its first refusal, never claimed again; the others are published', async () => {
    const prefix = randomPrefix();
    await ensureEventStream(small, prefix);
    const key = `${prefix}:outbox:test`;
    // A lease of 100 ms: a refused entry left pending would be claimed again within the test.
    const outbox = new RedisOutbox(redis, key, { leaseMs: 100 });
    const before = event();
    const big = bigEvent();
    const after = event();
    await outbox.enqueue([before, big, after]);
    const metrics = new Registry();
    const dropped: ArbiterEvent[] = [];
    const r = smallRelay(outbox, prefix, metrics, dropped);
    r.kick();
    const jsmSmall = await jetstreamManager(small);
    await eventually(async () => {
      const published = (await streamMessages(jsmSmall, eventStreamName(prefix))).map((m) => m.json<ArbiterEvent>().eventId);
      expect(published).toEqual([before.eventId, after.eventId]);
    });
    await eventually(async () => expect(await redis.xlen(key)).toBe(0));
    expect(await droppedCount(metrics)).toBe(1);
    expect(dropped.map((e) => e.eventId)).toEqual([big.eventId]);
    // Passes well past the lease: nothing is left to claim, so nothing more is counted or refused.
    const failures = async () =>
      (await metrics.getSingleMetric('arbiter_outbox_publish_failures_total')!.get()).values.reduce((n, v) => n + v.value, 0);
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve) => setTimeout(resolve, 150));
      r.kick();
      await r.settled();
    }
    expect(await outbox.claim(10)).toEqual([]);
    expect(await droppedCount(metrics)).toBe(1);
    expect(await failures()).toBe(0);
    await redis.del(key);
    await jsmSmall.streams.delete(eventStreamName(prefix)).catch(() => undefined);
  }, 30_000);

  it("an event over the stream's own message limit (JetStream refuses it for its size) is removed and counted too", async () => {
    const prefix = await newStream();
    await jsm.streams.update(eventStreamName(prefix), { max_msg_size: 1024 });
    const key = `${prefix}:outbox:test`;
    const outbox = new RedisOutbox(redis, key, { leaseMs: 100 });
    const big = { ...event(), details: { pad: 'x'.repeat(2048) } };
    const other = event();
    await outbox.enqueue([big, other]);
    const metrics = new Registry();
    const dropped: ArbiterEvent[] = [];
    const r = new EventRelay(nc, outbox, prefix, memoryLogger().logger, {
      intervalMs: 100,
      publishTimeoutMs: 1000,
      metrics,
      onDropped: (events) => dropped.push(...events),
    });
    relays.push(r);
    r.kick();
    await eventually(async () => expect((await streamEvents(prefix)).map((x) => x.eventId)).toEqual([other.eventId]));
    await eventually(async () => expect(await redis.xlen(key)).toBe(0));
    expect(await droppedCount(metrics)).toBe(1);
    expect(dropped.map((e) => e.eventId)).toEqual([big.eventId]);
    await redis.del(key);
  }, 30_000);

  it('PgOutbox: the row leaves the backlog marked as dropped, counted once; the others are published', async () => {
    const prefix = randomPrefix();
    await ensureEventStream(small, prefix);
    const table = await newTable();
    const outbox = new PgOutbox(db, table);
    const big = bigEvent();
    const other = event();
    await db.transaction((trx) => outbox.enqueue(trx, [big, other]));
    const metrics = new Registry();
    const dropped: ArbiterEvent[] = [];
    const r = smallRelay(outbox, prefix, metrics, dropped);
    r.kick();
    await eventually(async () => expect(await outbox.backlog()).toMatchObject({ pending: 0 }));
    const jsmSmall = await jetstreamManager(small);
    const published = (await streamMessages(jsmSmall, eventStreamName(prefix))).map((m) => m.json<ArbiterEvent>().eventId);
    expect(published).toEqual([other.eventId]);
    const row = (await db(table).where({ event_id: big.eventId }).first()) as {
      sent_at: Date | null;
      last_error: string | null;
      attempts: number;
    };
    expect(row).toMatchObject({ last_error: 'dropped: too_large', attempts: 0 });
    expect(row.sent_at).not.toBeNull();
    expect(await droppedCount(metrics)).toBe(1);
    expect(dropped.map((e) => e.eventId)).toEqual([big.eventId]);
    await jsmSmall.streams.delete(eventStreamName(prefix)).catch(() => undefined);
  }, 30_000);
});
