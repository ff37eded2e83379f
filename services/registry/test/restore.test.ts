import {
  type ArbiterEvent,
  DeleteBaseReply,
  FlowRecord,
  FlowSummaryPage,
  PolicyDraftReply,
  PolicyRecord,
  PolicyRecordEntry,
  PolicyRecordPage,
  PolicySummaryPage,
  PolicyUpdateReply,
  RegistrySubject as S,
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

const editor = as('editor');
const publisher = as('publisher');
const admin = as('admin');
const otherAdmin = as('admin', { orgId: 'globex' });

const create = (name: string) => env.call(S.policyCreate, { principal: editor, name, rule: ADULT_RULE }, PolicyRecord);
const publish = (id: string) => env.call(S.policyUpdate, { principal: publisher, policyId: id, status: 'published' }, PolicyUpdateReply);
const remove = (id: string) => env.call(S.policyDelete, { principal: admin, policyId: id }, DeleteBaseReply);
const restore = (id: string, principal = admin) => env.call(S.policyRestore, { principal, id }, PolicyRecord);
const listDeleted = (query: Record<string, unknown> = {}, principal = admin) =>
  env.call(S.policyListDeleted, { principal, limit: 50, ...query }, PolicySummaryPage);

describe('restore', () => {
  it('brings a deleted base back with its versions and draft, by base id or any record id; runs resolve again', async () => {
    const v1 = (await publish((await create('Comeback')).policyId)).record;
    const draft = (await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply)).record;
    await remove(v1.policyId);
    expect((await env.fail(S.policyGet, { principal: admin, policyId: v1.policyId })).code).toBe('not_found');

    const restored = await restore(v1.baseId);
    expect(restored).toMatchObject({ policyId: v1.policyId, baseId: v1.baseId, status: 'published', version: 1 });
    const versions = await env.call(S.policyVersions, { principal: editor, policyId: v1.policyId, limit: 10 }, PolicyRecordPage);
    expect(versions.items.map((r) => [r.policyId, r.status, r.version])).toEqual([
      [draft.policyId, 'draft', null],
      [v1.policyId, 'published', 1],
    ]);
    const entry = await env.call(S.policyResolve, { principal: as('viewer'), baseId: v1.baseId }, PolicyRecordEntry);
    expect(entry).toMatchObject({ state: 'live', recordId: v1.policyId });
    const listed = await env.call(S.policyList, { principal: editor, q: 'Comeback', limit: 10 }, PolicySummaryPage);
    expect(listed.items.map((i) => i.baseId)).toEqual([v1.baseId]);

    // deleted again, restored by the draft's record id
    await remove(draft.policyId);
    expect((await restore(draft.policyId)).policyId).toBe(v1.policyId);
  });

  it('a never-published base comes back as its draft', async () => {
    const draft = await create('Draft only');
    await remove(draft.policyId);
    expect(await restore(draft.policyId)).toMatchObject({ policyId: draft.policyId, status: 'draft', version: null });
  });

  it('409 when the base is not deleted; 404 for unknown, non-UUID and other-org ids; 403 below admin', async () => {
    const live = await create('Alive');
    expect((await env.fail(S.policyRestore, { principal: admin, id: live.policyId })).code).toBe('conflict');
    expect((await env.fail(S.policyRestore, { principal: admin, id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' })).code).toBe('not_found');
    expect((await env.fail(S.policyRestore, { principal: admin, id: 'nope' })).code).toBe('not_found');
    await remove(live.policyId);
    expect((await env.fail(S.policyRestore, { principal: otherAdmin, id: live.policyId })).code).toBe('not_found');
    for (const principal of [editor, publisher, as('viewer')]) {
      expect((await env.fail(S.policyRestore, { principal, id: live.policyId })).code).toBe('forbidden');
    }
    // a flow id is not a policy
    expect((await env.fail(S.flowRestore, { principal: admin, id: live.policyId })).code).toBe('not_found');
    expect((await env.fail(S.policyRestore, { principal: admin, id: live.policyId, extra: 1 })).code).toBe('bad_request');
    await restore(live.policyId);
  });

  it('emits `restored` through the outbox, after `deleted`', async () => {
    const draft = await create('Evented restore');
    await remove(draft.policyId);
    await restore(draft.policyId);
    const events = await eventually(async () => {
      const all = (await env.events()).filter((e: ArbiterEvent) => e.resource.baseId === draft.baseId);
      expect(all.length).toBeGreaterThanOrEqual(3);
      return all;
    });
    expect(events.map((e) => [e.kind, e.resource.type, e.resource.id])).toEqual([
      ['created', 'policy', draft.policyId],
      ['deleted', 'policy', draft.baseId],
      ['restored', 'policy', draft.baseId],
    ]);
    expect(events[2].actor).toMatchObject({ userId: 'admin' });
  });

  it('flows restore the same way', async () => {
    const flow = await env.call(
      S.flowCreate,
      { principal: editor, name: 'gone flow', definition: { start: 'x', nodes: { x: { type: 'return', value: true } } } },
      FlowRecord,
    );
    await env.call(S.flowDelete, { principal: admin, flowId: flow.flowId }, DeleteBaseReply);
    const deleted = await env.call(S.flowListDeleted, { principal: admin, limit: 10, q: 'gone flow' }, FlowSummaryPage);
    expect(deleted.items.map((i) => [i.flowId, i.deletedBy])).toEqual([[flow.flowId, 'admin']]);
    expect(await env.call(S.flowRestore, { principal: admin, id: flow.flowId }, FlowRecord)).toMatchObject({ flowId: flow.flowId });
    expect((await env.fail(S.flowRestore, { principal: admin, id: flow.flowId })).code).toBe('conflict');
  });
});

describe('list of deleted bases', () => {
  it('admins page the org’s deleted bases, most recently deleted first; restored ones leave the list', async () => {
    const a = await create('Trash a');
    const b = await create('Trash b');
    const c = await create('Trash c');
    for (const r of [b, a, c]) await remove(r.policyId);
    const first = await listDeleted({ q: 'Trash', limit: 2 });
    expect(first.items.map((i) => i.policyId)).toEqual([c.policyId, a.policyId]);
    expect(first.items[0]).toMatchObject({ baseId: c.baseId, name: 'Trash c', deletedBy: 'admin', status: 'draft' });
    expect(typeof first.items[0].deletedAt).toBe('string');
    const second = await listDeleted({ q: 'Trash', limit: 2, cursor: first.nextCursor });
    expect(second).toEqual({ items: [expect.objectContaining({ policyId: b.policyId })], nextCursor: null });
    // the ordinary list never shows them
    expect((await env.call(S.policyList, { principal: admin, q: 'Trash', limit: 10 }, PolicySummaryPage)).items).toEqual([]);

    await restore(a.policyId);
    expect((await listDeleted({ q: 'Trash' })).items.map((i) => i.policyId)).toEqual([c.policyId, b.policyId]);
  });

  it('other orgs see none of them; below admin is 403; a bad cursor is 400', async () => {
    const r = await create('Foreign trash');
    await remove(r.policyId);
    expect((await listDeleted({ q: 'Foreign trash' }, otherAdmin)).items).toEqual([]);
    for (const principal of [editor, publisher, as('viewer')]) {
      expect((await env.fail(S.policyListDeleted, { principal, limit: 10 })).code).toBe('forbidden');
    }
    expect((await env.fail(S.policyListDeleted, { principal: admin, limit: 10, cursor: 'garbage' })).code).toBe('invalid_cursor');
  });
});
