import {
  type ArbiterEvent,
  DeleteBaseReply,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject as S,
  RolloutState,
  RolloutSubject,
  RunnableBaseEntry,
  runnableBaseKey,
  rolloutWindowKey,
  TypedEvent,
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
const viewer = as('viewer');
const admin = as('admin');
const otherAdmin = as('admin', { orgId: 'globex' });

const baseEntry = async (baseId: string) => {
  const entry = RunnableBaseEntry.parse(JSON.parse((await env.redis.get(runnableBaseKey(env.prefix, 'policy', baseId)))!));
  if (entry.state !== 'live') throw new Error(`base \`${baseId}\` is not live`);
  return entry;
};
const rollout = (payload: Record<string, unknown>) => env.call(RolloutSubject.policy, payload, RolloutState);

/** A base at version 1, then version 2 published with `start` as its rollout. */
async function rolledOut(name: string, start: Record<string, unknown>) {
  const draft = await env.call(S.policyCreate, { principal: editor, name, rule: ADULT_RULE }, PolicyRecord);
  const v1 = (await env.call(S.policyUpdate, { principal: publisher, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply))
    .record;
  const next = (await env.call(S.policyDraft, { principal: editor, policyId: draft.baseId }, PolicyDraftReply)).record;
  const v2 = (
    await env.call(
      S.policyUpdate,
      { principal: publisher, policyId: next.policyId, status: 'published', rule: ADULT_RULE.replace('18', '21'), rollout: start },
      PolicyUpdateReply,
    )
  ).record;
  return { baseId: draft.baseId, v1, v2 };
}

describe('rollouts', () => {
  it('a publish with `rollout` writes it into the base entry and the outbox; a share change and a rollback follow', async () => {
    const { baseId, v1, v2 } = await rolledOut('Staged', { percent: 10, by: 'applicant.id', maxErrorRate: 0.1 });
    const entry = await baseEntry(baseId);
    expect(entry).toMatchObject({
      state: 'live',
      recordId: v2.policyId,
      version: 2,
      rollout: {
        percent: 10,
        by: 'applicant.id',
        recordId: v2.policyId,
        version: 2,
        previousRecordId: v1.policyId,
        previousVersion: 1,
        guard: { maxErrorRate: 0.1, minRuns: 100 },
      },
    });

    const widened = await rollout({ principal: publisher, baseId, action: 'percent', percent: 25.5 });
    expect(widened.rollout).toMatchObject({ percent: 25.5, updatedBy: 'publisher', startedBy: 'publisher' });
    const after = await baseEntry(baseId);
    expect(after.rollout?.percent).toBe(25.5);
    expect(after.rev).toBeGreaterThan(entry.rev);
    expect((await rollout({ principal: viewer, baseId, action: 'get' })).rollout?.percent).toBe(25.5);

    expect((await rollout({ principal: admin, baseId, action: 'rollback' })).rollout).toBeNull();
    const back = await baseEntry(baseId);
    expect(back).toMatchObject({ recordId: v1.policyId, version: 1, versions: { '1': v1.policyId, '2': v2.policyId } });
    expect(back.rollout).toBeUndefined();

    const events = await eventually(async () => {
      const all = (await env.events()).filter((e: ArbiterEvent) => e.kind === 'rollout changed' && e.resource.baseId === baseId);
      expect(all).toHaveLength(3);
      return all;
    });
    for (const e of events) expect(TypedEvent.parse(e)).toEqual(e);
    expect(events.map((e) => [e.details.action, e.details.percent, e.details.fromPercent ?? null, e.actor.userId])).toEqual([
      ['started', 10, null, 'publisher'],
      ['percent', 25.5, 10, 'publisher'],
      ['rolled_back', 0, 25.5, 'admin'],
    ]);
  });

  it('refuses other roles, other orgs, no rollout, and a publish while one runs', async () => {
    const { baseId } = await rolledOut('Refusals', { percent: 50 });
    for (const principal of [viewer, editor]) {
      expect((await env.fail(RolloutSubject.policy, { principal, baseId, action: 'percent', percent: 60 })).code).toBe('forbidden');
      expect((await env.fail(RolloutSubject.policy, { principal, baseId, action: 'promote' })).code).toBe('forbidden');
    }
    expect((await env.fail(RolloutSubject.policy, { principal: otherAdmin, baseId, action: 'get' })).code).toBe('not_found');
    expect((await env.fail(RolloutSubject.flow, { principal: admin, baseId, action: 'get' })).code).toBe('not_found');
    expect((await env.fail(RolloutSubject.policy, { principal: admin, baseId, action: 'percent', percent: 101 })).code).toBe('bad_request');
    const next = (await env.call(S.policyDraft, { principal: editor, policyId: baseId }, PolicyDraftReply)).record;
    const again = await env.fail(S.policyUpdate, { principal: publisher, policyId: next.policyId, status: 'published' });
    expect(again.code).toBe('conflict');
    expect((await rollout({ principal: admin, baseId, action: 'get' })).rollout?.percent).toBe(50);

    expect((await rollout({ principal: publisher, baseId, action: 'promote' })).rollout).toBeNull();
    expect((await baseEntry(baseId)).rollout).toBeUndefined();
    expect((await env.fail(RolloutSubject.policy, { principal: admin, baseId, action: 'promote' })).code).toBe('conflict');
    expect((await env.fail(RolloutSubject.policy, { principal: admin, baseId, action: 'rollback' })).code).toBe('conflict');
    await env.call(S.policyDelete, { principal: admin, policyId: baseId }, DeleteBaseReply);
    expect((await env.fail(RolloutSubject.policy, { principal: admin, baseId, action: 'get' })).code).toBe('not_found');
  });

  it('the guard check rolls back only when the windows say so, as `rollout-guard`', async () => {
    const { baseId, v1 } = await rolledOut('Guarded', { percent: 50, maxErrorRate: 0.2, minRuns: 10 });
    const id = (await rollout({ principal: viewer, baseId, action: 'get' })).rollout!.id;
    const windows = (next: string, previous: string) =>
      env.redis.mset(rolloutWindowKey(env.prefix, id, 'new'), next, rolloutWindowKey(env.prefix, id, 'previous'), previous);
    // too few runs, then within the allowed difference, then another rollout's id: nothing changes
    await windows('11111', '0000000000');
    expect((await rollout({ principal: viewer, baseId, action: 'guard', rolloutId: id })).rollout).not.toBeNull();
    await windows('1100000000', '0000000000');
    expect((await rollout({ principal: viewer, baseId, action: 'guard', rolloutId: id })).rollout).not.toBeNull();
    await windows('1110000000', '0000000000');
    expect((await rollout({ principal: viewer, baseId, action: 'guard', rolloutId: 'another' })).rollout).not.toBeNull();
    // over it: rolled back
    expect((await rollout({ principal: viewer, baseId, action: 'guard', rolloutId: id })).rollout).toBeNull();
    expect((await baseEntry(baseId)).recordId).toBe(v1.policyId);
    const guard = await eventually(async () => {
      const found = (await env.events()).find(
        (e) => e.kind === 'rollout changed' && e.resource.baseId === baseId && e.details.reason === 'guard',
      );
      expect(found).toBeDefined();
      return found!;
    });
    expect(TypedEvent.parse(guard)).toEqual(guard);
    expect(guard).toMatchObject({
      actor: { userId: 'rollout-guard' },
      details: { action: 'rolled_back', errorRates: { version: 0.3, previousVersion: 0, runs: 10 } },
    });
  });
});
