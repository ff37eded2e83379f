import {
  FlowDraftReply,
  FlowPublishReviewedReply,
  FlowRecord,
  FlowReviewCheckReply,
  FlowUpdateReply,
  PolicyDraftReply,
  PolicyPublishReviewedReply,
  PolicyRecord,
  PolicyRecordPage,
  PolicyUpdateReply,
  PublishCheckReply,
  RegistrySubject as S,
  runnableRecordKey,
  type FlowDefinition,
} from '@arbiter/contracts';
import { z } from 'zod';
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
const REQUEST = '0190a0b0-0000-7000-8000-0000000000aa';

const create = (extra: Record<string, unknown> = {}) =>
  env.call(S.policyCreate, { principal: editor, name: 'p', rule: ADULT_RULE, ...extra }, PolicyRecord);
const publishReviewed = (recordId: string, expectedContentHash: string, principal = publisher) =>
  env.call(S.policyPublishReviewed, { principal, recordId, expectedContentHash, reviewRequestId: REQUEST }, PolicyPublishReviewedReply);
const versions = async (policyId: string) =>
  (await env.call(S.policyVersions, { principal: editor, policyId, limit: 10 }, PolicyRecordPage)).items.filter(
    (r) => r.status === 'published',
  );

describe('registry.policy.publishReviewed', () => {
  it('records carry a content hash that changes with every edit of publishable content and only then', async () => {
    const d = await create();
    expect(d.contentHash).toMatch(/^[0-9a-f]{64}$/);
    const same = await env.call(S.policyUpdate, { principal: editor, policyId: d.policyId, status: 'draft', name: 'p' }, PolicyUpdateReply);
    expect(same.record.contentHash).toBe(d.contentHash);
    for (const edit of [{ name: 'q' }, { description: 'x' }, { rule: `${ADULT_RULE} ` }, { schema: { type: 'object' } }, { tests: [] }]) {
      const before = (await env.call(S.policyGet, { principal: editor, policyId: d.policyId }, PolicyRecord)).contentHash;
      const after = await env.call(
        S.policyUpdate,
        { principal: editor, policyId: d.policyId, status: 'draft', ...edit },
        PolicyUpdateReply,
      );
      if (JSON.stringify(edit) === '{"tests":[]}') expect(after.record.contentHash).toBe(before);
      else expect(after.record.contentHash).not.toBe(before);
    }
  });

  it('publishes when the hash matches, with the request id in the `published` event; a retry answers the same version', async () => {
    const d = await create();
    const out = await publishReviewed(d.policyId, d.contentHash!);
    expect(out).toMatchObject({ outcome: 'published', record: { policyId: d.policyId, version: 1, publishedBy: 'publisher' } });
    expect(await publishReviewed(d.policyId, d.contentHash!)).toMatchObject({ outcome: 'already_published', record: { version: 1 } });
    expect(await versions(d.policyId)).toHaveLength(1);
    await eventually(async () => {
      const published = (await env.events()).filter((e) => e.kind === 'published' && e.resource.id === d.policyId);
      expect(published).toHaveLength(1);
      expect(published[0]).toMatchObject({ actor: { userId: 'publisher' }, details: { version: 1, requestId: REQUEST } });
    });
  });

  it('a changed draft is refused (409 review_stale) and nothing is written', async () => {
    const d = await create();
    await env.call(S.policyUpdate, { principal: editor, policyId: d.policyId, status: 'draft', description: 'changed' }, PolicyUpdateReply);
    const err = await env.fail(S.policyPublishReviewed, {
      principal: publisher,
      recordId: d.policyId,
      expectedContentHash: d.contentHash,
      reviewRequestId: REQUEST,
    });
    expect([err.status, err.code]).toEqual([409, 'review_stale']);
    expect((await env.call(S.policyGet, { principal: editor, policyId: d.policyId }, PolicyRecord)).status).toBe('draft');
  });

  it('runs the publish checks (422), needs the publish right (403), and answers 404 for another org', async () => {
    const d = await create({ tests: [{ name: 'minor', data: { applicant: { age: 3 } }, expect: true }] });
    const payload = { recordId: d.policyId, expectedContentHash: d.contentHash, reviewRequestId: REQUEST };
    expect((await env.fail(S.policyPublishReviewed, { principal: publisher, ...payload })).code).toBe('cannot_publish');
    expect((await env.fail(S.policyPublishReviewed, { principal: editor, ...payload })).code).toBe('forbidden');
    expect((await env.fail(S.policyPublishReviewed, { principal: as('admin', { orgId: 'other' }), ...payload })).code).toBe('not_found');
    expect(await versions(d.policyId)).toHaveLength(0);
  });
});

