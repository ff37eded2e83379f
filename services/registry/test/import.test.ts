/** `registry.import` over the bus with PostgreSQL, Redis and NATS: admin only, one transaction, `imported` events, origin kept. */
import { randomUUID } from 'node:crypto';

import {
  ExportPage,
  ExportSubject,
  FlowRecord,
  Group,
  ImportReply,
  ImportSubject,
  LivePolicyRecordEntry,
  PolicyDraftReply,
  PolicyRecord,
  PolicyRecordPage,
  PolicyUpdateReply,
  RegistrySubject as S,
  RunnableBaseEntry,
  RunnableSnapshotPage,
  RunnableSubject,
  runnableBaseKey,
  type BundleBase,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADULT_RULE, as, eventually, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const source = as('admin', { orgId: 'import-source' });
const target = as('admin', { orgId: 'import-target' });

async function bundleOf(principal = source, withGroups = false) {
  const policies = await env.call(ExportSubject, { principal, section: 'policies' }, ExportPage);
  const groups = withGroups ? (await env.call(ExportSubject, { principal, section: 'groups' }, ExportPage)).items : [];
  return {
    format: 'arbiter-bundle',
    formatVersion: 1,
    orgId: principal.orgId,
    exportedAt: new Date().toISOString(),
    policies: policies.items as BundleBase[],
    flows: [],
    groups: groups as never[],
  };
}

describe('registry.import', () => {
  it('loads into the target org in one transaction, queues one `imported` event per base, remembers the origin', async () => {
    const p = await env.call(S.policyCreate, { principal: source, name: 'Imported via bus', rule: ADULT_RULE }, PolicyRecord);
    await env.call(S.policyUpdate, { principal: source, policyId: p.policyId, status: 'published' }, PolicyUpdateReply);
    const bundle = await bundleOf();

    const refused = await env.fail(ImportSubject, { principal: as('publisher', { orgId: 'import-target' }), bundle, dryRun: true });
    expect(refused.code).toBe('forbidden');

    const done = await env.call(ImportSubject, { principal: target, bundle, dryRun: false }, ImportReply);
    expect(done).toMatchObject({ created: 1, conflicts: 0 });
    const newBase = done.items[0]!.targetId!;
    const row = await env.sql('registry_bases').where({ id: newBase }).first();
    expect(row).toMatchObject({ org_id: 'import-target', origin_org_id: 'import-source', origin_base_id: p.baseId, latest_version: 1 });

    const events = await eventually(async () => {
      const all = (await env.events()).filter((e) => e.resource.baseId === newBase);
      expect(all.length).toBeGreaterThanOrEqual(1);
      return all;
    });
    expect(events.map((e) => [e.kind, e.orgId, e.details.sourceOrgId, e.details.sourceBaseId])).toEqual([
      ['imported', 'import-target', 'import-source', p.baseId],
    ]);

    // A second import is unchanged and adds no row.
    const again = await env.call(ImportSubject, { principal: target, bundle, dryRun: false }, ImportReply);
    expect(again).toMatchObject({ created: 0, unchanged: 1 });
    expect(await env.sql('registry_bases').where({ org_id: 'import-target' }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });

  it('imports in parts: a later part’s flow naming a policy of an earlier part resolves to the imported copy', async () => {
    const from = as('admin', { orgId: 'parts-source' });
    const into = as('admin', { orgId: 'parts-target' });
    const p = await env.call(S.policyCreate, { principal: from, name: 'Part one', rule: ADULT_RULE }, PolicyRecord);
    const definition = {
      start: 'a',
      nodes: { a: { type: 'policy', baseId: p.baseId, onTrue: 'y', onFalse: 'y' }, y: { type: 'return', value: true } },
    };
    await env.call(S.flowCreate, { principal: from, name: 'Part two', definition }, FlowRecord);
    const whole = await bundleOf(from);
    const flows = await env.call(ExportSubject, { principal: from, section: 'flows' }, ExportPage);
    const first = await env.call(ImportSubject, { principal: into, bundle: whole, dryRun: false }, ImportReply);
    const copy = first.items[0]!.targetId!;
    const second = await env.call(
      ImportSubject,
      { principal: into, bundle: { ...whole, policies: [], flows: flows.items }, dryRun: false },
      ImportReply,
    );
    expect(second.items).toEqual([expect.objectContaining({ type: 'flow', action: 'create' })]);
    const flow = await env.call(S.flowGet, { principal: into, flowId: second.items[0]!.targetId! }, FlowRecord);
    expect(flow.definition.nodes.a).toMatchObject({ baseId: copy });
  });

  it('a conflicting import writes nothing (no base, no record, no outbox row)', async () => {
    const bundle = await bundleOf();
    // A base whose `latestVersion` is not its newest record's: a conflict of the bundle itself.
    bundle.policies[0]!.latestVersion = 7;
    const before = await env.sql('registry_outbox').count({ n: '*' });
    const clash = as('admin', { orgId: 'import-clash' });
    await env.call(S.policyCreate, { principal: clash, name: 'Already here', rule: ADULT_RULE }, PolicyRecord);
    const outboxAfterCreate = await env.sql('registry_outbox').count({ n: '*' });
    expect(Number(outboxAfterCreate[0]!.n)).toBe(Number(before[0]!.n) + 1);
    const err = await env.fail(ImportSubject, { principal: clash, bundle, dryRun: false });
    expect(err.code).toBe('conflict');
    expect(err.errors?.[0]).toMatchObject({ code: 'import_conflict', path: bundle.policies[0]!.baseId });
    expect(await env.sql('registry_bases').where({ org_id: 'import-clash' }).count({ n: '*' })).toEqual([{ n: '1' }]);
    expect(await env.sql('registry_outbox').count({ n: '*' })).toEqual(outboxAfterCreate);
  });

  it('takes names as create does: two policies and two groups of one name, into an org holding a third, all created', async () => {
    const from = as('admin', { orgId: 'twins-source' });
    const into = as('admin', { orgId: 'twins-target' });
    for (const org of [from, from, into]) {
      const p = await env.call(S.policyCreate, { principal: org, name: 'Driving licence', rule: ADULT_RULE }, PolicyRecord);
      await env.call(S.policyUpdate, { principal: org, policyId: p.policyId, status: 'published' }, PolicyUpdateReply);
    }
    for (const org of [from, from, into]) await env.call(S.groupCreate, { principal: org, name: 'Motor' }, Group);
    const bundle = await bundleOf(from, true);
    expect(bundle.policies.map((b) => b.records[0]!.name)).toEqual(['Driving licence', 'Driving licence']);

    const done = await env.call(ImportSubject, { principal: into, bundle, dryRun: false }, ImportReply);
    expect(done).toMatchObject({ created: 4, unchanged: 0, conflicts: 0 });
    expect(await env.sql('registry_bases').where({ org_id: 'twins-target' }).count({ n: '*' })).toEqual([{ n: '3' }]);
    expect(await env.sql('registry_groups').where({ org_id: 'twins-target', name: 'Motor' }).count({ n: '*' })).toEqual([{ n: '3' }]);
    // The origin, not the name, tells a second import what it has: every item is unchanged.
    const again = await env.call(ImportSubject, { principal: into, bundle, dryRun: false }, ImportReply);
    expect(again).toMatchObject({ created: 0, unchanged: 4, conflicts: 0 });
  });
});

describe('bundles that cannot be stored as they are', () => {
  const from = as('admin', { orgId: 'dup-source' });
  const id = (n: number) => `0190a0b0-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;

  /** A bundle of one published policy base, exported from a real org. */
  async function oneBase(name: string) {
    const p = await env.call(S.policyCreate, { principal: from, name, rule: ADULT_RULE }, PolicyRecord);
    await env.call(S.policyUpdate, { principal: from, policyId: p.policyId, status: 'published' }, PolicyUpdateReply);
    const bundle = await bundleOf(from);
    return { ...bundle, policies: bundle.policies.filter((b) => b.baseId === p.baseId) };
  }

  it('refuses a record id used twice with 400 naming it and where, and imports nothing (was 500)', async () => {
    const bundle = await oneBase('Dup records');
    const [base] = bundle.policies;
    const twin: BundleBase = { ...base!, baseId: id(1), records: base!.records.map((r) => ({ ...r, name: 'Twin' })) };
    const into = as('admin', { orgId: 'dup-target-1' });
    const err = await env.fail(ImportSubject, { principal: into, bundle: { ...bundle, policies: [base, twin] }, dryRun: false });
    expect([err.code, err.status]).toEqual(['validation_failed', 400]);
    expect(err.errors).toEqual([
      {
        code: 'duplicate_id',
        message: `record id \`${base!.records[0]!.recordId}\` is used twice (first at \`policies.0.records.0.recordId\`)`,
        path: 'policies.1.records.0.recordId',
      },
    ]);
    expect(await env.sql('registry_bases').where({ org_id: 'dup-target-1' }).count({ n: '*' })).toEqual([{ n: '0' }]);
    // a dry run says the same
    expect((await env.fail(ImportSubject, { principal: into, bundle: { ...bundle, policies: [base, twin] }, dryRun: true })).code).toBe(
      'validation_failed',
    );
  });

  it('refuses a group listing one member twice with 400 naming it (was 500)', async () => {
    const bundle = await oneBase('Dup member');
    const baseId = bundle.policies[0]!.baseId;
    const group = {
      groupId: id(2),
      name: 'Twice',
      description: '',
      createdBy: 'admin',
      createdAt: new Date().toISOString(),
      members: [
        { memberId: baseId, memberType: 'policy' },
        { memberId: baseId, memberType: 'policy' },
      ],
    };
    const into = as('admin', { orgId: 'dup-target-2' });
    const err = await env.fail(ImportSubject, { principal: into, bundle: { ...bundle, groups: [group] }, dryRun: false });
    expect([err.code, err.errors]).toEqual([
      'validation_failed',
      [{ code: 'duplicate_member', message: `group \`${id(2)}\` lists member \`${baseId}\` twice`, path: 'groups.0.members.1.memberId' }],
    ]);
    expect(await env.sql('registry_groups').where({ org_id: 'dup-target-2' }).count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  it('refuses version numbers that leave no room to publish (past 1,000,000,000; 2³¹ was a 500), and imports nothing', async () => {
    const bundle = await oneBase('Huge version');
    const [base] = bundle.policies;
    const into = as('admin', { orgId: 'huge-target' });
    for (const v of [2 ** 31, 2 ** 31 - 1, 1_000_000_001]) {
      const huge = { ...base!, latestVersion: v, records: base!.records.map((r) => ({ ...r, version: v })) };
      const err = await env.fail(ImportSubject, { principal: into, bundle: { ...bundle, policies: [huge] }, dryRun: false });
      expect([err.code, err.status], String(v)).toEqual(['bad_request', 400]);
      expect(
        err.errors?.map((e) => e.path),
        String(v),
      ).toEqual(expect.arrayContaining(['bundle.policies.0.latestVersion']));
    }
    expect(await env.sql('registry_bases').where({ org_id: 'huge-target' }).count({ n: '*' })).toEqual([{ n: '0' }]);
    // the highest importable version still leaves room to publish on top
    const top = { ...base!, latestVersion: 1_000_000_000, records: base!.records.map((r) => ({ ...r, version: 1_000_000_000 })) };
    const done = await env.call(ImportSubject, { principal: into, bundle: { ...bundle, policies: [top] }, dryRun: false }, ImportReply);
    const versionId = (await env.call(S.policyGet, { principal: into, policyId: done.items[0]!.targetId! }, PolicyRecord)).policyId;
    const draft = (await env.call(S.policyDraft, { principal: into, policyId: versionId }, PolicyDraftReply)).record;
    const next = await env.call(S.policyUpdate, { principal: into, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply);
    expect(next.record.version).toBe(1_000_000_001);
  });

  it('a base already at the highest version answers 409 on publish, not 500', async () => {
    const p = await env.call(S.policyCreate, { principal: from, name: 'At the top', rule: ADULT_RULE }, PolicyRecord);
    // as an import of an older version left its base
    await env
      .sql('registry_bases')
      .where({ id: p.baseId })
      .update({ latest_version: 2 ** 31 - 1 });
    const err = await env.fail(S.policyUpdate, { principal: from, policyId: p.policyId, status: 'published' });
    expect([err.code, err.status]).toEqual(['conflict', 409]);
    expect(err.message).toContain('the highest a version can be');
  });
});

describe('imported versions are checked and reviewed like published ones', () => {
  const from = as('admin', { orgId: 'checked-source' });

  async function exported(name: string, rule: string, tests: unknown[] = [], publish = true) {
    const p = await env.call(S.policyCreate, { principal: from, name, rule: ADULT_RULE }, PolicyRecord);
    if (publish) await env.call(S.policyUpdate, { principal: from, policyId: p.policyId, status: 'published' }, PolicyUpdateReply);
    const bundle = await bundleOf(from);
    const base = bundle.policies.find((b) => b.baseId === p.baseId)!;
    // A bundle edited by hand (or made elsewhere): the versions' content is whatever it says.
    return { ...bundle, policies: [{ ...base, records: base.records.map((r) => ({ ...r, rule, tests })) }] };
  }

  it('runs the publish checks on every published version it would create: 422 with every reason and its path, nothing imported (was: imported)', async () => {
    const broken = await exported('Broken import', 'A **driver** gets a licence if the __age__ of the **driver** is gold.');
    const failing = await exported('Failing import', ADULT_RULE, [{ name: 'minor', data: { applicant: { age: 3 } }, expect: true }]);
    const into = as('admin', { orgId: 'checked-target' });
    const bundle = { ...broken, policies: [...broken.policies, ...failing.policies] };
    const err = await env.fail(ImportSubject, { principal: into, bundle, dryRun: false });
    expect([err.status, err.code]).toEqual([422, 'cannot_publish']);
    expect(err.errors).toEqual([
      expect.objectContaining({ code: 'parse_error', path: 'policies.0.records.0.rule' }),
      expect.objectContaining({
        code: 'test_failed',
        path: 'policies.1.records.0.tests.0',
        message: expect.stringMatching(/^policies\.1\.records\.0: test `minor`/),
      }),
    ]);
    expect(await env.sql('registry_bases').where({ org_id: 'checked-target' }).count({ n: '*' })).toEqual([{ n: '0' }]);
    expect(await env.sql('registry_outbox').whereRaw("payload->>'orgId' = ?", ['checked-target']).count({ n: '*' })).toEqual([{ n: '0' }]);
    // drafts are imported as they are: they are checked when they are published
    const draftOnly = await exported('Draft import', 'not a rule at all', [], false);
    expect((await env.call(ImportSubject, { principal: into, bundle: draftOnly, dryRun: false }, ImportReply)).created).toBe(1);
  });

  it('in a governed org, a base with published versions to create is a conflict (409; in a dry run `conflict`), drafts import', async () => {
    const published = await exported('Governed import', ADULT_RULE);
    const into = as('admin', { orgId: 'governed-target' });
    const plan = await env.call(ImportSubject, { principal: into, bundle: published, dryRun: true, governed: true }, ImportReply);
    expect(plan.items).toEqual([
      expect.objectContaining({
        action: 'conflict',
        reason: 'org `governed-target` publishes through review only: a published version cannot be imported into it',
      }),
    ]);
    const err = await env.fail(ImportSubject, { principal: into, bundle: published, dryRun: false, governed: true });
    expect([err.status, err.code]).toEqual([409, 'conflict']);
    expect(err.errors).toEqual([expect.objectContaining({ code: 'import_conflict', path: published.policies[0]!.baseId })]);
    expect(await env.sql('registry_bases').where({ org_id: 'governed-target' }).count({ n: '*' })).toEqual([{ n: '0' }]);
    const draftOnly = await exported('Governed draft import', ADULT_RULE, [], false);
    const done = await env.call(ImportSubject, { principal: into, bundle: draftOnly, dryRun: false, governed: true }, ImportReply);
    expect(done.created).toBe(1);
    const draft = await env.call(S.policyGet, { principal: into, policyId: done.items[0]!.targetId! }, PolicyRecord);
    expect([draft.status, draft.version]).toEqual(['draft', null]);
    // the same bundle into an org without governance imports its version
    const open = await env.call(
      ImportSubject,
      { principal: as('admin', { orgId: 'open-target' }), bundle: published, dryRun: false },
      ImportReply,
    );
    expect(open.created).toBe(1);
  });
});

describe('the timeline travels with the bundle', () => {
  const from = as('admin', { orgId: 'timeline-source' });
  const HOUR = 3600_000;

  async function publishNext(baseId: string, effectiveFrom?: string): Promise<PolicyRecord> {
    const d = (await env.call(S.policyDraft, { principal: from, policyId: baseId }, PolicyDraftReply)).record;
    const extra = effectiveFrom === undefined ? {} : { effectiveFrom };
    return (await env.call(S.policyUpdate, { principal: from, policyId: d.policyId, status: 'published', ...extra }, PolicyUpdateReply))
      .record;
  }

  /** A base at v1 (now), v2 scheduled in an hour, v3 scheduled in two hours and cancelled, v4 a rollback to v1 (now). */
  async function timedBundle(name: string) {
    const p = await env.call(S.policyCreate, { principal: from, name, rule: ADULT_RULE }, PolicyRecord);
    await env.call(S.policyUpdate, { principal: from, policyId: p.policyId, status: 'published' }, PolicyUpdateReply);
    const later = Date.now() + HOUR;
    await publishNext(p.baseId, new Date(later).toISOString());
    await publishNext(p.baseId, new Date(later + HOUR).toISOString());
    await env.call(S.policyScheduleCancel, { principal: from, baseId: p.baseId, version: 3 }, PolicyRecord);
    await env.call(S.policyRollback, { principal: from, baseId: p.baseId, toVersion: 1 }, PolicyRecord);
    const bundle = await bundleOf(from);
    return { bundle: { ...bundle, policies: bundle.policies.filter((b) => b.baseId === p.baseId) }, sourceId: p.baseId, later };
  }

  const intervals = async (principal: typeof from, baseId: string) =>
    (await env.call(S.policyVersions, { principal, policyId: baseId }, PolicyRecordPage)).items.map((r) => [
      r.version,
      r.effectiveFrom,
      r.effectiveUntil,
      r.cancelled,
      r.rollbackOf,
    ]);

  it('a scheduled version stays scheduled, a cancelled one cancelled, a rollback keeps rollbackOf; runs pick as in the source org', async () => {
    const { bundle, sourceId, later } = await timedBundle('Timed import');
    const into = as('admin', { orgId: 'timeline-target' });
    const done = await env.call(ImportSubject, { principal: into, bundle, dryRun: false }, ImportReply);
    const baseId = done.items[0]!.targetId!;

    // the versions' intervals are the source's, version by version
    expect(await intervals(into, baseId)).toEqual(await intervals(from, sourceId));
    const rows = await env.sql('registry_version_timeline').where({ base_id: baseId }).orderBy('version');
    expect(
      rows.map((r: { version: number; rollback_of: number | null; cancelled_by: string | null }) => [
        r.version,
        r.rollback_of,
        r.cancelled_by,
      ]),
    ).toEqual([
      [2, null, null],
      [3, null, from.userId],
      [4, 1, null],
    ]);

    // the runnable index the execution service reads: v4 in effect now, v2 waiting on the timeline
    const entry = RunnableBaseEntry.parse(JSON.parse((await env.redis.get(runnableBaseKey(env.prefix, 'policy', baseId)))!));
    expect(entry).toMatchObject({ state: 'live', version: 4 });
    expect(entry.state === 'live' && entry.timeline?.map((e) => e.version)).toEqual([1, 4, 2]);
    const resolve = (at?: number) =>
      env.call(
        S.policyResolve,
        { principal: into, baseId, ...(at !== undefined ? { at: new Date(at).toISOString() } : {}) },
        LivePolicyRecordEntry,
      );
    expect((await resolve()).version).toBe(4);
    expect((await resolve(later - 1)).version).toBe(4);
    expect((await resolve(later)).version).toBe(2);
    expect((await resolve(later + 2 * HOUR)).version).toBe(2);

    // an SDK runtime's snapshot holds the version in effect and the one ahead
    const snapshot = await env.call(
      RunnableSubject.snapshot,
      { principal: into, selection: { bases: [baseId] }, limit: 10 },
      RunnableSnapshotPage,
    );
    const base = snapshot.bases[0]!;
    expect([base.current.version, base.timeline?.map((e) => e.version), base.scheduled?.map((r) => r.version)]).toEqual([4, [4, 2], [2]]);

    // the bundle exported again from the target says the same
    const again = (await env.call(ExportSubject, { principal: into, section: 'policies' }, ExportPage)).items as BundleBase[];
    const strip = (records: BundleBase['records']) =>
      records.map((r) => ({
        version: r.version,
        effectiveFrom: r.effectiveFrom,
        cancelled: r.cancelled,
        cancelledAt: r.cancelledAt,
        rollbackOf: r.rollbackOf,
      }));
    expect(strip(again[0]!.records)).toEqual(strip(bundle.policies[0]!.records));
  });

  it('a past effectiveFrom keeps its instant: as-of runs answer as in the source org', async () => {
    const { bundle } = await timedBundle('Timed past import');
    const [base] = bundle.policies;
    const v1At = Date.parse(base!.records[0]!.publishedAt!);
    const past = new Date(v1At - 2 * HOUR);
    // as a bundle exported after v2's instant passed: v2 took effect before v1 was published here
    const passed = { ...base!, records: base!.records.map((r) => (r.version === 2 ? { ...r, effectiveFrom: past.toISOString() } : r)) };
    const into = as('admin', { orgId: 'timeline-past-target' });
    const done = await env.call(ImportSubject, { principal: into, bundle: { ...bundle, policies: [passed] }, dryRun: false }, ImportReply);
    const baseId = done.items[0]!.targetId!;
    const at = async (t: number) =>
      (await env.call(S.policyResolve, { principal: into, baseId, at: new Date(t).toISOString() }, LivePolicyRecordEntry)).version;
    expect(await at(past.getTime())).toBe(2);
    expect(await at(v1At)).toBe(1);
    expect(await at(Date.now())).toBe(4);
    expect((await env.fail(S.policyResolve, { principal: into, baseId, at: new Date(past.getTime() - 1).toISOString() })).code).toBe(
      'not_found',
    );
  });

  it('refuses a bad timeline with 400 naming the record, and writes nothing (dry run too)', async () => {
    const { bundle } = await timedBundle('Timed bad import');
    const [base] = bundle.policies;
    const into = as('admin', { orgId: 'timeline-bad-target' });
    const withRecord = (j: number, patch: Record<string, unknown>) => ({
      ...bundle,
      policies: [{ ...base!, records: base!.records.map((r, k) => (k === j ? { ...r, ...patch } : r)) }],
    });
    for (const [rollbackOf, j] of [
      [9, 3],
      [4, 3],
      [1, 0],
    ] as const) {
      for (const dryRun of [false, true]) {
        const err = await env.fail(ImportSubject, { principal: into, bundle: withRecord(j, { rollbackOf }), dryRun });
        expect([err.status, err.code], `rollbackOf ${rollbackOf}`).toEqual([400, 'validation_failed']);
        expect(err.errors).toEqual([
          expect.objectContaining({
            code: 'invalid_rollback',
            path: `policies.0.records.${j}.rollbackOf`,
            message: expect.stringContaining(`record \`${base!.records[j]!.recordId}\``),
          }),
        ]);
      }
    }
    for (const patch of [
      { effectiveFrom: 'next tuesday' },
      { effectiveFrom: '2026-13-40T00:00:00Z' },
      { cancelled: true },
      { cancelledAt: new Date().toISOString() },
    ]) {
      const err = await env.fail(ImportSubject, { principal: into, bundle: withRecord(1, patch), dryRun: false });
      expect([err.status, err.code], JSON.stringify(patch)).toEqual([400, 'bad_request']);
      expect(err.errors?.map((e) => e.path).join(' '), JSON.stringify(patch)).toContain('bundle.policies.0.records.1');
    }
    // a draft has no place on the timeline
    const d = (await env.call(S.policyDraft, { principal: from, policyId: base!.baseId }, PolicyDraftReply)).record;
    const withDraft = (await bundleOf(from)).policies.find((b) => b.baseId === base!.baseId)!;
    expect(withDraft.records.at(-1)).toMatchObject({ recordId: d.policyId, status: 'draft' });
    const draftBundle = {
      ...bundle,
      policies: [
        {
          ...withDraft,
          records: withDraft.records.map((r) => (r.status === 'draft' ? { ...r, effectiveFrom: new Date().toISOString() } : r)),
        },
      ],
    };
    const err = await env.fail(ImportSubject, { principal: into, bundle: draftBundle, dryRun: false });
    expect([err.status, err.code]).toEqual([400, 'bad_request']);
    expect(await env.sql('registry_bases').where({ org_id: 'timeline-bad-target' }).count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  it('refuses a base with more versions waiting for their instant than a publish allows (400 naming it), and writes nothing', async () => {
    const { bundle, later } = await timedBundle('Timed crowded import');
    const [base] = bundle.policies;
    const last = base!.records.at(-1)!;
    const waiting = (count: number) =>
      Array.from({ length: count }, (_, k) => ({
        ...last,
        recordId: randomUUID(),
        version: last.version! + 1 + k,
        basedOnVersion: last.version! + k,
        effectiveFrom: new Date(later + (k + 1) * HOUR).toISOString(),
        rollbackOf: undefined,
      }));
    // v2 already waits: 20 more make 21
    const crowded = { ...base!, records: [...base!.records, ...waiting(20)], latestVersion: last.version! + 20 };
    const into = as('admin', { orgId: 'timeline-crowded-target' });
    for (const dryRun of [false, true]) {
      const err = await env.fail(ImportSubject, { principal: into, bundle: { ...bundle, policies: [crowded] }, dryRun });
      expect([err.status, err.code]).toEqual([400, 'validation_failed']);
      expect(err.errors).toEqual([
        {
          code: 'too_many_schedules',
          message: `base \`${base!.baseId}\` has 21 versions waiting for their instant; a base may have at most 20`,
          path: 'policies.0.records',
        },
      ]);
    }
    expect(await env.sql('registry_bases').where({ org_id: 'timeline-crowded-target' }).count({ n: '*' })).toEqual([{ n: '0' }]);
    // 20 in all import, and the next scheduled publish there is refused as in the source org
    const full = { ...base!, records: [...base!.records, ...waiting(19)], latestVersion: last.version! + 19 };
    const done = await env.call(ImportSubject, { principal: into, bundle: { ...bundle, policies: [full] }, dryRun: false }, ImportReply);
    const baseId = done.items[0]!.targetId!;
    const d = (await env.call(S.policyDraft, { principal: into, policyId: baseId }, PolicyDraftReply)).record;
    const refused = await env.fail(S.policyUpdate, {
      principal: into,
      policyId: d.policyId,
      status: 'published',
      effectiveFrom: new Date(later + 100 * HOUR).toISOString(),
    });
    expect([refused.status, refused.code]).toEqual([409, 'conflict']);
  });

  it('a bundle without timeline fields (written before they existed) imports as before', async () => {
    const { bundle } = await timedBundle('Timed old import');
    const old = {
      ...bundle,
      policies: bundle.policies.map((b) => ({
        ...b,
        records: b.records.map(({ effectiveFrom: _e, cancelled: _c, cancelledAt: _a, cancelledBy: _b, rollbackOf: _r, ...rest }) => rest),
      })),
    };
    const into = as('admin', { orgId: 'timeline-old-target' });
    const done = await env.call(ImportSubject, { principal: into, bundle: old, dryRun: false }, ImportReply);
    expect(done.created).toBe(1);
    expect(await env.sql('registry_version_timeline').where({ base_id: done.items[0]!.targetId! }).count({ n: '*' })).toEqual([{ n: '0' }]);
  });
});
