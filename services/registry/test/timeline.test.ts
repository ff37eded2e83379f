import {
  PolicyDraftReply,
  PolicyRecord,
  PolicyRecordPage,
  PolicyUpdateReply,
  RegistrySubject as S,
  RunnableBaseEntry,
  TypedEvent,
  VersionTimeline,
  LivePolicyRecordEntry,
  runnableBaseKey,
  runnableTimelineKey,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intervalsOf, timelineOf } from '../src/domain/timeline.js';
import { ADULT_RULE, as, eventually, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const publisher = as('publisher');
const editor = as('editor');
const HOUR = 3600_000;

async function published(): Promise<PolicyRecord> {
  const draft = await env.call(S.policyCreate, { principal: publisher, name: 'timed', rule: ADULT_RULE }, PolicyRecord);
  return (await env.call(S.policyUpdate, { principal: publisher, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply))
    .record;
}

async function scheduleNext(baseId: string, at: number): Promise<PolicyRecord> {
  const draft = await env.call(S.policyDraft, { principal: publisher, policyId: baseId }, PolicyDraftReply);
  const reply = await env.call(
    S.policyUpdate,
    { principal: publisher, policyId: draft.record.policyId, status: 'published', effectiveFrom: new Date(at).toISOString() },
    PolicyUpdateReply,
  );
  return reply.record;
}

const baseEntry = async (baseId: string) =>
  RunnableBaseEntry.parse(JSON.parse((await env.redis.get(runnableBaseKey(env.prefix, 'policy', baseId)))!));

describe('the timeline domain', () => {
  const v = (version: number, at: number) => ({ id: `r${version}`, version, publishedAt: new Date(at) });
  it('orders versions by instant, leaves cancelled ones out and keeps the latest 100', () => {
    const rows = [
      { recordId: 'r2', baseId: 'b', version: 2, effectiveFrom: new Date(5000), rollbackOf: null, cancelledAt: null },
      { recordId: 'r3', baseId: 'b', version: 3, effectiveFrom: new Date(9000), rollbackOf: null, cancelledAt: new Date(3500) },
      { recordId: 'r4', baseId: 'b', version: 4, effectiveFrom: null, rollbackOf: 1, cancelledAt: null },
    ];
    const versions = [v(1, 1000), v(2, 2000), v(3, 3000), v(4, 4000)];
    expect(timelineOf(versions, rows)).toEqual([
      { version: 1, recordId: 'r1', from: 1000 },
      { version: 4, recordId: 'r4', from: 4000, rollbackOf: 1 },
      { version: 2, recordId: 'r2', from: 5000 },
    ]);
    const intervals = intervalsOf(versions, rows);
    expect(intervals.get(1)).toEqual({ effectiveFrom: new Date(1000), effectiveUntil: new Date(4000), cancelled: false, rollbackOf: null });
    expect(intervals.get(3)).toMatchObject({ effectiveFrom: new Date(9000), effectiveUntil: null, cancelled: true });
    expect(intervals.get(2)).toMatchObject({ effectiveUntil: null });
    const many = Array.from({ length: 130 }, (_, i) => v(i + 1, i * 10));
    const kept = timelineOf(many, []);
    expect(kept).toHaveLength(100);
    expect(kept[0].version).toBe(31);
  });
});

describe('scheduled versions in the registry', () => {
  it('indexes a pending schedule in the base entry, the whole timeline under its own key; the entry runs the version in effect', async () => {
    const v1 = await published();
    const plain = await baseEntry(v1.baseId);
    expect(plain.state === 'live' && plain.timeline).toBeUndefined();
    const at = Date.now() + HOUR;
    const v2 = await scheduleNext(v1.baseId, at);
    expect(v2).toMatchObject({ version: 2, status: 'published' });
    const entry = await baseEntry(v1.baseId);
    expect(entry).toMatchObject({ state: 'live', recordId: v1.policyId, version: 1 });
    const timeline = entry.state === 'live' ? entry.timeline : undefined;
    expect(timeline?.map((e) => [e.version, e.recordId])).toEqual([
      [1, v1.policyId],
      [2, v2.policyId],
    ]);
    expect(timeline?.[1].from).toBe(at);
    const whole = VersionTimeline.parse(JSON.parse((await env.redis.get(runnableTimelineKey(env.prefix, 'policy', v1.baseId)))!));
    expect(whole).toEqual(timeline);

    // the registry's resolve (an index miss) picks by the instant asked for
    const at1 = await env.call(S.policyResolve, { principal: editor, baseId: v1.baseId }, LivePolicyRecordEntry);
    expect(at1.version).toBe(1);
    const at2 = await env.call(
      S.policyResolve,
      { principal: editor, baseId: v1.baseId, at: new Date(at).toISOString() },
      LivePolicyRecordEntry,
    );
    expect(at2.version).toBe(2);
    const early = await env.fail(S.policyResolve, { principal: editor, baseId: v1.baseId, at: new Date(0).toISOString() });
    expect(early.code).toBe('not_found');

    const page = await env.call(S.policyVersions, { principal: editor, policyId: v1.baseId }, PolicyRecordPage);
    expect(page.items.map((r) => [r.version, r.effectiveUntil, r.cancelled])).toEqual([
      [2, null, false],
      [1, new Date(at).toISOString(), false],
    ]);
  });

  it('cancels a schedule and rolls back with their events; both need the publish right', async () => {
    const v1 = await published();
    const at = Date.now() + HOUR;
    await scheduleNext(v1.baseId, at);
    expect((await env.fail(S.policyScheduleCancel, { principal: editor, baseId: v1.baseId, version: 2 })).code).toBe('forbidden');
    expect((await env.fail(S.policyRollback, { principal: editor, baseId: v1.baseId, toVersion: 1 })).code).toBe('forbidden');
    const cancelled = await env.call(S.policyScheduleCancel, { principal: publisher, baseId: v1.baseId, version: 2 }, PolicyRecord);
    expect(cancelled.version).toBe(2);
    // nothing waits any more: the base entry is plain again
    const entry = await baseEntry(v1.baseId);
    expect(entry.state === 'live' && entry.timeline).toBeUndefined();
    const back = await env.call(S.policyRollback, { principal: publisher, baseId: v1.baseId, toVersion: 1 }, PolicyRecord);
    expect(back).toMatchObject({ version: 3, basedOnVersion: 1, rule: ADULT_RULE });
    expect((await baseEntry(v1.baseId)).state === 'live' && (await baseEntry(v1.baseId))).toMatchObject({ version: 3 });

    const events = await eventually(async () => {
      const all = (await env.events()).filter((e) => e.resource.baseId === v1.baseId);
      expect(all.map((e) => e.kind)).toEqual(['created', 'published', 'created', 'published', 'schedule cancelled', 'published']);
      return all;
    });
    for (const e of events) expect(TypedEvent.parse(e)).toEqual(e);
    expect(events[3].details).toEqual({ version: 2, effectiveFrom: new Date(at).toISOString() });
    expect(events[4].details).toEqual({ version: 2, effectiveFrom: new Date(at).toISOString() });
    expect(events[5].details).toEqual({ version: 3, rollbackOf: 1 });
  });
});
