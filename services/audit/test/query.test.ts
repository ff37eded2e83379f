import {
  type ArbiterError,
  AuditEventPage,
  AuditSubject,
  isArbiterError,
  type ArbiterEvent,
  type AuditQueryRequest,
} from '@arbiter/contracts';
import { rejectionOf } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { as, event, startTestEnv, type TestEnv } from './support.js';

let t: TestEnv;
const org = 'query-org';
const events: ArbiterEvent[] = [];
const base = Date.parse('2026-06-15T12:00:00.000Z');

function query(req: AuditQueryRequest): Promise<AuditEventPage> {
  return t.client.request(AuditSubject.query, req, AuditEventPage, { timeoutMs: 10_000 });
}

function failure(req: unknown): Promise<ArbiterError> {
  return rejectionOf(t.client.request(AuditSubject.query, req, z.unknown(), { timeoutMs: 10_000 }), isArbiterError, 'the query');
}

beforeAll(async () => {
  t = await startTestEnv();
  const audit = await t.startAudit();
  // A month the ingest path makes no partition for (it is not around now): made ahead, as an operator would.
  await audit.partitions.ensureFor([new Date(base).toISOString()]);
  // 30 events one minute apart, spread over kinds, actors and two bases; one event in another org.
  const bases = ['base-a', 'base-b'];
  for (let i = 0; i < 30; i++) {
    events.push(
      event(i % 3 === 0 ? 'executed' : i % 3 === 1 ? 'edited' : 'published', {
        orgId: org,
        at: new Date(base + i * 60_000).toISOString(),
        actor: { userId: i % 2 === 0 ? 'alice' : 'bob' },
        resource: { type: i % 5 === 0 ? 'flow' : 'policy', id: `rec-${i}`, baseId: bases[i % 2]! },
        details: i % 3 === 0 ? { aggregated: true, count: i + 1 } : {},
      }),
    );
  }
  events.push(event('deleted', { orgId: 'other-org', at: new Date(base).toISOString() }));
  await t.publish(events);
  await t.waitStored(events.length);
});
afterAll(async () => t?.close());

const mine = () => events.filter((e) => e.orgId === org);
const newestFirst = (list: ArbiterEvent[]) => [...list].sort((a, b) => b.at.localeCompare(a.at)).map((e) => e.eventId);

describe('audit.query', () => {
  it('answers an admin and an auditor with their own org, newest first', async () => {
    for (const role of ['admin', 'auditor'] as const) {
      const page = await query({ principal: as(role, { orgId: org }), limit: 100 });
      expect(page.items.map((e) => e.eventId)).toEqual(newestFirst(mine()));
      expect(page.nextCursor).toBeNull();
    }
    const executed = (await query({ principal: as('auditor', { orgId: org }), kind: ['executed'], limit: 1 })).items[0];
    expect(executed).toMatchObject({ kind: 'executed', details: { aggregated: true, count: 28 }, actor: { userId: 'bob' } });
  });

  it('refuses viewers, editors, publishers and a key without the audit scope', async () => {
    for (const role of ['viewer', 'editor', 'publisher'] as const) {
      const err = await failure({ principal: as(role, { orgId: org }) });
      expect(err.code).toBe('forbidden');
    }
    expect((await failure({ principal: as('admin', { orgId: org, scopes: ['view', 'edit', 'admin'] }) })).code).toBe('forbidden');
    const keyed = await query({ principal: as('auditor', { orgId: org, scopes: ['view', 'audit'] }), limit: 1 });
    expect(keyed.items).toHaveLength(1);
  });

  it('shows another org nothing of this one', async () => {
    const page = await query({ principal: as('admin', { orgId: 'other-org' }), limit: 100 });
    expect(page.items.map((e) => e.orgId)).toEqual(['other-org']);
    expect((await query({ principal: as('admin', { orgId: 'third-org' }), limit: 100 })).items).toEqual([]);
  });

  it('filters by kind (several), actor, resource type, resource id, base id and time range', async () => {
    const p = as('auditor', { orgId: org });
    const check = async (req: Omit<AuditQueryRequest, 'principal'>, want: (e: ArbiterEvent) => boolean) => {
      const page = await query({ principal: p, limit: 100, ...req });
      expect(page.items.map((e) => e.eventId)).toEqual(newestFirst(mine().filter(want)));
    };
    await check({ kind: ['edited'] }, (e) => e.kind === 'edited');
    await check({ kind: ['edited', 'executed'] }, (e) => e.kind !== 'published');
    await check({ actor: 'bob' }, (e) => e.actor.userId === 'bob');
    await check({ resourceType: 'flow' }, (e) => e.resource.type === 'flow');
    await check({ resourceId: 'rec-7' }, (e) => e.resource.id === 'rec-7');
    await check({ baseId: 'base-a', kind: ['published'] }, (e) => e.resource.baseId === 'base-a' && e.kind === 'published');
    const from = new Date(base + 10 * 60_000).toISOString();
    const to = new Date(base + 20 * 60_000).toISOString();
    await check({ from, to }, (e) => e.at >= from && e.at < to);
    await check({ actor: 'nobody' }, () => false);
  });

  it('pages with a cursor, and a page stays right while new events arrive', async () => {
    const p = as('admin', { orgId: org });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await query({ principal: p, limit: 7, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((e) => e.eventId));
      // Newer events arrive between pages: they sort before the cursor and never shift the next page.
      await t.publish([event('edited', { orgId: org }), event('created', { orgId: org })]);
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor && pages < 20);
    expect(seen).toEqual(newestFirst(mine()));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('answers invalid_cursor for a forged cursor, and bad_request for from after to, or a bad filter', async () => {
    const p = as('admin', { orgId: org });
    expect((await failure({ principal: p, cursor: 'bm90LWEtY3Vyc29y' })).code).toBe('invalid_cursor');
    expect((await failure({ principal: p, cursor: Buffer.from('{"at":"x","id":"y"}').toString('base64url') })).code).toBe('invalid_cursor');
    expect((await failure({ principal: p, from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' })).code).toBe('bad_request');
    expect((await failure({ principal: p, kind: ['exploded'] })).code).toBe('bad_request');
    expect((await failure({ principal: p, limit: 5000 })).code).toBe('bad_request');
    expect((await failure({ kind: ['edited'] })).code).toBe('bad_request');
  });

  it('answers 400 invalid_cursor for a cursor whose time PostgreSQL cannot hold (was 500)', async () => {
    const p = as('admin', { orgId: org });
    const id = '0190a0b0-0000-7000-8000-000000000001';
    for (const at of ['-271821-04-20T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '0000-01-01T00:00:00.000Z']) {
      const cursor = Buffer.from(JSON.stringify({ at, id })).toString('base64url');
      const err = await failure({ principal: p, cursor });
      expect([err.code, err.status], at).toEqual(['invalid_cursor', 400]);
    }
  });
});