describe('registry.{policy,flow}.publishCheck: the publish checks of a draft, nothing published', () => {
  it('lists every reason a publish would be refused, or none, with the content hash checked; a base id means its draft', async () => {
    const d = await create({
      tests: [
        { name: 'minor', data: { applicant: { age: 3 } }, expect: true },
        { name: 'adult', data: { applicant: { age: 30 } }, expect: false },
      ],
    });
    const failing = await env.call(S.policyPublishCheck, { principal: editor, recordId: d.policyId }, PublishCheckReply);
    expect(failing).toEqual({
      contentHash: d.contentHash,
      problems: [expect.objectContaining({ code: 'test_failed' }), expect.objectContaining({ code: 'test_failed' })],
    });
    expect(await versions(d.policyId)).toHaveLength(0);
    const fixed = await env.call(
      S.policyUpdate,
      { principal: editor, policyId: d.policyId, status: 'draft', tests: [] },
      PolicyUpdateReply,
    );
    // passing, the answer says what the saved tests cover (none here: nothing)
    expect(await env.call(S.policyPublishCheck, { principal: editor, recordId: d.baseId }, PublishCheckReply)).toEqual({
      contentHash: fixed.record.contentHash,
      problems: [],
      coverage: expect.objectContaining({ percent: 0 }),
      warnings: [],
    });
    const definition: FlowDefinition = { start: 'r', nodes: { r: { type: 'return', value: true } } };
    const f = await env.call(
      S.flowCreate,
      { principal: editor, name: 'f', definition, tests: [{ name: 't', data: {}, expect: false }] },
      FlowRecord,
    );
    expect((await env.call(S.flowPublishCheck, { principal: editor, recordId: f.flowId }, PublishCheckReply)).problems).toEqual([
      expect.objectContaining({ code: 'test_failed' }),
    ]);
  });

  it('409 for a version, 403 for a viewer, 404 for another org', async () => {
    const d = await create();
    const v1 = await env.call(S.policyUpdate, { principal: publisher, policyId: d.policyId, status: 'published' }, PolicyUpdateReply);
    expect((await env.fail(S.policyPublishCheck, { principal: editor, recordId: v1.record.policyId })).code).toBe('version_immutable');
    const other = await create();
    expect((await env.fail(S.policyPublishCheck, { principal: as('viewer'), recordId: other.policyId })).code).toBe('forbidden');
    expect((await env.fail(S.policyPublishCheck, { principal: as('admin', { orgId: 'other' }), recordId: other.policyId })).code).toBe(
      'not_found',
    );
  });
});

describe('base ids on every verb that acts on a base', () => {
  it('versions, draft, update and delete take a base id: the draft when there is one, else the latest version', async () => {
    const d = await create();
    const v1 = (await env.call(S.policyUpdate, { principal: publisher, policyId: d.baseId, status: 'published' }, PolicyUpdateReply))
      .record;
    expect(v1).toMatchObject({ policyId: d.policyId, version: 1 });
    expect((await env.call(S.policyVersions, { principal: editor, policyId: d.baseId, limit: 10 }, PolicyRecordPage)).items).toHaveLength(
      1,
    );
    // without a draft, an edit by base id reaches the latest version, which is immutable
    expect((await env.fail(S.policyUpdate, { principal: editor, policyId: d.baseId, status: 'draft', name: 'x' })).code).toBe(
      'version_immutable',
    );
    const draft = await env.call(S.policyDraft, { principal: editor, policyId: d.baseId }, PolicyDraftReply);
    expect(draft).toMatchObject({ created: true, record: { basedOnVersion: 1, status: 'draft' } });
    const edited = await env.call(S.policyUpdate, { principal: editor, policyId: d.baseId, status: 'draft', name: 'x' }, PolicyUpdateReply);
    expect(edited.record).toMatchObject({ policyId: draft.record.policyId, name: 'x' });
    const definition: FlowDefinition = { start: 'r', nodes: { r: { type: 'return', value: true } } };
    const f = await env.call(S.flowCreate, { principal: editor, name: 'f', definition }, FlowRecord);
    expect((await env.call(S.flowDraft, { principal: editor, flowId: f.baseId }, FlowDraftReply)).record.flowId).toBe(f.flowId);
    await env.call(S.flowDelete, { principal: as('admin'), flowId: f.baseId }, z.unknown());
    expect((await env.fail(S.flowGet, { principal: editor, flowId: f.flowId })).code).toBe('not_found');
    await env.call(S.policyDelete, { principal: as('admin'), policyId: d.baseId }, z.unknown());
    expect((await env.fail(S.policyVersions, { principal: editor, policyId: d.policyId, limit: 10 })).code).toBe('not_found');
  });
});

