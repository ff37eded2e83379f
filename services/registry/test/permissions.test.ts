import {
  FlowDraftReply,
  FlowRecord,
  Group,
  GroupMember,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject as S,
  type Principal,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ADULT_RULE, as, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

type Outcome = 'ok' | 'forbidden' | 'not_found' | 'validation_failed';
const callers: Record<string, Principal> = {
  viewer: as('viewer'),
  editor: as('editor'),
  publisher: as('publisher'),
  admin: as('admin'),
  auditor: as('auditor'),
  orgB: as('admin', { orgId: 'other', userId: 'intruder' }),
};
const owner = as('editor', { userId: 'owner' });
const boss = as('admin', { userId: 'boss' });

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

/** A published policy base owned by `owner`, plus its fresh draft. */
async function policyFixture() {
  const draft = await env.call(S.policyCreate, { principal: owner, name: 'Matrix', rule: ADULT_RULE }, PolicyRecord);
  const v1 = (await env.call(S.policyUpdate, { principal: boss, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply)).record;
  const next = (await env.call(S.policyDraft, { principal: owner, policyId: v1.policyId }, PolicyDraftReply)).record;
  return { versionId: v1.policyId, draftId: next.policyId, baseId: v1.baseId };
}

const flowDefinition = (baseId: string) => ({
  start: 'a',
  nodes: {
    a: { type: 'policy', baseId, onTrue: 'yes', onFalse: 'no' },
    yes: { type: 'return', value: true },
    no: { type: 'return', value: false },
  },
});

async function flowFixture() {
  const policy = await policyFixture();
  const draft = await env.call(
    S.flowCreate,
    { principal: owner, name: 'Matrix flow', definition: flowDefinition(policy.baseId) },
    FlowRecord,
  );
  const v1 = (
    await env.call(S.flowUpdate, { principal: boss, flowId: draft.flowId, status: 'published' }, z.object({ record: FlowRecord }))
  ).record;
  const next = (await env.call(S.flowDraft, { principal: owner, flowId: v1.flowId }, FlowDraftReply)).record;
  return { versionId: v1.flowId, draftId: next.flowId, baseId: v1.baseId, policyBaseId: policy.baseId };
}

async function groupFixture() {
  const group = await env.call(S.groupCreate, { principal: owner, name: 'Matrix group' }, Group);
  const policy = await policyFixture();
  await env.call(
    S.groupMemberAdd,
    { principal: owner, groupId: group.groupId, memberId: policy.baseId, memberType: 'policy' },
    GroupMember,
  );
  return { groupId: group.groupId, memberBaseId: policy.baseId };
}

const any = z.unknown();
const row = (viewer: Outcome, editor: Outcome, publisher: Outcome, admin: Outcome, auditor: Outcome, orgB: Outcome) => ({
  viewer,
  editor,
  publisher,
  admin,
  auditor,
  orgB,
});

const policyMatrix: Array<
  [string, ReturnType<typeof row>, (p: Principal, f: Awaited<ReturnType<typeof policyFixture>>) => Promise<unknown>]
> = [
  [
    'create',
    row('forbidden', 'ok', 'ok', 'ok', 'forbidden', 'ok'),
    (p) => env.call(S.policyCreate, { principal: p, name: 'x', rule: ADULT_RULE }, any),
  ],
  [
    'get version',
    row('ok', 'ok', 'ok', 'ok', 'ok', 'not_found'),
    (p, f) => env.call(S.policyGet, { principal: p, policyId: f.versionId }, any),
  ],
  [
    'get draft',
    row('ok', 'ok', 'ok', 'ok', 'ok', 'not_found'),
    (p, f) => env.call(S.policyGet, { principal: p, policyId: f.draftId }, any),
  ],
  [
    'versions',
    row('ok', 'ok', 'ok', 'ok', 'ok', 'not_found'),
    (p, f) => env.call(S.policyVersions, { principal: p, policyId: f.versionId }, any),
  ],
  [
    'draft',
    row('forbidden', 'ok', 'ok', 'ok', 'forbidden', 'not_found'),
    (p, f) => env.call(S.policyDraft, { principal: p, policyId: f.versionId }, any),
  ],
  [
    'update draft',
    row('forbidden', 'ok', 'ok', 'ok', 'forbidden', 'not_found'),
    (p, f) => env.call(S.policyUpdate, { principal: p, policyId: f.draftId, status: 'draft', description: 'x' }, any),
  ],
  [
    'publish',
    row('forbidden', 'forbidden', 'ok', 'ok', 'forbidden', 'not_found'),
    (p, f) => env.call(S.policyUpdate, { principal: p, policyId: f.draftId, status: 'published' }, any),
  ],
  ['list', row('ok', 'ok', 'ok', 'ok', 'ok', 'ok'), (p) => env.call(S.policyList, { principal: p }, any)],
  [
    'delete',
    row('forbidden', 'forbidden', 'forbidden', 'ok', 'forbidden', 'not_found'),
    (p, f) => env.call(S.policyDelete, { principal: p, policyId: f.draftId }, any),
  ],
];

const flowMatrix: Array<[string, ReturnType<typeof row>, (p: Principal, f: Awaited<ReturnType<typeof flowFixture>>) => Promise<unknown>]> =
  [
    [
      'create',
      // another org's admin may create flows, but not on this org's policy
      row('forbidden', 'ok', 'ok', 'ok', 'forbidden', 'validation_failed'),
      (p, f) => env.call(S.flowCreate, { principal: p, name: 'x', definition: flowDefinition(f.policyBaseId) }, any),
    ],
    ['get', row('ok', 'ok', 'ok', 'ok', 'ok', 'not_found'), (p, f) => env.call(S.flowGet, { principal: p, flowId: f.versionId }, any)],
    [
      'versions',
      row('ok', 'ok', 'ok', 'ok', 'ok', 'not_found'),
      (p, f) => env.call(S.flowVersions, { principal: p, flowId: f.draftId }, any),
    ],
    [
      'draft',
      row('forbidden', 'ok', 'ok', 'ok', 'forbidden', 'not_found'),
      (p, f) => env.call(S.flowDraft, { principal: p, flowId: f.versionId }, any),
    ],
    [
      'update draft',
      row('forbidden', 'ok', 'ok', 'ok', 'forbidden', 'not_found'),
      (p, f) => env.call(S.flowUpdate, { principal: p, flowId: f.draftId, status: 'draft', description: 'x' }, any),
    ],
    [
      'publish',
      row('forbidden', 'forbidden', 'ok', 'ok', 'forbidden', 'not_found'),
      (p, f) => env.call(S.flowUpdate, { principal: p, flowId: f.draftId, status: 'published' }, any),
    ],
    ['list', row('ok', 'ok', 'ok', 'ok', 'ok', 'ok'), (p) => env.call(S.flowList, { principal: p }, any)],
    [
      'delete',
      row('forbidden', 'forbidden', 'forbidden', 'ok', 'forbidden', 'not_found'),
      (p, f) => env.call(S.flowDelete, { principal: p, flowId: f.versionId }, any),
    ],
  ];

// Group changes belong to the group's creator (`owner`) or an admin: the `editor` column is another editor.
const groupMatrix: Array<
  [string, ReturnType<typeof row>, (p: Principal, f: Awaited<ReturnType<typeof groupFixture>>) => Promise<unknown>]
> = [
  ['create', row('forbidden', 'ok', 'ok', 'ok', 'forbidden', 'ok'), (p) => env.call(S.groupCreate, { principal: p, name: 'g' }, any)],
  ['get', row('ok', 'ok', 'ok', 'ok', 'ok', 'not_found'), (p, f) => env.call(S.groupGet, { principal: p, groupId: f.groupId }, any)],
  ['list', row('ok', 'ok', 'ok', 'ok', 'ok', 'ok'), (p) => env.call(S.groupList, { principal: p }, any)],
  [
    'policies',
    row('ok', 'ok', 'ok', 'ok', 'ok', 'not_found'),
    (p, f) => env.call(S.groupPolicies, { principal: p, groupId: f.groupId }, any),
  ],
  ['flows', row('ok', 'ok', 'ok', 'ok', 'ok', 'not_found'), (p, f) => env.call(S.groupFlows, { principal: p, groupId: f.groupId }, any)],
  [
    'update',
    row('forbidden', 'forbidden', 'forbidden', 'ok', 'forbidden', 'not_found'),
    (p, f) => env.call(S.groupUpdate, { principal: p, groupId: f.groupId, name: 'renamed' }, any),
  ],
  [
    'member add',
    row('forbidden', 'forbidden', 'forbidden', 'ok', 'forbidden', 'not_found'),
    async (p, f) => {
      const other = await policyFixture();
      return env.call(S.groupMemberAdd, { principal: p, groupId: f.groupId, memberId: other.baseId, memberType: 'policy' }, any);
    },
  ],
  [
    'member remove',
    row('forbidden', 'forbidden', 'forbidden', 'ok', 'forbidden', 'not_found'),
    (p, f) => env.call(S.groupMemberRemove, { principal: p, groupId: f.groupId, memberId: f.memberBaseId }, any),
  ],
  [
    'delete',
    row('forbidden', 'forbidden', 'forbidden', 'ok', 'forbidden', 'not_found'),
    (p, f) => env.call(S.groupDelete, { principal: p, groupId: f.groupId }, any),
  ],
];

describe.each([
  ['policy', policyMatrix, policyFixture],
  ['flow', flowMatrix, flowFixture],
  ['group', groupMatrix, groupFixture],
] as const)('%s permission matrix', (_kind, matrix, fixture) => {
  it.each(matrix.map(([op, expected, run]) => [op, expected, run] as const))('%s', async (_op, expected, run) => {
    const got: Record<string, string> = {};
    for (const who of Object.keys(callers))
      got[who] = await outcome((run as (p: Principal, f: unknown) => Promise<unknown>)(callers[who], await fixture()));
    expect(got).toEqual(expected);
  });
});

describe('special cells', () => {
  it('the group creator (an editor) manages its group', async () => {
    const f = await groupFixture();
    expect(await outcome(env.call(S.groupUpdate, { principal: owner, groupId: f.groupId, description: 'mine' }, any))).toBe('ok');
    expect(await outcome(env.call(S.groupMemberRemove, { principal: owner, groupId: f.groupId, memberId: f.memberBaseId }, any))).toBe(
      'ok',
    );
    expect(await outcome(env.call(S.groupDelete, { principal: owner, groupId: f.groupId }, any))).toBe('ok');
  });

  it('an API key never exceeds its scopes: an admin key with only `view` cannot create or delete', async () => {
    const key = as('admin', { scopes: ['view'] });
    const f = await policyFixture();
    expect(await outcome(env.call(S.policyCreate, { principal: key, name: 'x', rule: ADULT_RULE }, any))).toBe('forbidden');
    expect(await outcome(env.call(S.policyDelete, { principal: key, policyId: f.versionId }, any))).toBe('forbidden');
    expect(await outcome(env.call(S.policyGet, { principal: key, policyId: f.versionId }, any))).toBe('ok');
    const publishKey = as('editor', { scopes: ['view', 'edit', 'publish'] });
    expect(await outcome(env.call(S.policyUpdate, { principal: publishKey, policyId: f.draftId, status: 'published' }, any))).toBe(
      'forbidden',
    );
  });

  it('org B sees nothing of org A in lists', async () => {
    await policyFixture();
    await env.call(S.policyCreate, { principal: callers.orgB, name: 'b', rule: ADULT_RULE }, any);
    await env.call(
      S.flowCreate,
      { principal: callers.orgB, name: 'b', definition: { start: 'x', nodes: { x: { type: 'return', value: true } } } },
      any,
    );
    await env.call(S.groupCreate, { principal: callers.orgB, name: 'b' }, any);
    const items = z.object({ items: z.array(z.object({ createdBy: z.string() })) });
    // org B only ever sees what its own user made
    for (const subject of [S.policyList, S.flowList, S.groupList]) {
      const page = await env.call(subject, { principal: callers.orgB, limit: 200 }, items);
      expect(page.items.length).toBeGreaterThan(0);
      expect(new Set(page.items.map((i) => i.createdBy))).toEqual(new Set(['intruder']));
    }
  });

  it('org B cannot add org A bases to its own group', async () => {
    const a = await policyFixture();
    const bGroup = await env.call(S.groupCreate, { principal: callers.orgB, name: 'b' }, Group);
    expect(
      await outcome(
        env.call(S.groupMemberAdd, { principal: callers.orgB, groupId: bGroup.groupId, memberId: a.baseId, memberType: 'policy' }, any),
      ),
    ).toBe('not_found');
  });
});
