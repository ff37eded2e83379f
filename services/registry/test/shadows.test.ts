/**
 * Shadow candidates in the registry over real PostgreSQL, Redis and NATS: stored, mirrored into
 * the base's runnable index entry, audited, refused to viewers and for records of another base, and
 * reported from the counters the execution service writes to Redis.
 */
import {
  DeleteBaseReply,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject as S,
  RunnableBaseEntry,
  ShadowReport,
  ShadowSubject,
  TypedEvent,
  runnableBaseKey,
  shadowCountsKey,
  shadowExamplesKey,
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
const viewer = as('viewer');
const auditor = as('auditor');
const admin = as('admin');

/** A published policy with a draft: its base id, version 1 and the draft's record id. */
async function withDraft(): Promise<{ baseId: string; v1: string; draftId: string }> {
  const created = await env.call(S.policyCreate, { principal: editor, name: 'shadowed', rule: ADULT_RULE }, PolicyRecord);
  await env.call(S.policyUpdate, { principal: admin, policyId: created.policyId, status: 'published' }, PolicyUpdateReply);
  const draft = await env.call(S.policyDraft, { principal: editor, policyId: created.baseId }, PolicyDraftReply);
  return { baseId: created.baseId, v1: created.policyId, draftId: draft.record.policyId };
}
const baseEntry = async (baseId: string) =>
  RunnableBaseEntry.parse(JSON.parse((await env.redis.get(runnableBaseKey(env.prefix, 'policy', baseId)))!));

describe('shadow candidates', () => {
  it('are stored and mirrored into the runnable index entry, audited when started and stopped, and leave it when stopped', async () => {
    const { baseId, draftId } = await withDraft();
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const started = await env.call(
      ShadowSubject.policySet,
      { principal: editor, baseId, recordId: draftId, sampleRate: 0.5, until },
      ShadowReport,
    );
    expect(started).toMatchObject({ baseId, state: 'running', sampleRate: 0.5, until, sampled: 0, examplesHidden: true });
    const entry = await baseEntry(baseId);
    expect(entry.state === 'live' && entry.shadow).toEqual({ recordId: draftId, sampleRate: 0.5, until, since: started.since });

    const stopped = await env.call(ShadowSubject.policyStop, { principal: editor, baseId }, ShadowReport);
    expect(stopped.state).toBe('stopped');
    const after = await baseEntry(baseId);
    expect(after.state === 'live' && 'shadow' in after).toBe(false);
    expect(after.rev).toBeGreaterThan(entry.rev);

    const events = await eventually(async () => {
      const all = (await env.events()).filter((e) => e.resource.baseId === baseId && e.kind.startsWith('shadow'));
      expect(all).toHaveLength(2);
      return all;
    });
    for (const e of events) expect(TypedEvent.parse(e)).toEqual(e);
    expect(events.map((e) => [e.kind, e.details])).toEqual([
      ['shadow started', { recordId: draftId, sampleRate: 0.5, until }],
      ['shadow stopped', { recordId: draftId, sampled: 0, compared: 0, changed: 0 }],
    ]);
  });

  it('reads the counters and, for the audit right only, the examples the execution service wrote', async () => {
    const { baseId, draftId } = await withDraft();
    const started = await env.call(ShadowSubject.policySet, { principal: admin, baseId, recordId: draftId, sampleRate: 1 }, ShadowReport);
    const key = shadowCountsKey(env.prefix, 'policy', baseId, started.since);
    await env.redis.hset(key, { sampled: 5, compared: 4, same: 3, changed: 1, errors: 0, dropped: 1, 't:true→false': 1 });
    const example = {
      at: started.since,
      input: { a: '***' },
      masked: true,
      live: { result: true, errorCode: null },
      candidate: { result: false, errorCode: null },
    };
    await env.redis.lpush(shadowExamplesKey(env.prefix, 'policy', baseId, started.since), JSON.stringify(example));
    const counts = { sampled: 5, compared: 4, same: 3, changed: 1, errors: 0, dropped: 1, transitions: { 'true→false': 1 } };
    expect(await env.call(ShadowSubject.policyGet, { principal: viewer, baseId }, ShadowReport)).toMatchObject({
      ...counts,
      examplesHidden: true,
    });
    const asAuditor = await env.call(ShadowSubject.policyGet, { principal: auditor, baseId }, ShadowReport);
    expect(asAuditor).toMatchObject({ ...counts, examples: [example] });
    expect(asAuditor.examplesHidden).toBeUndefined();
    // Replacing the shadow starts from zero and deletes the old counters.
    const again = await env.call(ShadowSubject.policySet, { principal: admin, baseId, recordId: draftId, sampleRate: 1 }, ShadowReport);
    expect(again).toMatchObject({ sampled: 0, changed: 0 });
    expect(await env.redis.exists(key)).toBe(0);
  });

  it('refuses viewers, records of another base, the current record, a past `until`; 404 for other orgs and deleted bases', async () => {
    const a = await withDraft();
    const b = await withDraft();
    expect(
      (await env.fail(ShadowSubject.policySet, { principal: viewer, baseId: a.baseId, recordId: a.draftId, sampleRate: 1 })).code,
    ).toBe('forbidden');
    expect((await env.fail(ShadowSubject.policyStop, { principal: viewer, baseId: a.baseId })).code).toBe('forbidden');
    expect((await env.fail(ShadowSubject.policySet, { principal: admin, baseId: a.baseId, recordId: b.draftId, sampleRate: 1 })).code).toBe(
      'validation_failed',
    );
    expect((await env.fail(ShadowSubject.policySet, { principal: admin, baseId: a.baseId, recordId: a.v1, sampleRate: 1 })).code).toBe(
      'validation_failed',
    );
    const past = new Date(Date.now() - 1000).toISOString();
    expect(
      (await env.fail(ShadowSubject.policySet, { principal: admin, baseId: a.baseId, recordId: a.draftId, sampleRate: 1, until: past }))
        .code,
    ).toBe('validation_failed');
    const other = as('admin', { orgId: 'globex' });
    expect((await env.fail(ShadowSubject.policySet, { principal: other, baseId: a.baseId, recordId: a.draftId, sampleRate: 1 })).code).toBe(
      'not_found',
    );
    expect((await env.fail(ShadowSubject.flowGet, { principal: admin, baseId: a.baseId })).code).toBe('not_found');
    // Nothing was stored by any refusal.
    expect((await env.fail(ShadowSubject.policyGet, { principal: admin, baseId: a.baseId })).code).toBe('not_found');
    const entry = await baseEntry(a.baseId);
    expect(entry.state === 'live' && 'shadow' in entry).toBe(false);
    await env.call(S.policyDelete, { principal: admin, policyId: a.baseId }, DeleteBaseReply);
    expect((await env.fail(ShadowSubject.policySet, { principal: admin, baseId: a.baseId, recordId: a.draftId, sampleRate: 1 })).code).toBe(
      'not_found',
    );
  });
});