describe('a flow published through review runs reviewed text only', () => {
  const FLOW_REQUEST = '0190a0b0-0000-7000-8000-0000000000ab';
  const flowOf = (nodes: Record<string, Record<string, unknown>>) => ({
    start: 'a',
    nodes: { ...nodes, yes: { type: 'return', value: true }, no: { type: 'return', value: false } },
  });
  const node = (ref: Record<string, unknown>, onTrue = 'yes') => ({ type: 'policy', ...ref, onTrue, onFalse: 'no' });
  const createFlow = (definition: unknown) => env.call(S.flowCreate, { principal: editor, name: 'f', definition }, FlowRecord);
  const publishFlow = (f: { flowId: string; contentHash?: string }) =>
    env.call(
      S.flowPublishReviewed,
      { principal: publisher, recordId: f.flowId, expectedContentHash: f.contentHash, reviewRequestId: FLOW_REQUEST },
      FlowPublishReviewedReply,
    );
  const publishPolicy = async (policyId: string) =>
    (await env.call(S.policyUpdate, { principal: publisher, policyId, status: 'published' }, PolicyUpdateReply)).record;

  it('refuses (422 unreviewed_policy, naming each node) a flow whose nodes name a never-published base or a draft record', async () => {
    const draftOnly = await create();
    const f = await createFlow(flowOf({ a: node({ baseId: draftOnly.baseId }, 'b'), b: node({ policyId: draftOnly.policyId }) }));
    const err = await env.fail(S.flowPublishReviewed, {
      principal: publisher,
      recordId: f.flowId,
      expectedContentHash: f.contentHash,
      reviewRequestId: FLOW_REQUEST,
    });
    expect([err.status, err.code]).toEqual([422, 'cannot_publish']);
    expect(err.errors).toEqual([
      {
        code: 'unreviewed_policy',
        message: `node \`a\` runs policy base \`${draftOnly.baseId}\`, which has no published version: publish it through review first`,
        path: 'definition.nodes.a.baseId',
      },
      {
        code: 'unreviewed_policy',
        message: `node \`b\` runs policy \`${draftOnly.policyId}\`, a draft that was never reviewed: name a published version`,
        path: 'definition.nodes.b.policyId',
      },
    ]);
    expect((await env.call(S.flowGet, { principal: editor, flowId: f.flowId }, FlowRecord)).status).toBe('draft');
    // the check the governance service asks before an approval says the same, and nothing for a sound flow
    const check = await env.call(S.flowReviewCheck, { principal: publisher, flowId: f.flowId }, FlowReviewCheckReply);
    expect(check.problems.map((p) => p.path)).toEqual(['definition.nodes.a.baseId', 'definition.nodes.b.policyId']);
    expect((await env.fail(S.flowReviewCheck, { principal: as('admin', { orgId: 'other' }), flowId: f.flowId })).code).toBe('not_found');
    expect((await env.fail(S.flowReviewCheck, { principal: publisher, flowId: 'not-an-id' })).code).toBe('not_found');
  });

  it('pins base nodes to their latest version and runs those: later versions and drafts of the policy change nothing', async () => {
    const p = await create();
    const v1 = await publishPolicy(p.policyId);
    const f = await createFlow(flowOf({ a: node({ baseId: p.baseId }) }));
    expect((await env.call(S.flowReviewCheck, { principal: publisher, flowId: f.flowId }, FlowReviewCheckReply)).problems).toEqual([]);
    const published = await publishFlow(f);
    expect(published.record).toMatchObject({ status: 'published', version: 1, pinnedVersions: { a: 1 } });
    // the definition stays as reviewed; the runnable index has the pinned one
    expect(published.record.definition.nodes.a).not.toHaveProperty('version');
    const entry = JSON.parse((await env.redis.get(runnableRecordKey(env.prefix, 'flow', f.flowId)))!) as { definition: FlowDefinition };
    expect(entry.definition.nodes.a).toMatchObject({ baseId: p.baseId, version: 1 });
    // the policy moves on: v2, then a new draft; the flow version still runs v1
    const d2 = (await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply)).record;
    await publishPolicy(d2.policyId);
    await env.call(S.policyDraft, { principal: editor, policyId: d2.policyId }, PolicyDraftReply);
    await env.call(S.flowResolve, { principal: editor, recordId: f.flowId }, z.unknown());
    const again = JSON.parse((await env.redis.get(runnableRecordKey(env.prefix, 'flow', f.flowId)))!) as { definition: FlowDefinition };
    expect(again.definition.nodes.a).toMatchObject({ version: 1 });
    // a new draft of the flow starts without pins; a retry of the publish answers the same version
    const next = (await env.call(S.flowDraft, { principal: editor, flowId: f.flowId }, FlowDraftReply)).record;
    expect(next).not.toHaveProperty('pinnedVersions');
    expect(await publishFlow(f)).toMatchObject({ outcome: 'already_published', record: { version: 1, pinnedVersions: { a: 1 } } });
    // nodes with a version, or naming a version record, need no pin
    const exact = await createFlow(flowOf({ a: node({ baseId: p.baseId, version: 1 }, 'b'), b: node({ policyId: v1.policyId }) }));
    expect((await publishFlow(exact)).record).toMatchObject({ version: 1, pinnedVersions: {} });
  });

  it('a flow published without review (no governance) keeps following the base, as before', async () => {
    const p = await create();
    const f = await createFlow(flowOf({ a: node({ baseId: p.baseId }) }));
    const v = await env.call(S.flowUpdate, { principal: publisher, flowId: f.flowId, status: 'published' }, FlowUpdateReply);
    expect(v.record.version).toBe(1);
    expect(v.record).not.toHaveProperty('pinnedVersions');
  });
});
