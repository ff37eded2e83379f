/**
 * Decision records in the audit service: `decided` events are stored in `decisions`
 * (not in the trail), once however often they are delivered, in monthly partitions dropped past
 * `DECISIONS_RETENTION_DAYS`; `audit.decisions.query` and `audit.decisions.get` answer admins and auditors of
 * the org only.
 */
import { randomUUID } from 'node:crypto';
import {
  DecisionHistoryHeader,
  DecisionPage,
  DecisionRecord,
  DecisionSubject,
  eventSubject,
  isArbiterError,
  type ArbiterEvent,
} from '@arbiter/contracts';
import { rejectionOf } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Audit } from '../src/service.js';
import { as, startTestEnv, type TestEnv } from './support.js';

let t: TestEnv;
let audit: Audit;

function decided(over: Partial<DecisionRecord> = {}): ArbiterEvent {
  const at = over.at ?? new Date().toISOString();
  const record: DecisionRecord = {
    decisionId: randomUUID(),
    orgId: 'dec-org',
    at,
    now: at,
    kind: 'policy',
    baseId: 'base-1',
    policyId: 'rec-1',
    version: 1,
    caller: { userId: 'alice' },
    input: { applicant: { score: 1 } },
    masked: false,
    result: true,
    outcomes: {},
    errorCode: null,
    durationUs: 12,
    ...over,
  };
  return {
    eventId: record.decisionId,
    orgId: record.orgId,
    kind: 'decided',
    at: record.at,
    actor: record.caller,
    resource: { type: 'policy', id: 'rec-1', baseId: record.baseId },
    details: record,
  };
}

/** Reasons as a run that asked for them gives them, masked (docs/decisions.md#reasons). */
const REASONS = {
  result: false,
  sentence: 'approved is false because the score of the applicant ("***") is not at least 600',
  because: [
    {
      kind: 'condition' as const,
      rule: 'approved',
      text: 'the __score__ of the **applicant** is at least 600',
      holds: false,
      path: 'applicant.score',
      value: '***',
      line: 1,
      column: 30,
    },
  ],
};

const count = async (orgId: string) =>
  Number(((await t.sql('decisions').where('org_id', orgId).count('* as n')) as Array<{ n: string }>)[0]!.n);

/** A series' value in the audit registry's text (0 when absent). */
const series = async (name: string, le?: string): Promise<number> => {
  const text = await t.metrics.metrics();
  const labels = le === undefined ? '' : `le="${le}",`;
  const m = new RegExp(`^${name}\\{${labels}service="audit"\\} (\\d+(?:\\.\\d+)?)$`, 'm').exec(text);
  return m === null ? 0 : Number(m[1]);
};

beforeAll(async () => {
  t = await startTestEnv();
  audit = await t.startAudit();
});
afterAll(async () => t?.close());

