/**
 * Local evaluation's registry side: the per-org revision and its feed, snapshots of a
 * selection (whole and since a revision), the `runnable.changed` notification and run reports.
 */
import {
  DeleteBaseReply,
  FlowRecord,
  Group,
  GroupMember,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject as S,
  RunnableChanged,
  RunnableRevision,
  RunnableSnapshotPage,
  RunnableSubject as R,
  RunReportReply,
  type FlowDefinition,
  type Principal,
  type RunnableSelection,
} from '@arbiter/contracts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportEventId } from '../src/runnable-sync-service.js';
import { ADULT_RULE, as, eventually, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const editor = as('editor');
const other = as('editor', { userId: 'other' });
const admin = as('admin');
const viewer = as('viewer');
const globex = as('admin', { orgId: 'globex' });

const rule = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
const create = (name: string, principal: Principal = editor, r = ADULT_RULE) =>
  env.call(S.policyCreate, { principal, name, rule: r }, PolicyRecord);
const publish = (id: string, patch: Record<string, unknown> = {}) =>
  env.call(S.policyUpdate, { principal: admin, policyId: id, status: 'published', ...patch }, PolicyUpdateReply);
const edit = (id: string, patch: Record<string, unknown>, principal: Principal = editor) =>
  env.call(S.policyUpdate, { principal, policyId: id, status: 'draft', ...patch }, PolicyUpdateReply);
const remove = (id: string) => env.call(S.policyDelete, { principal: admin, policyId: id }, DeleteBaseReply);
const restore = (id: string) => env.call(S.policyRestore, { principal: admin, id }, PolicyRecord);
const revision = (principal: Principal = viewer) => env.call(R.revision, { principal }, RunnableRevision).then((r) => r.revision);
const snapshot = (selection: RunnableSelection, opts: { since?: number; principal?: Principal; cursor?: string; limit?: number } = {}) => {
  const { principal = viewer, ...rest } = opts;
  return env.call(R.snapshot, { principal, selection, ...rest }, RunnableSnapshotPage);
};

describe('the per-org revision', () => {
  it('moves with what a run would run, and only with that', async () => {
    const r0 = await revision();
    const draft = await create('Rev');
    const r1 = await revision();
    expect(r1).toBeGreaterThan(r0);

    await edit(draft.policyId, { rule: rule(21) }); // a never-published draft's content: moves
    const r2 = await revision();
    expect(r2).toBeGreaterThan(r1);
    await edit(draft.policyId, { name: 'Rev renamed' }); // its name is not run: stays
    expect(await revision()).toBe(r2);

    const v1 = (await publish(draft.policyId)).record;
    const r3 = await revision();
    expect(r3).toBeGreaterThan(r2);
    const next = (await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply)).record;
    await edit(next.policyId, { rule: rule(30) }); // a published base's draft is not what runs: stays
    expect(await revision()).toBe(r3);

    await remove(v1.policyId);
    const r4 = await revision();
    expect(r4).toBeGreaterThan(r3);
    await restore(v1.baseId);
    expect(await revision()).toBeGreaterThan(r4);
    // another org has its own revision
    expect(await revision(globex)).toBe(0);
  });

  it('each move is announced on `runnable.changed` once committed', async () => {
    const seen: RunnableChanged[] = [];
    const sub = env.client.nc.subscribe(`${env.prefix}.${R.changed}`, {
      callback: (_err, msg) => {
        seen.push(RunnableChanged.parse(msg.json()));
      },
    });
    try {
      await env.client.nc.flush();
      await create('Announced');
      const now = await revision();
      await eventually(() => expect(seen).toContainEqual({ orgId: 'acme', revision: now }));
    } finally {
      sub.unsubscribe();
    }
  });
});

