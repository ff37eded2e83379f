import {
  DeleteBaseReply,
  FlowDraftReply,
  FlowRecord,
  FlowRecordEntry,
  FlowSummaryPage,
  FlowUpdateReply,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject as S,
  RunnableBaseEntry,
  runnableBaseKey,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADULT_RULE, as, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const editor = as('editor');
const publisher = as('publisher');
const admin = as('admin');
const RICH_RULE = 'An **applicant** is rich if the __income__ of the **applicant** is greater than 1000.';

async function publishedPolicy(rule: string, principal = publisher) {
  const draft = await env.call(S.policyCreate, { principal, name: 'p', rule }, PolicyRecord);
  return (await env.call(S.policyUpdate, { principal, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply)).record;
}

/** adult? → rich (pinned version)? → true; otherwise the shared `review` node. */
function definition(adultBase: string, richBase: string, richVersion?: number) {
  return {
    start: 'adult',
    nodes: {
      adult: { type: 'policy', baseId: adultBase, onTrue: 'rich', onFalse: 'review' },
      rich: { type: 'policy', baseId: richBase, ...(richVersion ? { version: richVersion } : {}), onTrue: 'approve', onFalse: 'review' },
      approve: { type: 'return', value: true },
      review: { type: 'custom', outcome: 'manual review' },
    },
  };
}

const tests = [
  { name: 'rich adult', data: { applicant: { age: 30, income: 5000 } }, expect: true },
  { name: 'minor', data: { applicant: { age: 10, income: 5000 } }, expect: 'manual review' },
  { name: 'poor adult', data: { applicant: { age: 30, income: 5 } }, expect: 'manual review' },
];

describe('flows', () => {
  it('creates, publishes with passing tests, versions and drafts like policies', async () => {
    const adult = await publishedPolicy(ADULT_RULE);
    const rich = await publishedPolicy(RICH_RULE);
    const draft = await env.call(
      S.flowCreate,
      { principal: publisher, name: 'Loan', definition: definition(adult.baseId, rich.baseId, 1), tests },
      FlowRecord,
    );
    expect(draft).toMatchObject({ status: 'draft', version: null, name: 'Loan', tests });
    const v1 = await env.call(S.flowUpdate, { principal: publisher, flowId: draft.flowId, status: 'published' }, FlowUpdateReply);
    expect(v1).toMatchObject({ outcome: 'published', record: { flowId: draft.flowId, version: 1, status: 'published' } });
    const d2 = await env.call(S.flowDraft, { principal: editor, flowId: draft.flowId }, FlowDraftReply);
    expect(d2).toMatchObject({ created: true, record: { basedOnVersion: 1, status: 'draft' } });
    // by base id: the latest version, not the newer draft; 404 in another org and as a policy
    expect(await env.call(S.flowGet, { principal: as('viewer'), flowId: draft.baseId }, FlowRecord)).toEqual({ ...v1.record, groups: [] });
    expect((await env.fail(S.flowGet, { principal: as('viewer', { orgId: 'other' }), flowId: draft.baseId })).code).toBe('not_found');
    expect((await env.fail(S.policyGet, { principal: admin, policyId: draft.baseId })).code).toBe('not_found');
    const listed = await env.call(S.flowList, { principal: as('viewer'), q: 'loan' }, FlowSummaryPage);
    expect(listed.items.map((i) => [i.flowId, i.version, i.draftId])).toEqual([[draft.flowId, 1, d2.record.flowId]]);
    expect((await env.fail(S.flowUpdate, { principal: admin, flowId: draft.flowId, status: 'draft', name: 'x' })).code).toBe(
      'version_immutable',
    );
    const base = RunnableBaseEntry.parse(JSON.parse((await env.redis.get(runnableBaseKey(env.prefix, 'flow', draft.baseId)))!));
    expect(base).toMatchObject({ state: 'live', recordId: draft.flowId, version: 1 });
    const entry = await env.call(S.flowResolve, { principal: as('viewer'), baseId: draft.baseId }, FlowRecordEntry);
    expect(entry).toMatchObject({
      state: 'live',
      kind: 'flow',
      recordId: draft.flowId,
      version: 1,
      definition: definition(adult.baseId, rich.baseId, 1),
    });
  });

  it('refuses to save a definition that is not a valid DAG (400 with every problem)', async () => {
    const adult = await publishedPolicy(ADULT_RULE);
    const bad = {
      start: 'a',
      nodes: {
        a: { type: 'policy', baseId: adult.baseId, onTrue: 'a' },
        lost: { type: 'return', value: true },
      },
    };
    const err = await env.fail(S.flowCreate, { principal: editor, name: 'bad', definition: bad });
    expect(err.code).toBe('validation_failed');
    expect(err.errors?.map((e) => [e.code, e.path])).toEqual([
      ['missing_branch', 'nodes.a.onFalse'],
      ['cycle', 'nodes.a'],
      ['unreachable_node', 'nodes.lost'],
    ]);
    const shape = await env.fail(S.flowCreate, {
      principal: editor,
      name: 'bad',
      definition: { start: 'a', nodes: { a: { type: 'jump' } } },
    });
    expect(shape.code).toBe('bad_request');
  });

  it('refuses to save a draft whose nodes do not resolve (deleted, missing, other org, missing version): 400 naming each node', async () => {
    const adult = await publishedPolicy(ADULT_RULE);
    const doomed = await publishedPolicy(RICH_RULE);
    const foreign = await publishedPolicy(RICH_RULE, as('publisher', { orgId: 'other' }));
    await env.call(S.policyDelete, { principal: admin, policyId: doomed.policyId }, DeleteBaseReply);
    const missing = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    const def = {
      start: 'a',
      nodes: {
        a: { type: 'policy', baseId: adult.baseId, version: 7, onTrue: 'b', onFalse: 'no' },
        b: { type: 'policy', baseId: doomed.baseId, onTrue: 'c', onFalse: 'no' },
        c: { type: 'policy', policyId: foreign.policyId, onTrue: 'd', onFalse: 'no' },
        d: { type: 'policy', policyId: missing, onTrue: 'e', onFalse: 'no' },
        e: { type: 'policy', baseId: adult.baseId, version: 1, onTrue: 'f', onFalse: 'no' },
        f: { type: 'policy', policyId: adult.policyId, onTrue: 'yes', onFalse: 'no' },
        yes: { type: 'return', value: true },
        no: { type: 'return', value: false },
      },
    };
    const problems = [
      {
        code: 'unknown_version',
        message: `node \`a\`: policy base \`${adult.baseId}\` has no version 7`,
        path: 'definition.nodes.a.version',
      },
      { code: 'unknown_policy', message: `node \`b\`: policy base \`${doomed.baseId}\` does not exist`, path: 'definition.nodes.b.baseId' },
      { code: 'unknown_policy', message: `node \`c\`: policy \`${foreign.policyId}\` does not exist`, path: 'definition.nodes.c.policyId' },
      { code: 'unknown_policy', message: `node \`d\`: policy \`${missing}\` does not exist`, path: 'definition.nodes.d.policyId' },
    ];
    const created = await env.fail(S.flowCreate, { principal: publisher, name: 'unresolvable', definition: def });
    expect(created.code).toBe('validation_failed');
    expect(created.errors).toEqual(problems);
    expect(await env.sql('registry_records').where({ name: 'unresolvable' }).count({ n: '*' }).first()).toEqual({ n: '0' });
    // the same on a draft update, and the draft is unchanged
    const ok = await env.call(
      S.flowCreate,
      { principal: publisher, name: 'resolvable', definition: definition(adult.baseId, adult.baseId, 1) },
      FlowRecord,
    );
    const updated = await env.fail(S.flowUpdate, { principal: publisher, flowId: ok.flowId, status: 'draft', definition: def });
    expect([updated.code, updated.errors]).toEqual(['validation_failed', problems]);
    expect(await env.call(S.flowGet, { principal: editor, flowId: ok.flowId }, FlowRecord)).toEqual({ ...ok, groups: [] });
    // a draft that names only live policies saves
    const fine = {
      start: 'a',
      nodes: { a: { type: 'policy', policyId: adult.policyId, onTrue: 'yes', onFalse: 'no' }, yes: def.nodes.yes, no: def.nodes.no },
    };
    expect(
      (await env.call(S.flowUpdate, { principal: publisher, flowId: ok.flowId, status: 'draft', definition: fine }, FlowUpdateReply))
        .outcome,
    ).toBe('updated');
  });

  it("422 when a node's policy was deleted after the draft was saved, and when tests fail", async () => {
    const adult = await publishedPolicy(ADULT_RULE);
    const doomed = await publishedPolicy(RICH_RULE);
    const draft = await env.call(
      S.flowCreate,
      { principal: publisher, name: 'orphaned', definition: definition(adult.baseId, doomed.baseId) },
      FlowRecord,
    );
    await env.call(S.policyDelete, { principal: admin, policyId: doomed.policyId }, DeleteBaseReply);
    const err = await env.fail(S.flowUpdate, { principal: publisher, flowId: draft.flowId, status: 'published' });
    expect(err.code).toBe('cannot_publish');
    expect(err.errors).toEqual([
      { code: 'unknown_policy', message: `node \`rich\`: policy base \`${doomed.baseId}\` does not exist`, path: 'nodes.rich' },
    ]);

    const rich = await publishedPolicy(RICH_RULE);
    const wrong = [
      ...tests.slice(0, 1),
      { name: 'wrong', data: { applicant: { age: 30, income: 5 } }, expect: true },
      { name: 'no data', data: {}, expect: false },
    ];
    const failing = await env.call(
      S.flowCreate,
      { principal: publisher, name: 'failing', definition: definition(adult.baseId, rich.baseId), tests: wrong },
      FlowRecord,
    );
    const err2 = await env.fail(S.flowUpdate, { principal: publisher, flowId: failing.flowId, status: 'published' });
    expect(err2.errors).toEqual([
      { code: 'test_failed', message: 'test `wrong`: expected `true`, got `manual review`', path: 'tests.1' },
      { code: 'test_failed', message: expect.stringMatching(/^test `no data`: node `adult`: /), path: 'tests.2' },
    ]);
    expect((await env.call(S.flowGet, { principal: editor, flowId: failing.flowId }, FlowRecord)).status).toBe('draft');
  });

  it('a node on a base runs its current runnable record (the draft when never published)', async () => {
    const draftOnly = await env.call(S.policyCreate, { principal: publisher, name: 'draft only', rule: ADULT_RULE }, PolicyRecord);
    const rich = await publishedPolicy(RICH_RULE);
    const flow = await env.call(
      S.flowCreate,
      { principal: publisher, name: 'uses draft', definition: definition(draftOnly.baseId, rich.baseId), tests },
      FlowRecord,
    );
    expect(
      (await env.call(S.flowUpdate, { principal: publisher, flowId: flow.flowId, status: 'published' }, FlowUpdateReply)).record.version,
    ).toBe(1);
    // a newer policy version changes what the flow's tests see at the next publish
    const v1 = await env.call(
      S.policyUpdate,
      { principal: publisher, policyId: draftOnly.policyId, status: 'published' },
      PolicyUpdateReply,
    );
    const d = await env.call(S.policyDraft, { principal: publisher, policyId: v1.record.policyId }, PolicyDraftReply);
    await env.call(
      S.policyUpdate,
      { principal: publisher, policyId: d.record.policyId, status: 'published', rule: ADULT_RULE.replace('18', '40') },
      PolicyUpdateReply,
    );
    const next = await env.call(S.flowDraft, { principal: publisher, flowId: flow.flowId }, FlowDraftReply);
    const err = await env.fail(S.flowUpdate, { principal: publisher, flowId: next.record.flowId, status: 'published' });
    expect(err.errors).toEqual([
      { code: 'test_failed', message: 'test `rich adult`: expected `true`, got `manual review`', path: 'tests.0' },
    ]);
  });

  it('deleting a flow base hides it everywhere', async () => {
    const flow = await env.call(
      S.flowCreate,
      { principal: editor, name: 'gone flow', definition: { start: 'x', nodes: { x: { type: 'return', value: true } } } },
      FlowRecord,
    );
    await env.call(S.flowDelete, { principal: admin, flowId: flow.flowId }, DeleteBaseReply);
    for (const subject of [S.flowGet, S.flowVersions, S.flowDraft])
      expect((await env.fail(subject, { principal: editor, flowId: flow.flowId })).code).toBe('not_found');
    expect((await env.fail(S.flowResolve, { principal: as('viewer'), recordId: flow.flowId })).code).toBe('not_found');
    expect((await env.call(S.flowList, { principal: editor, q: 'gone flow' }, FlowSummaryPage)).items).toEqual([]);
  });
});

describe('pinned versions PostgreSQL cannot hold', () => {
  it('refuses a node pinned past version 2³¹−1 with 400 before any lookup (was 500)', async () => {
    const adult = await publishedPolicy(ADULT_RULE);
    const err = await env.fail(S.flowCreate, {
      principal: editor,
      name: 'huge pin',
      definition: definition(adult.baseId, adult.baseId, 2 ** 31),
    });
    expect([err.code, err.status]).toEqual(['bad_request', 400]);
    expect(err.errors?.map((e) => e.path)).toEqual(['definition.nodes.rich.version']);
    const fine = await env.fail(S.flowCreate, {
      principal: editor,
      name: 'top pin',
      definition: definition(adult.baseId, adult.baseId, 2 ** 31 - 1),
    });
    expect(fine.errors).toEqual([expect.objectContaining({ code: 'unknown_version', path: 'definition.nodes.rich.version' })]);
  });
});

describe("a flow's decision tables at publish", () => {
  const tier = (hitPolicy: 'unique' | 'first') => ({
    start: 't',
    nodes: {
      t: {
        type: 'table',
        hitPolicy,
        inputs: [{ name: 'age', path: 'applicant.age' }],
        outputs: [{ name: 'tier', default: 'none' }],
        rules: [
          { when: ['>= 18'], then: { tier: 'adult' } },
          { when: ['>= 65'], then: { tier: 'senior' } },
        ],
      },
    },
  });

  it('refuses (cannot_publish) a table whose rules overlap under `unique`, naming both rules and an input both match; saving it is fine', async () => {
    const draft = await env.call(S.flowCreate, { principal: publisher, name: 'overlapping', definition: tier('unique') }, FlowRecord);
    const err = await env.fail(S.flowUpdate, { principal: publisher, flowId: draft.flowId, status: 'published' });
    expect(err.code).toBe('cannot_publish');
    expect(err.errors).toEqual([
      {
        code: 'table_overlap',
        message: 'table `t`: rules 1 and 2 both match one input, which the `unique` hit policy forbids, e.g. {"applicant":{"age":65}}',
        path: 'nodes.t.rules.1',
      },
    ]);
    expect((await env.call(S.flowGet, { principal: editor, flowId: draft.flowId }, FlowRecord)).status).toBe('draft');
  });

  it('publishes the same rules under `first` (a later, narrower rule never chosen is a warning, not a reason)', async () => {
    const draft = await env.call(S.flowCreate, { principal: publisher, name: 'first', definition: tier('first') }, FlowRecord);
    const published = await env.call(S.flowUpdate, { principal: publisher, flowId: draft.flowId, status: 'published' }, FlowUpdateReply);
    expect(published.record.status).toBe('published');
  });
});