describe('decided events', () => {
  it('are stored in `decisions`, once each however often delivered, and never in the trail', async () => {
    const start = Date.now() - 60_000;
    const events = Array.from({ length: 5 }, (_, i) => decided({ at: new Date(start + i * 1000).toISOString() }));
    await t.publish(events);
    // The same events again under other message ids: JetStream delivers them twice.
    for (const e of events) await t.js.publish(eventSubject(t.prefix, e.orgId, e.kind), JSON.stringify(e), { msgID: `${e.eventId}-again` });
    const marker = { ...decided({ orgId: 'dec-marker' }) };
    await t.publish([marker]);
    await expect.poll(() => count('dec-marker'), { timeout: 10_000 }).toBe(1);
    expect(await count('dec-org')).toBe(5);
    expect(await t.stored('dec-org')).toBe(0);
    const page = await t.client.request(DecisionSubject.query, { principal: as('auditor', { orgId: 'dec-org' }), limit: 10 }, DecisionPage);
    expect(page.items.map((d) => d.decisionId)).toEqual(events.map((e) => e.eventId).reverse());
    expect(page.items[0]).toEqual(events[4]!.details);
  });

  it('keep the reasons of a run that asked for them (a policy, a flow), or that they were left out, and read them back', async () => {
    const events = [
      decided({ orgId: 'dec-reasons', reasons: REASONS }),
      decided({
        orgId: 'dec-reasons',
        kind: 'flow',
        policyId: undefined,
        flowId: 'flow-1',
        outcomes: undefined,
        path: ['n1'],
        nodeReasons: [{ nodeId: 'n1', reasons: { ...REASONS, truncated: true } }],
      }),
      decided({ orgId: 'dec-reasons', reasonsLeftOut: true }),
    ];
    await t.publish(events);
    await expect.poll(() => count('dec-reasons'), { timeout: 10_000 }).toBe(3);
    for (const e of events) {
      const one = await t.client.request(
        DecisionSubject.get,
        { principal: as('auditor', { orgId: 'dec-reasons' }), decisionId: e.eventId },
        DecisionRecord,
      );
      expect(one).toEqual(e.details);
    }
  });

  it('pages of large records (inputs, reasons) stop early to fit a bus reply, and the cursor goes on', async () => {
    const start = Date.now() - 60_000;
    const big = { ...REASONS, sentence: 'x'.repeat(60_000) };
    const events = Array.from({ length: 30 }, (_, i) =>
      decided({ orgId: 'dec-big', at: new Date(start + i * 10).toISOString(), reasons: big }),
    );
    await t.publish(events);
    await expect.poll(() => count('dec-big'), { timeout: 10_000 }).toBe(30);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await t.client.request(
        DecisionSubject.query,
        { principal: as('auditor', { orgId: 'dec-big' }), limit: 1000, ...(cursor ? { cursor } : {}) },
        DecisionPage,
      );
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThan(600 * 1024);
      seen.push(...page.items.map((d) => d.decisionId));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBeGreaterThan(3);
    expect(seen).toEqual(events.map((e) => e.eventId).reverse());
  });

  it('skips, logs and counts (as rejected) a `decided` event whose details are not a decision record, and goes on', async () => {
    const rejected = () => series('arbiter_audit_events_rejected_total');
    const ingested = () => series('arbiter_audit_events_ingested_total');
    const before = { rejected: await rejected(), ingested: await ingested() };
    const mutations: Array<(record: Record<string, unknown>) => void> = [
      (r) => delete r.durationUs,
      (r) => (r.decisionId = 'not-a-uuid'),
      // A date PostgreSQL refuses: stored, it would fail the whole batch again at every redelivery.
      (r) => (r.at = '2026-02-30T10:00:00.000Z'),
      (r) => (r.version = 1.5),
      (r) => (r.caller = { userId: 'alice', apiKeyId: null }),
      (r) => (r.result = null),
      (r) => (r.input = [1, 2]),
      (r) => (r.reasons = { result: true, sentence: 1, because: [] }),
      (r) => (r.nodeReasons = [{ nodeId: 'n1' }]),
    ];
    const bad = mutations.map((mutate) => {
      const e = decided({ orgId: 'dec-bad' });
      mutate(e.details);
      return e;
    });
    await t.publish(bad);
    await t.publish([decided({ orgId: 'dec-bad-marker' })]);
    await expect.poll(() => count('dec-bad-marker'), { timeout: 10_000 }).toBe(1);
    expect(await count('dec-bad')).toBe(0);
    expect(await rejected()).toBe(before.rejected + bad.length);
    expect(await ingested()).toBe(before.ingested + 1);
    await expect.poll(() => audit.consumer.lag(), { timeout: 5000 }).toBe(0);
  });

  it('answers admins and auditors, refuses editors, and 404s another org', async () => {
    const [e] = [decided({ orgId: 'dec-access' })];
    await t.publish([e!]);
    await expect.poll(() => count('dec-access'), { timeout: 10_000 }).toBe(1);
    for (const role of ['admin', 'auditor'] as const) {
      const got = await t.client.request(
        DecisionSubject.get,
        { principal: as(role, { orgId: 'dec-access' }), decisionId: e!.eventId },
        DecisionRecord,
      );
      expect(got.decisionId).toBe(e!.eventId);
    }
    const fail = (req: unknown) => rejectionOf(t.client.request(DecisionSubject.get, req, z.unknown()), isArbiterError, 'the get');
    expect((await fail({ principal: as('editor', { orgId: 'dec-access' }), decisionId: e!.eventId })).code).toBe('forbidden');
    expect((await fail({ principal: as('admin', { orgId: 'other' }), decisionId: e!.eventId })).code).toBe('not_found');
    expect((await fail({ principal: as('admin', { orgId: 'dec-access' }), decisionId: randomUUID() })).code).toBe('not_found');
    const q = (req: unknown) => rejectionOf(t.client.request(DecisionSubject.query, req, z.unknown()), isArbiterError, 'the query');
    expect((await q({ principal: as('editor', { orgId: 'dec-access' }) })).code).toBe('forbidden');
    expect((await q({ principal: as('admin', { orgId: 'dec-access' }), cursor: 'garbage' })).code).toBe('invalid_cursor');
  });
});