describe('snapshots', () => {
  it('select named bases (any of the org), groups and `all` with list visibility; never another org', async () => {
    const mine = await create('Mine');
    const theirs = await create('Theirs', other);
    const published = (await publish((await create('Shared', other)).policyId)).record;
    const foreign = await env.call(S.policyCreate, { principal: globex, name: 'Foreign', rule: ADULT_RULE }, PolicyRecord);

    const named = await snapshot({ bases: [theirs.baseId, foreign.baseId] }, { principal: editor });
    expect(named.full).toBe(true);
    expect(named.bases.map((b) => b.baseId)).toEqual([theirs.baseId]);
    expect(named.missing).toEqual([foreign.baseId]);
    expect(named.bases[0]).toMatchObject({
      kind: 'policy',
      selected: true,
      current: { policyId: theirs.policyId, rule: ADULT_RULE },
      pinned: [],
    });

    const all = await snapshot({ all: true }, { principal: editor });
    const ids = all.bases.map((b) => b.baseId);
    expect(ids).toContain(mine.baseId);
    expect(ids).toContain(published.baseId);
    expect(ids).not.toContain(theirs.baseId);
    expect(ids).not.toContain(foreign.baseId);
    expect(all.limits).toEqual({ stepBudget: 1_000_000, traceStepBudget: 10_000, maxTraceBytes: 262_144 });

    const group = await env.call(S.groupCreate, { principal: editor, name: `g-${randomUUID()}`, description: '' }, Group);
    for (const id of [theirs.baseId, published.baseId])
      await env.call(S.groupMemberAdd, { principal: editor, groupId: group.groupId, memberId: id, memberType: 'policy' }, GroupMember);
    const members = await snapshot({ group: group.groupId }, { principal: editor });
    expect(members.bases.map((b) => b.baseId)).toEqual([published.baseId]);
  });

  it('bring the policies a selected flow names, with the versions and records it pins', async () => {
    const byBase = (await publish((await create('Node by base')).policyId)).record;
    const pinnedBase = (await publish((await create('Node pinned')).policyId)).record;
    const v2 = await env.call(S.policyDraft, { principal: editor, policyId: pinnedBase.policyId }, PolicyDraftReply);
    await publish(v2.record.policyId, { rule: rule(40) });
    const exact = await create('Node exact');
    const definition: FlowDefinition = {
      start: 'a',
      nodes: {
        a: { type: 'policy', baseId: byBase.baseId, onTrue: 'b', onFalse: 'no' },
        b: { type: 'policy', baseId: pinnedBase.baseId, version: 1, onTrue: 'c', onFalse: 'no' },
        c: { type: 'policy', policyId: exact.policyId, onTrue: 'yes', onFalse: 'no' },
        yes: { type: 'return', value: true },
        no: { type: 'custom', outcome: 'manual review' },
      },
    };
    const f = await env.call(S.flowCreate, { principal: editor, name: 'Flow', definition }, FlowRecord);
    const snap = await snapshot({ bases: [f.baseId] }, { principal: editor });
    const byId = new Map(snap.bases.map((b) => [b.baseId, b]));
    expect(byId.get(f.baseId)).toMatchObject({ kind: 'flow', selected: true, current: { flowId: f.flowId, definition } });
    expect(byId.get(byBase.baseId)).toMatchObject({ kind: 'policy', selected: false, current: { policyId: byBase.policyId }, pinned: [] });
    const pinned = byId.get(pinnedBase.baseId);
    expect(pinned).toMatchObject({ selected: false, current: { version: 2, rule: rule(40) } });
    expect(pinned?.kind === 'policy' && pinned.pinned.map((p) => [p.policyId, p.version])).toEqual([[pinnedBase.policyId, 1]]);
    const exactBase = byId.get(exact.baseId);
    expect(exactBase?.kind === 'policy' && exactBase.pinned.map((p) => p.policyId)).toEqual([exact.policyId]);
  });

  it('since a revision: only what changed, deletions in `removed`; a group change answers everything', async () => {
    const a = await create('Delta A');
    const b = (await publish((await create('Delta B')).policyId)).record;
    const selection = { bases: [a.baseId, b.baseId] };
    const start = await snapshot(selection);
    expect(start.bases).toHaveLength(2);
    expect((await snapshot(selection, { since: start.revision })).bases).toEqual([]);

    await edit(a.policyId, { rule: rule(50) });
    const afterEdit = await snapshot(selection, { since: start.revision });
    expect(afterEdit).toMatchObject({ full: false, removed: [] });
    expect(afterEdit.bases.map((x) => [x.baseId, x.kind === 'policy' && x.current.rule])).toEqual([[a.baseId, rule(50)]]);

    await remove(b.policyId);
    const afterDelete = await snapshot(selection, { since: afterEdit.revision });
    expect(afterDelete).toMatchObject({ full: false, bases: [], removed: [b.baseId] });
    await restore(b.baseId);
    const afterRestore = await snapshot(selection, { since: afterDelete.revision });
    expect(afterRestore.bases.map((x) => x.baseId)).toEqual([b.baseId]);

    const group = await env.call(S.groupCreate, { principal: editor, name: `g-${randomUUID()}`, description: '' }, Group);
    const before = await snapshot({ group: group.groupId }, { principal: editor });
    await env.call(S.groupMemberAdd, { principal: editor, groupId: group.groupId, memberId: a.baseId, memberType: 'policy' }, GroupMember);
    const grown = await snapshot({ group: group.groupId }, { since: before.revision, principal: editor });
    expect(grown.full).toBe(true);
    expect(grown.bases.map((x) => x.baseId)).toEqual([a.baseId]);
  });

  it('pages in base id order with a cursor', async () => {
    const created = await Promise.all([1, 2, 3, 4, 5].map((i) => create(`Page ${i}`)));
    const ids = created.map((c) => c.baseId).sort();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await snapshot({ bases: ids }, { limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.bases.map((b) => b.baseId));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor !== undefined);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
  });

  it('refuses callers without `view`, an empty selection and an unknown group', async () => {
    const noView = { ...viewer, scopes: [] } as Principal;
    expect((await env.fail(R.snapshot, { principal: noView, selection: { all: true } })).code).toBe('forbidden');
    expect((await env.fail(R.snapshot, { principal: viewer, selection: {} })).code).toBe('validation_failed');
    expect((await env.fail(R.snapshot, { principal: viewer, selection: { group: randomUUID() } })).code).toBe('not_found');
    expect((await env.fail(R.snapshot, { principal: viewer, selection: { all: true }, extra: 1 })).code).toBe('bad_request');
  });
});

