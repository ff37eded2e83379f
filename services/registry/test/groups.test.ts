import {
  DeleteBaseReply,
  EmptyReply,
  FlowRecord,
  FlowSummaryPage,
  Group,
  GroupMember,
  GroupPage,
  PolicyRecord,
  PolicySummaryPage,
  PolicyUpdateReply,
  RegistrySubject as S,
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
const colleague = as('editor', { userId: 'colleague' });
const admin = as('admin');

const policy = async (principal = editor, name = 'p') => env.call(S.policyCreate, { principal, name, rule: ADULT_RULE }, PolicyRecord);
const publish = async (id: string) =>
  (await env.call(S.policyUpdate, { principal: admin, policyId: id, status: 'published' }, PolicyUpdateReply)).record;
const add = (groupId: string, memberId: string, memberType: 'policy' | 'flow' = 'policy', principal = editor) =>
  env.call(S.groupMemberAdd, { principal, groupId, memberId, memberType }, GroupMember);
const members = async (groupId: string, principal = editor) =>
  (await env.call(S.groupPolicies, { principal, groupId }, PolicySummaryPage)).items.map((i) => i.baseId);

describe('groups', () => {
  it('creates, gets, updates and lists groups', async () => {
    const g = await env.call(S.groupCreate, { principal: editor, name: 'Lending', description: 'loans' }, Group);
    expect(g).toMatchObject({ name: 'Lending', description: 'loans', createdBy: 'editor' });
    expect(await env.call(S.groupGet, { principal: as('viewer'), groupId: g.groupId }, Group)).toEqual(g);
    const updated = await env.call(S.groupUpdate, { principal: editor, groupId: g.groupId, name: 'Lending 2' }, Group);
    expect(updated).toMatchObject({ name: 'Lending 2', description: 'loans' });
    const page = await env.call(S.groupList, { principal: as('auditor'), q: 'lending' }, GroupPage);
    expect(page.items.map((i) => i.groupId)).toEqual([g.groupId]);
    expect((await env.fail(S.groupUpdate, { principal: editor, groupId: g.groupId })).code).toBe('bad_request');
  });

  it('adds policy and flow bases (201 record), 409 on a repeat, 404 for unknown or wrong-kind bases', async () => {
    const g = await env.call(S.groupCreate, { principal: editor, name: 'Mixed' }, Group);
    const p = await publish((await policy()).policyId);
    const member = await add(g.groupId, p.baseId);
    expect(member).toMatchObject({ groupId: g.groupId, memberId: p.baseId, memberType: 'policy', addedBy: 'editor' });
    expect(
      (await env.fail(S.groupMemberAdd, { principal: editor, groupId: g.groupId, memberId: p.baseId, memberType: 'policy' })).code,
    ).toBe('conflict');
    expect((await env.fail(S.groupMemberAdd, { principal: editor, groupId: g.groupId, memberId: p.baseId, memberType: 'flow' })).code).toBe(
      'not_found',
    );
    expect((await env.fail(S.groupMemberAdd, { principal: editor, groupId: g.groupId, memberId: 'nope', memberType: 'policy' })).code).toBe(
      'not_found',
    );
    const flow = await env.call(
      S.flowCreate,
      { principal: editor, name: 'f', definition: { start: 'x', nodes: { x: { type: 'return', value: true } } } },
      FlowRecord,
    );
    await add(g.groupId, flow.baseId, 'flow');
    expect(await members(g.groupId)).toEqual([p.baseId]);
    expect((await env.call(S.groupFlows, { principal: editor, groupId: g.groupId }, FlowSummaryPage)).items.map((i) => i.baseId)).toEqual([
      flow.baseId,
    ]);
  });

  it('member lists follow visibility: a never-published member shows for its creator only', async () => {
    const g = await env.call(S.groupCreate, { principal: editor, name: 'Visibility' }, Group);
    const mine = await policy(editor, 'private');
    const pub = await publish((await policy(editor, 'public')).policyId);
    await add(g.groupId, mine.baseId);
    await add(g.groupId, pub.baseId);
    expect(new Set(await members(g.groupId, editor))).toEqual(new Set([mine.baseId, pub.baseId]));
    expect(await members(g.groupId, colleague)).toEqual([pub.baseId]);
  });

  it('a deleted base vanishes from group lists but its membership row is kept', async () => {
    const g = await env.call(S.groupCreate, { principal: editor, name: 'Deletion' }, Group);
    const keep = await publish((await policy()).policyId);
    const doomed = await publish((await policy()).policyId);
    await add(g.groupId, keep.baseId);
    await add(g.groupId, doomed.baseId);
    await env.call(S.policyDelete, { principal: admin, policyId: doomed.policyId }, DeleteBaseReply);
    expect(await members(g.groupId)).toEqual([keep.baseId]);
    expect(await env.sql('registry_group_members').where({ group_id: g.groupId }).pluck('base_id')).toEqual(
      expect.arrayContaining([keep.baseId, doomed.baseId]),
    );
    expect((await env.fail(S.groupMemberRemove, { principal: editor, groupId: g.groupId, memberId: doomed.baseId })).code).toBe(
      'not_found',
    );
    expect(
      (await env.fail(S.groupMemberAdd, { principal: editor, groupId: g.groupId, memberId: doomed.baseId, memberType: 'policy' })).code,
    ).toBe('not_found');
  });

  it('removing a member and deleting a group (with its memberships)', async () => {
    const g = await env.call(S.groupCreate, { principal: editor, name: 'Short-lived' }, Group);
    const a = await publish((await policy()).policyId);
    const b = await publish((await policy()).policyId);
    await add(g.groupId, a.baseId);
    await add(g.groupId, b.baseId);
    expect(await env.call(S.groupMemberRemove, { principal: editor, groupId: g.groupId, memberId: a.baseId }, EmptyReply)).toEqual({});
    expect(await members(g.groupId)).toEqual([b.baseId]);
    expect((await env.fail(S.groupMemberRemove, { principal: editor, groupId: g.groupId, memberId: a.baseId })).code).toBe('not_found');
    await env.call(S.groupDelete, { principal: admin, groupId: g.groupId }, EmptyReply);
    expect(await env.sql('registry_group_members').where({ group_id: g.groupId }).count({ n: '*' }).first()).toEqual({ n: '0' });
    for (const subject of [S.groupGet, S.groupPolicies, S.groupFlows, S.groupDelete]) {
      expect((await env.fail(subject, { principal: admin, groupId: g.groupId })).code).toBe('not_found');
    }
    // the bases themselves are untouched
    expect((await env.call(S.policyGet, { principal: editor, policyId: b.policyId }, PolicyRecord)).version).toBe(1);
  });

  it('pages groups with a cursor', async () => {
    const user = as('editor', { userId: 'pager', orgId: 'pages' });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await env.call(S.groupCreate, { principal: user, name: `g${i}` }, Group)).groupId);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: GroupPage = await env.call(S.groupList, { principal: user, limit: 2, ...(cursor ? { cursor } : {}) }, GroupPage);
      seen.push(...page.items.map((i) => i.groupId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(made.reverse());
  });
});