describe('history pages (audit.decisions.history)', () => {
  /** Every page of a base's history through the bus, as an impact analysis reads it. */
  async function readHistory(principal: ReturnType<typeof as>, baseId: string, limit: number) {
    const pages: Array<{ header: DecisionHistoryHeader; inputs: unknown[] }> = [];
    let cursor: string | undefined;
    for (;;) {
      const frame = await t.client.requestFrame(DecisionSubject.history, {
        principal,
        baseId,
        limit,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      // The contract the governance service relies on without checking it per reply.
      const header = DecisionHistoryHeader.strict().parse(frame.header);
      pages.push({ header, inputs: frame.items.map((item) => JSON.parse(new TextDecoder().decode(item))) });
      if (header.nextCursor === null) return pages;
      cursor = header.nextCursor;
    }
  }

  it('answers frames: entries in the header, the inputs as items, newest first, every decision once across pages', async () => {
    const start = Date.now() - 120_000;
    const records = [
      decided({
        orgId: 'dec-hist',
        at: new Date(start).toISOString(),
        input: { applicant: { name: 'Zoë 日本', card: '***' } },
        masked: true,
      }),
      decided({
        orgId: 'dec-hist',
        at: new Date(start + 1000).toISOString(),
        result: false,
        outcomes: { 'theory passed': false },
        reasons: REASONS,
      }),
      decided({ orgId: 'dec-hist', at: new Date(start + 2000).toISOString(), result: false, errorCode: 'budget_exceeded', outcomes: {} }),
      decided({
        orgId: 'dec-hist',
        at: new Date(start + 3000).toISOString(),
        kind: 'flow',
        policyId: undefined,
        flowId: 'flow-1',
        result: 'approved',
        outcomes: undefined,
        path: ['n1', 'n2'],
        nodeReasons: [{ nodeId: 'n1', reasons: REASONS }],
        input: { items: [{ card: '***' }, { card: '***' }], n: 1.5, s: 'line\nbreak "quoted"' },
      }),
      decided({
        orgId: 'dec-hist',
        at: new Date(start + 4000).toISOString(),
        now: new Date(start - 86_400_000).toISOString(),
        result: { tier: 'gold', discount: 10 },
      }),
    ];
    await t.publish(records);
    await expect.poll(() => count('dec-hist'), { timeout: 10_000 }).toBe(records.length);
    const newestFirst = records.map((e) => e.details as DecisionRecord).reverse();

    const pages = await readHistory(as('editor', { orgId: 'dec-hist' }), 'base-1', 2);
    expect(pages.map((p) => p.header.entries.length)).toEqual([2, 2, 1]);
    const entries = pages.flatMap((p) => p.header.entries);
    expect(entries).toEqual(
      newestFirst.map((d) => ({
        decisionId: d.decisionId,
        at: d.at,
        now: d.now,
        result: d.result,
        errorCode: d.errorCode,
        ...(d.policyId !== undefined ? { policyId: d.policyId } : { flowId: d.flowId }),
        ...(d.outcomes !== undefined ? { outcomes: d.outcomes } : {}),
        ...(d.path !== undefined ? { path: d.path } : {}),
        ...(d.reasons !== undefined ? { reasons: d.reasons } : {}),
        ...(d.nodeReasons !== undefined ? { nodeReasons: d.nodeReasons } : {}),
      })),
    );
    expect(pages.flatMap((p) => p.inputs)).toEqual(newestFirst.map((d) => d.input));
    // One page of all: the same decisions.
    const whole = await readHistory(as('admin', { orgId: 'dec-hist' }), 'base-1', 1000);
    expect(whole).toHaveLength(1);
    expect(whole[0]!.header.entries.map((e) => e.decisionId)).toEqual(newestFirst.map((d) => d.decisionId));
  });

  it("refuses viewers, answers another org's base as empty, and a bad cursor as invalid_cursor", async () => {
    await t.publish([decided({ orgId: 'dec-hist-access' })]);
    await expect.poll(() => count('dec-hist-access'), { timeout: 10_000 }).toBe(1);
    const history = (principal: ReturnType<typeof as>, extra: Record<string, unknown> = {}) =>
      t.client.requestFrame(DecisionSubject.history, { principal, baseId: 'base-1', limit: 10, ...extra });
    const refused = await rejectionOf(history(as('viewer', { orgId: 'dec-hist-access' })), isArbiterError, 'the history');
    expect(refused.code).toBe('forbidden');
    const other = await history(as('admin', { orgId: 'dec-hist-other' }));
    expect(other.items).toEqual([]);
    expect(DecisionHistoryHeader.parse(other.header)).toEqual({ entries: [], nextCursor: null, ends: [] });
    const bad = await rejectionOf(history(as('admin', { orgId: 'dec-hist-access' }), { cursor: 'garbage' }), isArbiterError, 'the history');
    expect(bad.code).toBe('invalid_cursor');
  });
});

describe('drops reports', () => {
  it("adds an execution replica's drops to the bases' stats once per report id, readable by auditors and publishers", async () => {
    const report = {
      reportId: randomUUID(),
      drops: [
        { orgId: 'dec-drops', baseId: 'base-a', outbox: 5, buffer: 1, settings: 0 },
        { orgId: 'dec-drops', baseId: 'base-b', outbox: 0, buffer: 0, settings: 2 },
      ],
    };
    const reply = z.object({ added: z.boolean() });
    expect(await t.client.request(DecisionSubject.dropsReport, report, reply)).toEqual({ added: true });
    // Sent again (its reply lost): added once.
    expect(await t.client.request(DecisionSubject.dropsReport, report, reply)).toEqual({ added: false });
    // A newer replica's report also counts records too large for the bus; an older one's (above) has no such field.
    const next = {
      reportId: randomUUID(),
      drops: [{ orgId: 'dec-drops', baseId: 'base-a', outbox: 3, buffer: 0, settings: 0, tooLarge: 4 }],
    };
    expect(await t.client.request(DecisionSubject.dropsReport, next, reply)).toEqual({ added: true });
    await t.publish([decided({ orgId: 'dec-drops', baseId: 'base-a' })]);
    await expect.poll(() => count('dec-drops'), { timeout: 10_000 }).toBe(1);
    const stats = z.object({
      baseId: z.string(),
      recorded: z.number(),
      dropped: z.record(z.string(), z.number()),
      lastDroppedAt: z.string().nullable(),
    });
    for (const role of ['auditor', 'publisher', 'admin'] as const) {
      const got = await t.client.request(DecisionSubject.stats, { principal: as(role, { orgId: 'dec-drops' }), baseId: 'base-a' }, stats);
      expect(got).toMatchObject({ baseId: 'base-a', recorded: 1, dropped: { total: 13, outbox: 8, buffer: 1, settings: 0, tooLarge: 4 } });
      expect(got.lastDroppedAt).not.toBeNull();
    }
    const b = await t.client.request(DecisionSubject.stats, { principal: as('auditor', { orgId: 'dec-drops' }), baseId: 'base-b' }, stats);
    expect(b).toMatchObject({ recorded: 0, dropped: { total: 2, settings: 2 } });
    const other = await t.client.request(
      DecisionSubject.stats,
      { principal: as('auditor', { orgId: 'dec-other' }), baseId: 'base-a' },
      stats,
    );
    expect(other).toEqual({
      baseId: 'base-a',
      recorded: 0,
      dropped: { total: 0, outbox: 0, buffer: 0, settings: 0, tooLarge: 0 },
      lastDroppedAt: null,
    });
    const refused = await rejectionOf(
      t.client.request(DecisionSubject.stats, { principal: as('editor', { orgId: 'dec-drops' }), baseId: 'base-a' }, stats),
      isArbiterError,
      'the stats of an editor',
    );
    expect(refused.code).toBe('forbidden');
  });
});

describe('ingest metrics', () => {
  it("observes each stored record's ingest lag, from its `at` to its commit, on /metrics", async () => {
    const bucket = (le: string) => series('arbiter_decisions_ingest_lag_seconds_bucket', le);
    const before = {
      le10: await bucket('10'),
      le30: await bucket('30'),
      count: await series('arbiter_decisions_ingest_lag_seconds_count'),
    };
    const stored = await series('arbiter_decisions_ingested_total');
    // Recorded 20 s ago (as if it had waited in the outbox): committed now, its lag is about 20 s.
    await t.publish([decided({ orgId: 'dec-lag', at: new Date(Date.now() - 20_000).toISOString() })]);
    await expect.poll(() => count('dec-lag'), { timeout: 10_000 }).toBe(1);
    expect(await series('arbiter_decisions_ingest_lag_seconds_count')).toBe(before.count + 1);
    expect(await bucket('10')).toBe(before.le10);
    expect(await bucket('30')).toBe(before.le30 + 1);
    expect(await series('arbiter_decisions_ingested_total')).toBe(stored + 1);
  });
});

describe('retention', () => {
  it('drops whole monthly partitions of decisions past DECISIONS_RETENTION_DAYS, not those of the trail', async () => {
    const { Partitions } = await import('../src/partitions.js');
    const { listPartitions, monthOf, addMonths } = await import('../src/repositories/partitions.js');
    const logger = (await import('@arbiter/service-kit')).createLogger({ service: 'audit-test', level: 'silent' });
    const old = decided({ orgId: 'dec-old', at: '2019-05-06T07:08:09.000Z' });
    // Past the 30-day default: skipped at ingest rather than re-creating a dropped partition.
    await t.publish([old, decided({ orgId: 'dec-marker-2' })]);
    await expect.poll(() => count('dec-marker-2'), { timeout: 10_000 }).toBe(1);
    expect(await count('dec-old')).toBe(0);
    const keep = new Partitions(audit.db, 0, logger, 'decisions');
    await keep.ensureFor(['2018-01-10T00:00:00.000Z']);
    await new Partitions(audit.db, 0, logger).ensureFor(['2018-01-10T00:00:00.000Z']);
    expect(await listPartitions(audit.db, 'decisions')).toContain(201801);
    await new Partitions(audit.db, 30, logger, 'decisions').maintain();
    const left = await listPartitions(audit.db, 'decisions');
    expect(left).not.toContain(201801);
    const current = monthOf(new Date());
    expect(left).toEqual(expect.arrayContaining([current, addMonths(current, 1)]));
    expect(await listPartitions(audit.db, 'audit_events')).toContain(201801);
  });
});