describe('run reports', () => {
  it('become `executed` events via sdk, once per report however often it is sent; foreign records are left out', async () => {
    const p = (await publish((await create('Reported')).policyId)).record;
    const foreign = await env.call(S.policyCreate, { principal: globex, name: 'Foreign', rule: ADULT_RULE }, PolicyRecord);
    const reporter: Principal = { ...viewer, apiKeyId: randomUUID() };
    const from = new Date(Date.now() - 5000).toISOString();
    const to = new Date().toISOString();
    const report = {
      principal: reporter,
      reportId: randomUUID(),
      runs: [
        {
          kind: 'policy',
          recordId: p.policyId,
          baseId: p.baseId,
          version: 1,
          count: 5,
          trueCount: 3,
          falseCount: 1,
          errorCount: 1,
          from,
          to,
        },
        {
          kind: 'policy',
          recordId: foreign.policyId,
          baseId: foreign.baseId,
          version: null,
          count: 1,
          trueCount: 1,
          falseCount: 0,
          errorCount: 0,
          from,
          to,
        },
      ],
    };
    expect(await env.call(R.report, report, RunReportReply)).toEqual({ accepted: 1, ignored: [foreign.policyId] });
    expect(await env.call(R.report, report, RunReportReply)).toEqual({ accepted: 1, ignored: [foreign.policyId] });
    const events = await eventually(async () => {
      const found = (await env.events()).filter((e) => e.kind === 'executed' && e.resource.id === p.policyId);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(events[0]).toMatchObject({
      eventId: reportEventId(report.reportId, { recordId: p.policyId, from, to }),
      orgId: 'acme',
      actor: { userId: reporter.userId, apiKeyId: reporter.apiKeyId },
      resource: { type: 'policy', id: p.policyId, baseId: p.baseId },
      details: { aggregated: true, count: 5, trueCount: 3, falseCount: 1, errorCount: 1, version: 1, via: ['sdk'], from, to },
    });
  });

  it('dates its events when the report is received (the window in the details), one distinct event per window, before 1970 too', async () => {
    const p = (await publish((await create('Windows')).policyId)).record;
    const windows = [
      ['1969-01-01T00:00:00.000Z', '1969-01-01T00:01:00.000Z'],
      ['1969-02-01T00:00:00.000Z', '1969-02-01T00:01:00.000Z'],
      ['1969-02-01T00:00:00.000Z', '1969-02-01T00:02:00.000Z'],
      ['0001-01-01T00:00:00.000Z', '0001-01-01T00:01:00.000Z'],
      [new Date(Date.now() - 60_000).toISOString(), new Date(Date.now() + 3_600_000).toISOString()],
    ] as const;
    const runs = windows.map(([from, to]) => ({
      kind: 'policy' as const,
      recordId: p.policyId,
      baseId: p.baseId,
      version: 1,
      count: 1,
      trueCount: 1,
      falseCount: 0,
      errorCount: 0,
      from,
      to,
    }));
    const received = Date.now();
    expect(await env.call(R.report, { principal: viewer, reportId: randomUUID(), runs }, RunReportReply)).toMatchObject({ accepted: 5 });
    const answered = Date.now();
    const events = await eventually(async () => {
      const found = (await env.events()).filter((e) => e.kind === 'executed' && e.resource.id === p.policyId);
      expect(found).toHaveLength(windows.length);
      return found;
    });
    expect(new Set(events.map((e) => e.eventId)).size).toBe(windows.length);
    for (const e of events) {
      expect(Date.parse(e.at)).toBeGreaterThanOrEqual(received - 5);
      expect(Date.parse(e.at)).toBeLessThanOrEqual(answered + 5);
    }
    expect(events.map((e) => [e.details.from, e.details.to]).sort()).toEqual(windows.map((w) => [...w]).sort());
  });

  it('refuses counts that do not add up', async () => {
    const p = await create('Bad counts');
    const now = new Date().toISOString();
    const bad = {
      principal: viewer,
      reportId: randomUUID(),
      runs: [
        {
          kind: 'policy',
          recordId: p.policyId,
          baseId: p.baseId,
          version: null,
          count: 2,
          trueCount: 1,
          falseCount: 0,
          errorCount: 0,
          from: now,
          to: now,
        },
      ],
    };
    expect((await env.fail(R.report, bad)).code).toBe('bad_request');
  });
});
