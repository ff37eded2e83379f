import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, DeliverPolicy, jetstream, JetStreamApiError, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { v7 as uuidv7 } from 'uuid';
import { ArbiterEvent, eventStreamName, eventSubjectFilter } from '@arbiter/contracts';
import { connectBus, createLogger, type Bus } from '@arbiter/service-kit';
import { JetStreamEventPublisher } from '../src/events/jetstream-publisher.js';
import type { EventSink } from '../src/events/event-sink.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { LogCapture, newOrg, startGateway, withKey } from './support/gateway.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

let bus: Bus;
let nc: Bus['nc'];
let jsm: JetStreamManager;
const prefixes: string[] = [];

beforeAll(async () => {
  bus = await connectBus({ url: NATS_URL, prefix: 'gw-events', name: 'gateway-events-test', logger: createLogger({ service: 'gateway-test', level: 'silent' }) });
  nc = bus.nc;
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  for (const p of prefixes) await jsm.streams.delete(eventStreamName(p)).catch(() => undefined);
  await bus?.close();
});

/** A fresh subject prefix whose stream is deleted after the file. */
function newPrefix(): string {
  const p = `gw-events-${randomBytes(4).toString('hex')}`;
  prefixes.push(p);
  return p;
}

async function createStream(prefix: string): Promise<void> {
  await jsm.streams.add({ name: eventStreamName(prefix), subjects: [eventSubjectFilter(prefix)], duplicate_window: 120 * 1_000_000_000 });
}

