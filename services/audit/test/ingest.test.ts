import { randomUUID } from 'node:crypto';
import { deadEventStreamName, EventKind, eventSubject } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents } from '../src/repositories/events.js';
import type { Audit } from '../src/service.js';
import { event, startTestEnv, type TestEnv } from './support.js';

let t: TestEnv;
let audit: Audit;

beforeAll(async () => {
  t = await startTestEnv();
  audit = await t.startAudit({ AUDIT_MAX_DELIVERIES: '3' });
});
afterAll(async () => t?.close());

describe('ingest', () => {
  it('stores every kind once with its actor, resource and details', async () => {
    // `decided` events carry decision records, stored apart (test/decisions.test.ts).
    const trailKinds = EventKind.options.filter((kind) => kind !== 'decided');
    const events = trailKinds.map((kind) => event(kind, { orgId: 'ingest-kinds', details: { kind } }));
    await t.publish(events);
    await t.waitStored(events.length);
    const rows = (await t.sql('audit_events').where('org_id', 'ingest-kinds')) as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(events.length);
    for (const e of events) {
      const row = rows.find((r) => r.event_id === e.eventId);
      expect(row).toMatchObject({
        kind: e.kind,
        actor_user_id: e.actor.userId,
        actor_api_key_id: e.actor.apiKeyId,
        resource_type: e.resource.type,
        resource_id: e.resource.id,
        base_id: e.resource.baseId,
        details: { kind: e.kind },
      });
      expect((row?.at as Date).toISOString()).toBe(e.at);
    }
  });

  it('stores a redelivered event once (same event id, a new message)', async () => {
    const before = await t.stored();
    const e = event('edited', { orgId: 'ingest-dup' });
    // Published twice with different message ids, so JetStream's own dedupe does not catch it.
    await t.js.publish(eventSubject(t.prefix, e.orgId, e.kind), JSON.stringify(e), { msgID: randomUUID() });
    await t.js.publish(eventSubject(t.prefix, e.orgId, e.kind), JSON.stringify(e), { msgID: randomUUID() });
    const marker = event('edited', { orgId: 'ingest-dup' });
    await t.publish([marker]);
    await t.waitStored(before + 2);
    expect(await t.stored('ingest-dup')).toBe(2);
    expect(await insertEvents(audit.db, [e, e, marker])).toBe(0);
  });

  it('acks and skips a message that is not an event, and goes on', async () => {
    const before = await t.stored();
    await t.js.publish(`${t.prefix}.events.acme.edited`, 'not json');
    await t.js.publish(`${t.prefix}.events.acme.edited`, JSON.stringify({ eventId: 'x' }));
    await t.publish([event('created', { orgId: 'ingest-bad' })]);
    await t.waitStored(before + 1);
    expect(await t.stored('ingest-bad')).toBe(1);
    await expect.poll(() => audit.consumer.lag(), { timeout: 5000 }).toBe(0);
  });

  it('reports its lag and what it stored on /metrics', async () => {
    const recent = event('deleted', { orgId: 'ingest-metrics' });
    await t.publish([recent]);
    await expect.poll(() => t.stored('ingest-metrics'), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => audit.consumer.lag(), { timeout: 5000 }).toBe(0);
    const text = await t.metrics.metrics();
    expect(text).toMatch(/^arbiter_audit_consumer_lag\{service="audit"\} 0$/m);
    expect(text).toMatch(/^arbiter_audit_events_ingested_total\{service="audit"\} \d+$/m);
  });

  it('parks an event it cannot store after AUDIT_MAX_DELIVERIES, makes no partition for it, and stores the events of other orgs meanwhile', async () => {
    const { listPartitions } = await import('../src/repositories/partitions.js');
    const partitionsBefore = await listPartitions(audit.db);
    // Year 1 (Date.UTC's 1901), and a text jsonb cannot hold: every try of either fails.
    const ancient = event('executed', { orgId: 'ingest-poison', at: '0001-01-01T00:00:00.000Z' });
    const nul = event('edited', { orgId: 'ingest-poison', details: { note: 'nul \u0000 inside' } });
    const others = Array.from({ length: 20 }, () => event('edited', { orgId: 'ingest-other' }));
    const started = Date.now();
    await t.publish([ancient, ...others.slice(0, 5), nul, ...others.slice(5, 10)]);
    await expect.poll(() => t.stored('ingest-other'), { timeout: 5000 }).toBe(10);
    await t.publish(others.slice(10));
    await expect.poll(() => t.stored('ingest-other'), { timeout: 5000 }).toBe(20);
    expect(Date.now() - started).toBeLessThan(10_000);

    const dead = deadEventStreamName(t.prefix);
    await expect.poll(async () => (await t.jsm.streams.info(dead)).state.messages, { timeout: 20_000 }).toBe(2);
    const parked = await Promise.all([1, 2].map((seq) => t.jsm.streams.getMessage(dead, { seq })));
    const byId = new Map(parked.map((m) => [(m!.json() as { eventId: string }).eventId, m!]));
    expect([...byId.keys()].sort()).toEqual([ancient.eventId, nul.eventId].sort());
    const first = byId.get(ancient.eventId)!;
    expect(first.header.get('Arbiter-Subject')).toBe(eventSubject(t.prefix, 'ingest-poison', 'executed'));
    expect(first.header.get('Arbiter-Deliveries')).toBe('3');
    expect(first.header.get('Arbiter-Reason')).toMatch(/partition/);
    expect(byId.get(nul.eventId)!.header.get('Arbiter-Reason')).not.toBe('');

    await expect.poll(() => audit.consumer.lag(), { timeout: 5000 }).toBe(0);
    expect(await t.metrics.metrics()).toMatch(/^arbiter_audit_events_dead_lettered_total\{service="audit"\} 2$/m);
    expect(await t.stored('ingest-poison')).toBe(0);
    expect(await listPartitions(audit.db)).toEqual(partitionsBefore);
  });
});

describe('retention', () => {
  it('drops whole monthly partitions past AUDIT_RETENTION_DAYS and keeps the rest, ahead ones included', async () => {
    const { Partitions } = await import('../src/partitions.js');
    const { listPartitions, monthOf, addMonths } = await import('../src/repositories/partitions.js');
    const logger = (await import('@arbiter/service-kit')).createLogger({ service: 'audit-test', level: 'silent' });
    const now = new Date();
    const keep = new Partitions(audit.db, 0, logger);
    await keep.ensureFor(['2018-01-10T00:00:00.000Z']);
    await keep.maintain(now);
    expect(await listPartitions(audit.db)).toContain(201801);
    const expire = new Partitions(audit.db, 40, logger);
    await expire.maintain(now);
    const left = await listPartitions(audit.db);
    expect(left).not.toContain(201801);
    expect(left).not.toContain(201903);
    const current = monthOf(now);
    expect(left).toEqual(expect.arrayContaining([current, addMonths(current, 1), addMonths(current, 2)]));
  });
});
