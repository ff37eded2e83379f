import {
  DeleteBaseReply,
  FlowRecord,
  GovernanceSubject as G,
  PolicyDraftReply,
  PolicyRecordPage,
  PolicyUpdateReply,
  RegistrySubject as R,
  ReviewInboxPage,
  ReviewPublishReply,
  ReviewSummariesReply,
  ReviewSummary,
  type Principal,
  type ReviewInboxItem,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADULT_RULE, as, eventually, registryOf, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
let reg: ReturnType<typeof registryOf>;
beforeAll(async () => {
  env = await startTestEnv();
  reg = registryOf(env);
});
afterAll(async () => {
  await env?.close();
});

const editor = as('editor');
const publisher = as('publisher');
const publisher2 = as('publisher', { userId: 'publisher2' });
const admin = as('admin');
const viewer = as('viewer');
const auditor = as('auditor');
const stranger = as('admin', { orgId: 'other', userId: 'stranger' });

const target = (principal: Principal, recordId: string, kind: 'policy' | 'flow' = 'policy') => ({ principal, kind, recordId });
const submit = (p: Principal, id: string, kind: 'policy' | 'flow' = 'policy') => env.call(G.submit, target(p, id, kind), ReviewSummary);
const review = (p: Principal, id: string, kind: 'policy' | 'flow' = 'policy') => env.call(G.get, target(p, id, kind), ReviewSummary);
const approve = (p: Principal, id: string, extra: Record<string, unknown> = {}) =>
  env.call(G.approve, { ...target(p, id), ...extra }, ReviewSummary);
const reject = (p: Principal, id: string, extra: Record<string, unknown> = {}) =>
  env.call(G.reject, { ...target(p, id), ...extra }, ReviewSummary);
const publish = (p: Principal, id: string, extra: Record<string, unknown> = {}, kind: 'policy' | 'flow' = 'policy') =>
  env.call(G.publish, { ...target(p, id, kind), ...extra }, ReviewPublishReply);
const failOf = async (subject: string, payload: unknown) => {
  const err = await env.fail(subject, payload);
  return [err.status, err.code];
};
const versionsOf = async (policyId: string) =>
  (await env.call(R.policyVersions, { principal: admin, policyId, limit: 200 }, PolicyRecordPage)).items.filter(
    (r) => r.status === 'published',
  );

describe('review transitions (governance on)', () => {
  it('a new draft has review state `draft` and no request', async () => {
    const d = await reg.createPolicy(editor);
    expect(await review(viewer, d.policyId)).toEqual({
      kind: 'policy',
      recordId: d.policyId,
      baseId: d.baseId,
      state: 'draft',
      requestId: null,
      requestedBy: null,
      requestedAt: null,
      decidedBy: null,
      decidedAt: null,
      comment: null,
      stale: false,
      checks: null,
      impact: null,
    });
  });

  it('draft → pending_approval → approved → published, with the events, actors and request id', async () => {
    const d = await reg.createPolicy(editor);
    const pending = await submit(editor, d.policyId);
    expect(pending).toMatchObject({ state: 'pending_approval', requestedBy: 'editor', stale: false, decidedBy: null });
    expect(pending.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await failOf(G.submit, target(editor, d.policyId))).toEqual([409, 'conflict']);

    const approved = await approve(publisher, d.policyId, { requestId: pending.requestId, comment: 'looks right' });
    expect(approved).toMatchObject({ state: 'approved', requestId: pending.requestId, decidedBy: 'publisher', comment: 'looks right' });
    expect(await failOf(G.approve, target(publisher2, d.policyId))).toEqual([409, 'conflict']);
    expect(await failOf(G.reject, target(publisher2, d.policyId))).toEqual([409, 'conflict']);
    expect(await failOf(G.submit, target(editor, d.policyId))).toEqual([409, 'conflict']);

    const out = await publish(publisher2, d.policyId, { requestId: pending.requestId });
    expect(out.review).toMatchObject({ state: 'published', requestId: pending.requestId, stale: false });
    expect(out.record).toMatchObject({ status: 'published', version: 1, publishedBy: 'publisher2', baseId: d.baseId });
    expect(await review(viewer, d.policyId)).toMatchObject({ state: 'published', requestId: pending.requestId });
    expect(await failOf(G.publish, target(publisher2, d.policyId))).toEqual([409, 'conflict']);
    expect(await failOf(G.approve, target(publisher2, d.policyId))).toEqual([404, 'not_found']);
    expect(await versionsOf(d.policyId)).toHaveLength(1);

    await eventually(async () => {
      const mine = (await env.events()).filter((e) => e.resource.baseId === d.baseId && e.kind !== 'created');
      expect(mine.map((e) => [e.kind, e.actor.userId, e.details.requestId])).toEqual(
        expect.arrayContaining([
          ['approval requested', 'editor', pending.requestId],
          ['approved', 'publisher', pending.requestId],
          ['published', 'publisher2', pending.requestId],
        ]),
      );
      expect(mine).toHaveLength(3);
    });
  });

  it('pending_approval → rejected; a rejected draft cannot be published, is edited and submitted again', async () => {
    const d = await reg.createPolicy(editor);
    const first = await submit(editor, d.policyId);
    const rejected = await reject(publisher, d.policyId, { comment: 'needs a minimum age of 21' });
    expect(rejected).toMatchObject({ state: 'rejected', decidedBy: 'publisher', comment: 'needs a minimum age of 21', stale: false });
    expect(await failOf(G.publish, target(publisher, d.policyId))).toEqual([409, 'not_approved']);
    expect(await failOf(G.approve, target(publisher, d.policyId))).toEqual([409, 'conflict']);

    await reg.editPolicy(editor, d.policyId, { rule: 'An **applicant** is adult if the __age__ of the **applicant** is at least 21.' });
    expect(await review(viewer, d.policyId)).toMatchObject({ state: 'draft', stale: true, requestId: first.requestId });
    const second = await submit(editor, d.policyId);
    expect(second).toMatchObject({ state: 'pending_approval', stale: false, decidedBy: null, comment: null });
    expect(second.requestId).not.toBe(first.requestId);
    // acting on the request one saw, which is no longer the latest
    expect(await failOf(G.approve, { ...target(publisher, d.policyId), requestId: first.requestId })).toEqual([409, 'conflict']);
    await approve(publisher, d.policyId, { requestId: second.requestId });
    const out = await publish(publisher, d.policyId);
    expect(out.record).toMatchObject({ version: 1, rule: expect.stringContaining('at least 21') });
  });

  it('a rejected draft may be submitted again unchanged', async () => {
    const d = await reg.createPolicy(editor);
    await submit(editor, d.policyId);
    await reject(publisher, d.policyId);
    expect(await submit(editor, d.policyId)).toMatchObject({ state: 'pending_approval' });
  });

  it('approved → edited: the review is stale (state draft), publish answers 409 review_stale, a new approval is needed', async () => {
    const d = await reg.createPolicy(editor);
    await submit(editor, d.policyId);
    await approve(publisher, d.policyId);
    await reg.editPolicy(editor, d.policyId, { description: 'changed after approval' });
    expect(await review(viewer, d.policyId)).toMatchObject({ state: 'draft', stale: true, decidedBy: 'publisher' });
    expect(await failOf(G.publish, target(publisher, d.policyId))).toEqual([409, 'review_stale']);
    expect(await failOf(G.approve, target(publisher, d.policyId))).toEqual([409, 'review_stale']);
    expect(await versionsOf(d.policyId)).toHaveLength(0);
    await submit(editor, d.policyId);
    await approve(publisher, d.policyId);
    expect((await publish(publisher, d.policyId)).record.description).toBe('changed after approval');
  });

  it('pending → edited: stale, approve and reject answer 409 review_stale', async () => {
    const d = await reg.createPolicy(editor);
    await submit(editor, d.policyId);
    await reg.editPolicy(editor, d.policyId, { name: 'renamed' });
    expect(await review(viewer, d.policyId)).toMatchObject({ state: 'draft', stale: true });
    expect(await failOf(G.approve, target(publisher, d.policyId))).toEqual([409, 'review_stale']);
    expect(await failOf(G.reject, target(publisher, d.policyId))).toEqual([409, 'review_stale']);
  });

  it('publish is refused without a request (409 not_approved) and while pending (409 not_approved)', async () => {
    const d = await reg.createPolicy(editor);
    expect(await failOf(G.publish, target(publisher, d.policyId))).toEqual([409, 'not_approved']);
    expect(await failOf(G.approve, target(publisher, d.policyId))).toEqual([409, 'not_approved']);
    await submit(editor, d.policyId);
    expect(await failOf(G.publish, target(publisher, d.policyId))).toEqual([409, 'not_approved']);
  });

  it('submit runs the publish checks: a draft whose saved tests fail is refused (422 with every reason), nothing is submitted', async () => {
    const d = await reg.createPolicy(editor, undefined, {
      tests: [
        { name: 'minor', data: { applicant: { age: 10 } }, expect: true },
        { name: 'adult', data: { applicant: { age: 40 } }, expect: false },
      ],
    });
    const err = await env.fail(G.submit, target(editor, d.policyId));
    expect([err.status, err.code]).toEqual([422, 'cannot_publish']);
    expect(err.errors).toHaveLength(2);
    expect(err.message).toContain('nothing was submitted');
    expect(await review(viewer, d.policyId)).toMatchObject({ state: 'draft', requestId: null, checks: null });
    expect(await failOf(G.approve, target(publisher, d.policyId))).toEqual([409, 'not_approved']);
    const requests = await env.sql('governance_requests').where({ draft_id: d.policyId }).count<{ count: string }[]>('* as count');
    expect(Number(requests[0].count)).toBe(0);
    await reg.editPolicy(editor, d.policyId, { tests: [{ name: 'minor', data: { applicant: { age: 10 } }, expect: false }] });
    // fixed, it is submitted, and the reviewer sees when its checks passed and what its tests covered:
    // the one condition seen false only is half covered
    const pending = await submit(editor, d.policyId);
    expect(pending).toMatchObject({
      state: 'pending_approval',
      checks: { passed: true, checkedAt: expect.any(String), coverage: { conditions: { total: 1, covered: 0 }, percent: 50 } },
    });
    expect(Date.parse(pending.checks!.checkedAt)).toBeLessThanOrEqual(Date.parse(pending.requestedAt!));
    expect(await review(publisher, d.policyId)).toMatchObject({ checks: pending.checks });
    // once the draft changes, the checks said nothing about its content any more
    await reg.editPolicy(editor, d.policyId, { description: 'changed' });
    expect(await review(publisher, d.policyId)).toMatchObject({ state: 'draft', stale: true, checks: null });
  });

  it("keeps the static checks' warnings of a submitted draft in its summary: they never block the submission", async () => {
    const rule =
      'An **applicant** is odd if the __age__ of the **applicant** is greater than 65 and the __age__ of the **applicant** is less than 18.';
    const d = await reg.createPolicy(editor, rule);
    const pending = await submit(editor, d.policyId);
    expect(pending.state).toBe('pending_approval');
    expect(pending.checks?.warnings).toEqual([expect.objectContaining({ check: 'contradiction', severity: 'warning', line: 1 })]);
    expect((await review(viewer, d.policyId)).checks?.warnings).toEqual(pending.checks?.warnings);
  });

  it('publish still runs the publish checks: a flow whose policy was deleted after its approval is refused (422), the review stays approved', async () => {
    const p = await reg.createPolicy(publisher);
    const v1 = await reg.publishPolicy(publisher, p.policyId);
    const definition = {
      start: 'a',
      nodes: {
        a: { type: 'policy', policyId: v1.policyId, onTrue: 'yes', onFalse: 'no' },
        yes: { type: 'return', value: true },
        no: { type: 'return', value: false },
      },
    };
    const f = await env.call(R.flowCreate, { principal: editor, name: 'checked twice', definition }, FlowRecord);
    expect(await submit(editor, f.flowId, 'flow')).toMatchObject({ state: 'pending_approval', checks: { passed: true } });
    await env.call(G.approve, target(publisher, f.flowId, 'flow'), ReviewSummary);
    await env.call(R.policyDelete, { principal: admin, policyId: p.policyId }, DeleteBaseReply);
    const err = await env.fail(G.publish, target(publisher2, f.flowId, 'flow'));
    expect([err.status, err.code]).toEqual([422, 'cannot_publish']);
    expect(err.errors).toEqual([expect.objectContaining({ code: 'unknown_policy' })]);
    expect(await review(viewer, f.flowId, 'flow')).toMatchObject({ state: 'approved' });
  });

  it('a version id answers for the base draft; without a draft 404, unless the version was published through review', async () => {
    const d = await reg.createPolicy(editor);
    await submit(editor, d.policyId);
    await approve(publisher, d.policyId);
    const v1 = (await publish(publisher2, d.policyId)).record;
    expect(await review(viewer, d.policyId)).toMatchObject({ state: 'published' });
    const next = await env.call(R.policyDraft, { principal: editor, policyId: d.policyId }, PolicyDraftReply);
    expect(next.created).toBe(true);
    expect(await review(viewer, d.policyId)).toMatchObject({ recordId: next.record.policyId, state: 'draft', requestId: null });
    expect(v1.version).toBe(1);
    // a version published directly (no review) and without a draft has no review
    const direct = await reg.createPolicy(publisher);
    await env.call(R.policyUpdate, { principal: publisher, policyId: direct.policyId, status: 'published' }, PolicyUpdateReply);
    expect(await failOf(G.get, target(viewer, direct.policyId))).toEqual([404, 'not_found']);
  });

  it('any state → deleted (admin): every review endpoint answers 404 for the deleted base', async () => {
    const d = await reg.createPolicy(editor);
    const pending = await submit(editor, d.policyId);
    await approve(publisher, d.policyId);
    expect(await failOf(G.publish, { ...target(publisher2, d.policyId), requestId: '0190a0b0-0000-7000-8000-0000000000ff' })).toEqual([
      409,
      'conflict',
    ]);
    await env.call(R.policyDelete, { principal: admin, policyId: d.policyId }, DeleteBaseReply);
    for (const subject of [G.get, G.submit, G.approve, G.reject, G.publish]) {
      expect(
        await failOf(subject, {
          ...target(admin, d.policyId),
          ...(subject === G.get || subject === G.submit ? {} : { requestId: pending.requestId }),
        }),
      ).toEqual([404, 'not_found']);
    }
  });

  it('flows go through the same workflow', async () => {
    const definition = { start: 'r', nodes: { r: { type: 'return', value: true } } };
    const f = await env.call(R.flowCreate, { principal: editor, name: 'f', definition }, FlowRecord);
    expect(await submit(editor, f.flowId, 'flow')).toMatchObject({ kind: 'flow', state: 'pending_approval' });
    await env.call(G.approve, target(publisher, f.flowId, 'flow'), ReviewSummary);
    const out = await publish(publisher, f.flowId, {}, 'flow');
    expect(out.record).toMatchObject({ flowId: f.flowId, version: 1, status: 'published' });
    expect(await review(viewer, f.flowId, 'flow')).toMatchObject({ state: 'published' });
  });

  it('a flow whose policy node would run a never-reviewed draft is not approved (422 naming the node) until the policy is published; its version pins it', async () => {
    const p = await reg.createPolicy(editor);
    const definition = {
      start: 'a',
      nodes: {
        a: { type: 'policy', baseId: p.baseId, onTrue: 'yes', onFalse: 'no' },
        yes: { type: 'return', value: true },
        no: { type: 'return', value: false },
      },
    };
    const f = await env.call(R.flowCreate, { principal: editor, name: 'governed flow', definition }, FlowRecord);
    const pending = await submit(editor, f.flowId, 'flow');
    const err = await env.fail(G.approve, target(publisher, f.flowId, 'flow'));
    expect([err.status, err.code]).toEqual([422, 'cannot_publish']);
    expect(err.errors).toEqual([expect.objectContaining({ code: 'unreviewed_policy', path: 'definition.nodes.a.baseId' })]);
    expect(await review(viewer, f.flowId, 'flow')).toMatchObject({ state: 'pending_approval', requestId: pending.requestId });
    // the policy goes through its own review, then the flow is approved and published with its pin
    await submit(editor, p.policyId);
    await approve(publisher, p.policyId);
    await publish(publisher2, p.policyId);
    expect((await env.call(G.approve, target(publisher, f.flowId, 'flow'), ReviewSummary)).state).toBe('approved');
    const out = await publish(publisher2, f.flowId, {}, 'flow');
    expect(out.record).toMatchObject({ version: 1, pinnedVersions: { a: 1 } });
  });

  it('summaries answer the state of several drafts at once, stale ones as draft', async () => {
    const a = await reg.createPolicy(editor);
    const b = await reg.createPolicy(editor);
    await submit(editor, a.policyId);
    const drafts = [a, b].map((r) => ({ recordId: r.policyId, baseId: r.baseId, contentHash: r.contentHash! }));
    const out = await env.call(G.summaries, { principal: viewer, kind: 'policy', drafts }, ReviewSummariesReply);
    expect(out.items.map((s) => s.state)).toEqual(['pending_approval', 'draft']);
    const changed = await env.call(
      G.summaries,
      { principal: viewer, kind: 'policy', drafts: [{ ...drafts[0], contentHash: 'other' }] },
      ReviewSummariesReply,
    );
    expect(changed.items[0]).toMatchObject({ state: 'draft', stale: true });
    // another org sees nothing of them
    const foreign = await env.call(G.summaries, { principal: stranger, kind: 'policy', drafts }, ReviewSummariesReply);
    expect(foreign.items.map((s) => s.requestId)).toEqual([null, null]);
  });
});

describe('the review inbox', () => {
  const org = { orgId: 'inbox' };
  const ed = as('editor', org);
  const pub = as('publisher', org);
  const inbox = (p: Principal, extra: Record<string, unknown> = {}) =>
    env.call(G.inbox, { principal: p, state: 'pending_approval', ...extra }, ReviewInboxPage);

  it('lists the org drafts waiting for approval, oldest first, with name, kind, who asked and when; pages by cursor', async () => {
    const waiting1 = await reg.createPolicy(ed, undefined, { name: 'waits first' });
    const flow = await env.call(
      R.flowCreate,
      { principal: ed, name: 'waiting flow', definition: { start: 'r', nodes: { r: { type: 'return', value: true } } } },
      FlowRecord,
    );
    const rejected = await reg.createPolicy(ed, undefined, { name: 'rejected' });
    const edited = await reg.createPolicy(ed, undefined, { name: 'edited since' });
    const deleted = await reg.createPolicy(ed, undefined, { name: 'deleted' });
    await reg.createPolicy(ed, undefined, { name: 'never submitted' });
    const s1 = await submit(ed, waiting1.policyId);
    const s2 = await submit(ed, flow.flowId, 'flow');
    await submit(ed, rejected.policyId);
    await reject(pub, rejected.policyId);
    await submit(ed, edited.policyId);
    await reg.editPolicy(ed, edited.policyId, { description: 'changed after submitting' });
    await submit(ed, deleted.policyId);
    await env.call(R.policyDelete, { principal: as('admin', org), policyId: deleted.policyId }, DeleteBaseReply);

    const seen: ReviewInboxItem[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await inbox(pub, { limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items);
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined && pages < 20);
    expect(seen).toEqual([
      expect.objectContaining({
        kind: 'policy',
        recordId: waiting1.policyId,
        baseId: waiting1.baseId,
        name: 'waits first',
        state: 'pending_approval',
        requestId: s1.requestId,
        requestedBy: 'editor',
        requestedAt: s1.requestedAt,
        // no saved tests: nothing covered
        checks: { passed: true, checkedAt: expect.any(String), coverage: expect.objectContaining({ percent: 0 }), warnings: [] },
      }),
      expect.objectContaining({
        kind: 'flow',
        recordId: flow.flowId,
        name: 'waiting flow',
        requestId: s2.requestId,
        requestedBy: 'editor',
      }),
    ]);
    const all = await inbox(as('admin', org));
    expect(all.items.map((i) => i.recordId)).toEqual([waiting1.policyId, flow.flowId]);
    expect(all.nextCursor).toBeNull();
    // approved drafts no longer wait
    await approve(pub, waiting1.policyId);
    expect((await inbox(pub)).items.map((i) => i.recordId)).toEqual([flow.flowId]);
  });

  it('publishers and admins only, own org only; a bad cursor is 400', async () => {
    expect(await failOf(G.inbox, { principal: as('editor', org), state: 'pending_approval' })).toEqual([403, 'forbidden']);
    expect(await failOf(G.inbox, { principal: as('viewer', org), state: 'pending_approval' })).toEqual([403, 'forbidden']);
    expect(await failOf(G.inbox, { principal: pub, state: 'pending_approval', cursor: 'bogus!' })).toEqual([400, 'invalid_cursor']);
    expect(await failOf(G.inbox, { principal: pub, state: 'approved' })).toEqual([400, 'bad_request']);
    const other = as('publisher', { orgId: 'inbox-elsewhere' });
    expect(await inbox(other)).toEqual({ items: [], nextCursor: null });
  });
});

describe('separation of duties and permissions', () => {
  it('the requester may not approve, reject or publish their own request, whatever their role', async () => {
    const d = await reg.createPolicy(publisher);
    await submit(publisher, d.policyId);
    expect(await failOf(G.approve, target(publisher, d.policyId))).toEqual([403, 'separation_of_duties']);
    expect(await failOf(G.reject, target(publisher, d.policyId))).toEqual([403, 'separation_of_duties']);
    await approve(admin, d.policyId);
    expect(await failOf(G.publish, target(publisher, d.policyId))).toEqual([403, 'separation_of_duties']);
    const own = await reg.createPolicy(admin);
    await submit(admin, own.policyId);
    expect(await failOf(G.approve, target(admin, own.policyId))).toEqual([403, 'separation_of_duties']);
  });

  it('no author of the content under review since the last version may approve, reject or publish it', async () => {
    // The case: a publisher rewrites the draft of a published policy, someone else submits it, the publisher approves.
    const v1 = await reg.publishPolicy(admin, (await reg.createPolicy(editor)).policyId);
    const d = await reg.draftOf(editor, v1.policyId);
    await reg.editPolicy(publisher, d.policyId, { rule: ADULT_RULE.replace('18', '16') });
    await submit(editor, d.policyId);
    const requestId = (await review(viewer, d.policyId)).requestId;
    for (const subject of [G.approve, G.reject]) {
      const err = await env.fail(subject, target(publisher, d.policyId));
      expect([err.status, err.code]).toEqual([403, 'separation_of_duties']);
      expect(err.message).toBe(
        `\`publisher\` changed policy draft \`${d.policyId}\` since its last published version and may not approve, reject or publish request \`${requestId}\``,
      );
    }
    // a reviewer who did not write it approves; the author may not publish it either
    await approve(publisher2, d.policyId);
    expect(await failOf(G.publish, target(publisher, d.policyId))).toEqual([403, 'separation_of_duties']);
    const v2 = (await publish(admin, d.policyId)).record;
    expect(v2).toMatchObject({ version: 2, authors: ['publisher'] });

    // a new draft starts with no authors: whoever opens it without changing anything may review the changes of others
    const next = await reg.draftOf(publisher, d.policyId);
    expect(next.authors).toEqual([]);
    await reg.editPolicy(editor, next.policyId, { description: 'v3' });
    await reg.editPolicy(publisher2, next.policyId, { name: 'p' }); // changes nothing: not an author
    await submit(editor, next.policyId);
    expect((await approve(publisher2, next.policyId)).state).toBe('approved');

    // the creator of a new base wrote its first content, even when someone else submits it
    const byCreator = await reg.createPolicy(publisher);
    expect(byCreator.authors).toEqual(['publisher']);
    await submit(editor, byCreator.policyId);
    expect(await failOf(G.approve, target(publisher, byCreator.policyId))).toEqual([403, 'separation_of_duties']);
  });

  it('every role: submit needs edit, approve/reject/publish need publish, reading needs view', async () => {
    const d = await reg.createPolicy(editor);
    for (const p of [viewer, auditor]) expect(await failOf(G.submit, target(p, d.policyId))).toEqual([403, 'forbidden']);
    for (const p of [viewer, auditor, editor]) {
      expect(await failOf(G.approve, target(p, d.policyId))).toEqual([403, 'forbidden']);
      expect(await failOf(G.reject, target(p, d.policyId))).toEqual([403, 'forbidden']);
      expect(await failOf(G.publish, target(p, d.policyId))).toEqual([403, 'forbidden']);
    }
    for (const p of [viewer, auditor, editor, publisher, admin]) expect((await review(p, d.policyId)).state).toBe('draft');
    // a key without the publish scope, held by a publisher
    expect(await failOf(G.approve, target(as('publisher', { scopes: ['view', 'edit'] }), d.policyId))).toEqual([403, 'forbidden']);
    expect((await submit(as('publisher', { userId: 'p3' }), d.policyId)).state).toBe('pending_approval');
  });

  it('another org, unknown and malformed ids answer 404; a malformed request 400', async () => {
    const d = await reg.createPolicy(editor);
    await submit(editor, d.policyId);
    for (const subject of [G.get, G.submit, G.approve, G.reject, G.publish]) {
      expect(await failOf(subject, target(stranger, d.policyId))).toEqual([404, 'not_found']);
      expect(await failOf(subject, target(admin, '0190a0b0-0000-7000-8000-00000000dead'))).toEqual([404, 'not_found']);
      expect(await failOf(subject, target(admin, 'not-an-id'))).toEqual([404, 'not_found']);
      expect(await failOf(subject, { principal: admin, recordId: d.policyId })).toEqual([400, 'bad_request']);
    }
    expect(await failOf(G.approve, { ...target(publisher, d.policyId), comment: 'x'.repeat(2001) })).toEqual([400, 'bad_request']);
    expect(await failOf(G.approve, { ...target(publisher, d.policyId), requestId: 'nope' })).toEqual([400, 'bad_request']);
    expect(await review(viewer, d.policyId)).toMatchObject({ state: 'pending_approval' });
  });

  it('submitting a version answers 409 version_immutable', async () => {
    const v = await reg.createPolicy(publisher);
    await env.call(R.policyUpdate, { principal: publisher, policyId: v.policyId, status: 'published' }, PolicyUpdateReply);
    expect(await failOf(G.submit, target(editor, v.policyId))).toEqual([409, 'version_immutable']);
  });
});

describe('races', () => {
  it('two publishers approving the same request at once: one approval, the other 409 conflict', async () => {
    for (let i = 0; i < 10; i++) {
      const d = await reg.createPolicy(editor);
      await submit(editor, d.policyId);
      const results = await Promise.allSettled([approve(publisher, d.policyId), approve(publisher2, d.policyId)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
        code: 'conflict',
        status: 409,
      });
    }
  });

  it('two publishers publishing the same approved request at once make exactly one version', async () => {
    for (let i = 0; i < 10; i++) {
      const d = await reg.createPolicy(editor);
      await submit(editor, d.policyId);
      await approve(admin, d.policyId);
      const results = await Promise.allSettled([publish(publisher, d.policyId), publish(publisher2, d.policyId)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected');
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict', status: 409 });
      expect(await versionsOf(d.policyId)).toHaveLength(1);
    }
  });

  it('an edit racing a publish (200 runs): the publish is refused or the version is exactly the approved content', async () => {
    let published = 0;
    let refused = 0;
    for (let i = 0; i < 200; i++) {
      const d = await reg.createPolicy(editor);
      await submit(editor, d.policyId);
      const approved = await approve(publisher, d.policyId);
      const approvedHash = d.contentHash;
      const [pub] = await Promise.allSettled([
        publish(publisher2, d.policyId),
        reg.editPolicy(editor, d.policyId, {
          rule: `An **applicant** is adult if the __age__ of the **applicant** is at least ${19 + (i % 5)}.`,
        }),
      ]);
      if (pub.status === 'fulfilled') {
        published++;
        expect(pub.value.record.contentHash).toBe(approvedHash);
        expect(pub.value.record).toMatchObject({ rule: d.rule });
        expect(pub.value.review.requestId).toBe(approved.requestId);
      } else {
        refused++;
        expect(pub.reason, String(pub.reason)).toMatchObject({ code: 'review_stale', status: 409 });
        expect(await versionsOf(d.policyId)).toHaveLength(0);
      }
    }
    // Which side wins varies with the load (both do on an idle machine); the invariant above holds either way.
    expect(published + refused).toBe(200);
  }, 180_000);
});

describe('the governance service down', () => {
  it('review requests answer 503 dependency_unavailable, the registry is unaffected, and it recovers', async () => {
    const d = await reg.createPolicy(editor);
    await env.stopGovernance();
    try {
      expect(await failOf(G.get, target(viewer, d.policyId))).toEqual([503, 'dependency_unavailable']);
      expect(await failOf(G.submit, target(editor, d.policyId))).toEqual([503, 'dependency_unavailable']);
      expect((await reg.getPolicy(viewer, d.policyId)).status).toBe('draft');
    } finally {
      await env.startGovernance();
    }
    expect(await submit(editor, d.policyId)).toMatchObject({ state: 'pending_approval' });
  });
});
