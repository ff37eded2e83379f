import {
  DeleteBaseReply,
  ExportPage,
  ExportSubject,
  FlowRecord,
  Group,
  GroupMember,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject as S,
  EXPORT_PAGE_MAX_BYTES,
  type BundleBase,
  type BundleGroup,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExportService } from '../src/export-service.js';
import { ADULT_RULE, as, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const editor = as('editor', { orgId: 'exporter' });
const admin = as('admin', { orgId: 'exporter' });
const page = (section: string, extra: Record<string, unknown> = {}, principal = admin) =>
  env.call(ExportSubject, { principal, section, ...extra }, ExportPage);

/** Every item of a section, following cursors. */
async function all(section: string, limit: number): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const p = await page(section, { limit, ...(cursor ? { cursor } : {}) });
    out.push(...p.items);
    if (p.nextCursor === null) return out;
    cursor = p.nextCursor;
  }
  throw new Error('too many pages');
}

describe('export pages', () => {
  it('pages the org’s live policies with every version (oldest first, draft last), flows and groups with live members', async () => {
    const p = await env.call(S.policyCreate, { principal: editor, name: 'Exported', rule: ADULT_RULE }, PolicyRecord);
    await env.call(S.policyUpdate, { principal: admin, policyId: p.policyId, status: 'published' }, PolicyUpdateReply);
    const d = (await env.call(S.policyDraft, { principal: editor, policyId: p.policyId }, PolicyDraftReply)).record;
    await env.call(S.policyUpdate, { principal: admin, policyId: d.policyId, status: 'published', description: 'v2' }, PolicyUpdateReply);
    const d3 = (await env.call(S.policyDraft, { principal: editor, policyId: p.policyId }, PolicyDraftReply)).record;
    const gone = await env.call(S.policyCreate, { principal: editor, name: 'Deleted', rule: ADULT_RULE }, PolicyRecord);
    const other = await env.call(S.policyCreate, { principal: as('editor'), name: 'Other org', rule: ADULT_RULE }, PolicyRecord);
    const f = await env.call(
      S.flowCreate,
      { principal: editor, name: 'Exported flow', definition: { start: 'x', nodes: { x: { type: 'return', value: true } } } },
      FlowRecord,
    );
    const g = await env.call(S.groupCreate, { principal: editor, name: 'Exported group' }, Group);
    for (const [memberId, memberType] of [
      [p.baseId, 'policy'],
      [gone.baseId, 'policy'],
      [f.baseId, 'flow'],
    ] as const) {
      await env.call(S.groupMemberAdd, { principal: editor, groupId: g.groupId, memberId, memberType }, GroupMember);
    }
    await env.call(S.policyDelete, { principal: admin, policyId: gone.policyId }, DeleteBaseReply);

    const policies = (await all('policies', 1)) as BundleBase[];
    expect(policies.map((b) => b.baseId)).toEqual([p.baseId]);
    expect(policies.map((b) => b.baseId)).not.toContain(other.baseId);
    expect(policies[0].latestVersion).toBe(2);
    expect(policies[0].records.map((r) => [r.recordId, r.status, r.version, r.description])).toEqual([
      [p.policyId, 'published', 1, ''],
      [d.policyId, 'published', 2, 'v2'],
      [d3.policyId, 'draft', null, ''], // copied from version 1, the id it was asked from
    ]);
    expect(policies[0].records[0]).toMatchObject({ rule: ADULT_RULE, definition: null, schema: null, tests: [], publishedBy: 'admin' });

    const flows = (await all('flows', 5)) as BundleBase[];
    expect(flows.map((b) => [b.baseId, b.records[0].definition])).toEqual([[f.baseId, f.definition]]);

    const groups = (await all('groups', 5)) as BundleGroup[];
    expect(groups).toEqual([
      {
        groupId: g.groupId,
        name: 'Exported group',
        description: '',
        createdBy: 'editor',
        createdAt: g.createdAt,
        members: expect.arrayContaining([
          { memberId: p.baseId, memberType: 'policy' },
          { memberId: f.baseId, memberType: 'flow' },
        ]) as unknown,
      },
    ]);
    expect(groups[0].members).toHaveLength(2);
  });

  it('admin only (403 otherwise); a bad cursor is 400; unknown sections and limits over the page size are refused', async () => {
    for (const role of ['editor', 'publisher', 'viewer', 'auditor'] as const) {
      expect((await env.fail(ExportSubject, { principal: as(role, { orgId: 'exporter' }), section: 'policies' })).code).toBe('forbidden');
    }
    expect((await env.fail(ExportSubject, { principal: admin, section: 'policies', cursor: 'junk' })).code).toBe('invalid_cursor');
    expect((await env.fail(ExportSubject, { principal: admin, section: 'users' })).code).toBe('bad_request');
    expect((await env.fail(ExportSubject, { principal: admin, section: 'policies', limit: 1000 })).code).toBe('bad_request');
    expect(await page('policies', {}, as('admin', { orgId: 'empty-org' }))).toEqual({ items: [], nextCursor: null });
  });

  it('bounds pages by bytes as well as by count: 64 KB rules fill a page before 20 bases, a base bigger than a page comes in parts', async () => {
    const bigAdmin = as('admin', { orgId: 'big-exporter' });
    const bigRule = (tag: string) => `A **x** is ok if the __v__ of the **x** is equal to "${tag}${'a'.repeat(64_000 - tag.length)}".`;
    const drafts: string[] = [];
    for (let i = 0; i < 12; i++) {
      drafts.push((await env.call(S.policyCreate, { principal: bigAdmin, name: `big ${i}`, rule: bigRule(`b${i}`) }, PolicyRecord)).baseId);
    }
    // 9 versions and a draft of 64 KB: more than one page.
    const first = await env.call(S.policyCreate, { principal: bigAdmin, name: 'versions', rule: bigRule('v1') }, PolicyRecord);
    let id = first.policyId;
    await env.call(S.policyUpdate, { principal: bigAdmin, policyId: id, status: 'published' }, PolicyUpdateReply);
    for (let v = 2; v <= 10; v++) {
      id = (await env.call(S.policyDraft, { principal: bigAdmin, policyId: id }, PolicyDraftReply)).record.policyId;
      const status = v === 10 ? 'draft' : 'published';
      await env.call(S.policyUpdate, { principal: bigAdmin, policyId: id, status, rule: bigRule(`v${v}`) }, PolicyUpdateReply);
    }

    const pages: ExportPage[] = [];
    let cursor: string | undefined;
    do {
      const p = await page('policies', cursor ? { cursor } : {}, bigAdmin);
      pages.push(p);
      cursor = p.nextCursor ?? undefined;
    } while (cursor !== undefined && pages.length < 100);
    for (const p of pages) expect(Buffer.byteLength(JSON.stringify(p.items))).toBeLessThanOrEqual(EXPORT_PAGE_MAX_BYTES);
    expect(pages.length).toBeGreaterThan(2);
    // Parts of one base follow each other: joined, every base once with every record in order.
    const joined: BundleBase[] = [];
    for (const base of pages.flatMap((p) => p.items as BundleBase[])) {
      const last = joined.at(-1);
      if (last?.baseId === base.baseId) last.records.push(...base.records);
      else joined.push({ ...base, records: [...base.records] });
    }
    expect(joined.map((b) => b.baseId).sort()).toEqual([...drafts, first.baseId].sort());
    const versions = joined.find((b) => b.baseId === first.baseId)!;
    expect(versions.records.map((r) => [r.version, r.rule])).toEqual(
      Array.from({ length: 10 }, (_, i) => [i < 9 ? i + 1 : null, bigRule(`v${i + 1}`)]),
    );
    expect(pages.flatMap((p) => p.items as BundleBase[]).filter((b) => b.baseId === first.baseId).length).toBeGreaterThan(1);
  }, 120_000);

  it('carries each version’s schedule, cancellation and rollback, read with one timeline query per page', async () => {
    const timed = as('admin', { orgId: 'timed-exporter' });
    const publish = async (baseId: string, effectiveFrom?: string) => {
      const d = (await env.call(S.policyDraft, { principal: timed, policyId: baseId }, PolicyDraftReply)).record;
      const extra = effectiveFrom === undefined ? {} : { effectiveFrom };
      return (await env.call(S.policyUpdate, { principal: timed, policyId: d.policyId, status: 'published', ...extra }, PolicyUpdateReply))
        .record;
    };
    const bases: string[] = [];
    const later = new Date(Date.now() + 3600_000).toISOString();
    const muchLater = new Date(Date.now() + 7200_000).toISOString();
    for (const name of ['timed a', 'timed b']) {
      const p = await env.call(S.policyCreate, { principal: timed, name, rule: ADULT_RULE }, PolicyRecord);
      await env.call(S.policyUpdate, { principal: timed, policyId: p.policyId, status: 'published' }, PolicyUpdateReply);
      await publish(p.baseId, later);
      await publish(p.baseId, muchLater);
      await env.call(S.policyScheduleCancel, { principal: timed, baseId: p.baseId, version: 3 }, PolicyRecord);
      await env.call(S.policyRollback, { principal: timed, baseId: p.baseId, toVersion: 1 }, PolicyRecord);
      bases.push(p.baseId);
    }

    const queries: string[] = [];
    const count = (q: { sql: string }) => queries.push(q.sql);
    env.sql.on('query', count);
    const exported = await new ExportService(env.sql).page(timed, { section: 'policies', limit: 20 });
    env.sql.off('query', count);
    expect(queries.filter((q) => q.includes('registry_version_timeline'))).toHaveLength(1);

    expect((exported.items as BundleBase[]).map((b) => b.baseId).sort()).toEqual([...bases].sort());
    for (const base of exported.items as BundleBase[]) {
      const [v1, v2, v3, v4] = base.records;
      expect(v1).not.toHaveProperty('effectiveFrom');
      expect(v1).not.toHaveProperty('cancelled');
      expect(v1).not.toHaveProperty('rollbackOf');
      expect(v2).toMatchObject({ version: 2, effectiveFrom: later });
      expect(v2).not.toHaveProperty('cancelled');
      expect(v3).toMatchObject({ version: 3, effectiveFrom: muchLater, cancelled: true, cancelledBy: timed.userId });
      expect(Date.parse(v3!.cancelledAt!)).toBeLessThanOrEqual(Date.now());
      expect(v4).toMatchObject({ version: 4, rollbackOf: 1 });
      expect(v4).not.toHaveProperty('effectiveFrom');
    }
  });
});