/** Every event stored in the prefix's stream, in order. */
async function storedEvents(prefix: string): Promise<Array<{ subject: string; msgId: string | undefined; event: ArbiterEvent }>> {
  const info = await jsm.streams.info(eventStreamName(prefix));
  const count = info.state.messages;
  if (count === 0) return [];
  const name = `t${randomBytes(4).toString('hex')}`;
  await jsm.consumers.add(eventStreamName(prefix), { name, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
  const consumer = await jetstream(nc).consumers.get(eventStreamName(prefix), name);
  const out: Array<{ subject: string; msgId: string | undefined; event: ArbiterEvent }> = [];
  const batch = await consumer.fetch({ max_messages: count, expires: 2000 });
  for await (const m of batch) {
    out.push({ subject: m.subject, msgId: m.headers?.get('Nats-Msg-Id'), event: ArbiterEvent.parse(m.json()) });
    if (out.length === count) break;
  }
  return out;
}

/** Polls until `check` holds (no timed assertion: the loop only bounds a hang). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never happened: ${what}`);
}

function event(orgId = 'acme', kind: ArbiterEvent['kind'] = 'assigned'): ArbiterEvent {
  return { eventId: uuidv7(), orgId, kind, at: new Date().toISOString(), actor: { userId: 'admin' }, resource: { type: 'user', id: 'ann' }, details: { role: 'editor' } };
}

const publishers: JetStreamEventPublisher[] = [];
afterEach(async () => {
  for (const p of publishers.splice(0)) await p.close(0);
});

function publisher(prefix: string, logs: LogCapture, opts: ConstructorParameters<typeof JetStreamEventPublisher>[3] = {}) {
  const logger = createLogger({ service: 'gateway-test', level: 'info', destination: logs });
  const p = new JetStreamEventPublisher(nc, prefix, logger, { retryMs: 20, maxRetryMs: 100, ...opts });
  publishers.push(p);
  return p;
}

describe('JetStreamEventPublisher', () => {
  it('publishes each event under its subject with the eventId as message id; a re-send is deduplicated', async () => {
    const prefix = newPrefix();
    await createStream(prefix);
    const pub = publisher(prefix, new LogCapture());
    const first = event('acme', 'approval requested');
    pub.emit(first);
    pub.emit(first);
    const second = event('globex');
    pub.emit(second);
    await until(() => pub.pending() === 0, 'queue drained');
    const stored = await storedEvents(prefix);
    expect(stored.map((s) => s.subject)).toEqual([`${prefix}.events.acme.approval_requested`, `${prefix}.events.globex.assigned`]);
    expect(stored.map((s) => s.msgId)).toEqual([first.eventId, second.eventId]);
    expect(stored.map((s) => s.event)).toEqual([first, second]);
  });

  it('keeps events while the stream is missing, logs the failure, and delivers them in order once it exists', async () => {
    const prefix = newPrefix();
    const logs = new LogCapture();
    const pub = publisher(prefix, logs);
    const events = [event(), event(), event()];
    for (const e of events) expect(() => pub.emit(e)).not.toThrow();
    await until(() => logs.text().includes('event publish failed: will retry'), 'failure logged');
    expect(pub.pending()).toBe(3);
    await createStream(prefix);
    await until(() => pub.pending() === 0, 'retried after the stream appeared');
    expect((await storedEvents(prefix)).map((s) => s.event.eventId)).toEqual(events.map((e) => e.eventId));
  });

  it('bounds the queue: the oldest events are dropped and logged when it is full', async () => {
    const prefix = newPrefix();
    const logs = new LogCapture();
    const pub = publisher(prefix, logs, { maxQueue: 2, retryMs: 60_000, maxRetryMs: 60_000 });
    const events = [event(), event(), event()];
    for (const e of events) pub.emit(e);
    await pub.settled();
    expect(pub.pending()).toBe(2);
    expect(pub.droppedCount()).toBe(1);
    expect(logs.text()).toContain('event queue full: oldest event dropped');
    expect(logs.text()).toContain(events[0]!.eventId);
    await createStream(prefix);
    await pub.close(5000);
    expect((await storedEvents(prefix)).map((s) => s.event.eventId)).toEqual([events[1]!.eventId, events[2]!.eventId]);
  });

  it('logs the events it could not send when closed', async () => {
    const prefix = newPrefix();
    const logs = new LogCapture();
    const pub = publisher(prefix, logs, { retryMs: 60_000, maxRetryMs: 60_000 });
    const e = event();
    pub.emit(e);
    await pub.settled();
    await pub.close(0);
    expect(logs.text()).toContain('publisher closed with unsent events: they are lost');
    expect(logs.text()).toContain(e.eventId);
    await expect(jsm.streams.info(eventStreamName(prefix))).rejects.toBeInstanceOf(JetStreamApiError);
  });
});

describe('PUT /users/{userId} emits `assigned`', () => {
  let db: TestDatabase;
  let redis: TestRedis;

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = await createTestRedis();
  });
  afterAll(async () => {
    await redis?.cleanup();
    await db?.drop();
  });

  it('sends one event per committed assignment, none for a refused one', async () => {
    const seen: ArbiterEvent[] = [];
    const sink: EventSink = { emit: (e) => void seen.push(e) };
    const app = await startGateway(db, redis, { events: sink });
    try {
      const key = await newOrg(db, 'acme');
      const added = await app.inject({ method: 'PUT', url: '/users/ann', headers: withKey(key), payload: { role: 'editor' } });
      expect(added.statusCode).toBe(201);
      const changed = await app.inject({ method: 'PUT', url: '/users/ann', headers: withKey(key), payload: { role: 'publisher' } });
      expect(changed.statusCode).toBe(200);
      const refused = await app.inject({ method: 'PUT', url: '/users/admin', headers: withKey(key), payload: { role: 'viewer' } });
      expect(refused.statusCode).toBe(409);
      expect(seen).toHaveLength(2);
      for (const e of seen) expect(ArbiterEvent.parse(e)).toEqual(e);
      expect(seen[0]).toMatchObject({ orgId: 'acme', kind: 'assigned', actor: { userId: 'admin' }, resource: { type: 'user', id: 'ann' }, details: { role: 'editor', added: true } });
      expect(seen[0]!.actor.apiKeyId).toEqual(expect.any(String));
      expect(seen[1]).toMatchObject({ details: { role: 'publisher', added: false } });
      expect(seen[0]!.eventId).not.toBe(seen[1]!.eventId);
    } finally {
      await app.close();
    }
  });
});
