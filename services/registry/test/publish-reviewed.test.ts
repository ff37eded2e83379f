import { PolicyPublishReviewedReply, PolicyRecord, PolicyRecordPage, PolicyUpdateReply, RegistrySubject as S } from '@arbiter/contracts';
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

describe('registry.policy.publishReviewed (issue 11)', () => {
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
