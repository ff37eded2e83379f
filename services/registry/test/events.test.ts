import {
  ArbiterEvent,
  DeleteBaseReply,
  Group,
  GroupMember,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject as S,
  TypedEvent,
  eventSubject,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureEventStream } from '@arbiter/service-kit';
import { ADULT_RULE, as, eventually, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const editor = as('editor');
const admin = { ...as('admin'), apiKeyId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' };

/** The events about resources whose id or base id is in `ids`, once there are `n` of them. */
async function eventsAbout(ids: string[], n: number): Promise<ArbiterEvent[]> {
  return eventually(async () => {
    const all = (await env.events()).filter((e) => ids.includes(e.resource.id) || ids.includes(e.resource.baseId ?? ''));
    expect(all.length).toBeGreaterThanOrEqual(n);
    return all;
  });
}

describe('events', () => {
  it('every change lands on the stream with the spec kind, subject and message id', async () => {
    const draft = await env.call(S.policyCreate, { principal: editor, name: 'evented', rule: ADULT_RULE }, PolicyRecord);
    await env.call(S.policyUpdate, { principal: editor, policyId: draft.policyId, status: 'draft', description: 'x' }, PolicyUpdateReply);
    await env.call(S.policyUpdate, { principal: admin, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply);
    const next = await env.call(S.policyDraft, { principal: editor, policyId: draft.policyId }, PolicyDraftReply);
    const group = await env.call(S.groupCreate, { principal: editor, name: 'evented group' }, Group);
    await env.call(
      S.groupMemberAdd,
      { principal: editor, groupId: group.groupId, memberId: draft.baseId, memberType: 'policy' },
      GroupMember,
    );
    await env.call(S.policyDelete, { principal: admin, policyId: draft.policyId }, DeleteBaseReply);

    const events = await eventsAbout([draft.baseId, group.groupId], 7);
    expect(events.map((e) => [e.kind, e.resource.type, e.resource.id])).toEqual([
      ['created', 'policy', draft.policyId],
      ['edited', 'policy', draft.policyId],
      ['published', 'policy', draft.policyId],
      ['created', 'policy', next.record.policyId],
      ['created', 'group', group.groupId],
      ['assigned', 'group', group.groupId],
      ['deleted', 'policy', draft.baseId],
    ]);
    for (const e of events) {
      expect(ArbiterEvent.parse(e)).toEqual(e);
      expect(TypedEvent.parse(e)).toEqual(e);
      expect(e.orgId).toBe('acme');
    }
    expect(events[1].details).toEqual({ fields: ['description'] });
    expect(events[2]).toMatchObject({
      actor: { userId: 'admin', apiKeyId: admin.apiKeyId },
      details: { version: 1 },
      resource: { baseId: draft.baseId },
    });
    expect(events[5].details).toEqual({ memberId: draft.baseId, memberType: 'policy' });

    // subjects carry the kind with spaces as `_`; the message id is the event id (dedupe)
    const info = await env.jsm.streams.info(env.streamName);
    const stored = await env.jsm.streams.getMessage(env.streamName, { seq: info.state.first_seq });
    const first = stored!.json<ArbiterEvent>();
    expect(stored!.subject).toBe(eventSubject(env.prefix, first.orgId, first.kind));
    expect(stored!.header.get('Nats-Msg-Id')).toBe(first.eventId);
    expect(eventSubject('arbiter', 'acme', 'approval requested')).toBe('arbiter.events.acme.approval_requested');
  });

  it('a rolled-back change leaves no event behind', async () => {
    const draft = await env.call(S.policyCreate, { principal: admin, name: 'unpublishable', rule: 'A **x** is.' }, PolicyRecord);
    await env.fail(S.policyUpdate, {
      principal: admin,
      policyId: draft.policyId,
      status: 'published',
      description: 'edit rolled back too',
    });
    const rows = await env.sql('registry_outbox').whereRaw(`payload->'resource'->>'baseId' = ?`, [draft.baseId]);
    expect(rows.map((r: { payload: ArbiterEvent }) => r.payload.kind)).toEqual(['created']);
  });

  it('an event is not lost when JetStream refuses it: the relay retries until the stream is back', async () => {
    await eventually(async () =>
      expect(await env.sql('registry_outbox').whereNull('sent_at').count({ n: '*' }).first()).toEqual({ n: '0' }),
    );
    await env.jsm.streams.delete(env.streamName);
    const draft = await env.call(S.policyCreate, { principal: editor, name: 'while the stream is gone', rule: ADULT_RULE }, PolicyRecord);
    // the relay tried and failed at least once; the event waits in the outbox
    const pending = await eventually(async () => {
      const row = await env.sql('registry_outbox').whereRaw(`payload->'resource'->>'id' = ?`, [draft.policyId]).first();
      expect(row.attempts).toBeGreaterThanOrEqual(1);
      expect(row.sent_at).toBeNull();
      return row;
    });
    expect(pending.last_error).toBeTruthy();
    await ensureEventStream(env.client.nc, env.prefix);
    const [event] = await eventsAbout([draft.policyId], 1);
    expect(event).toMatchObject({ kind: 'created', eventId: pending.event_id });
    await eventually(async () => expect((await env.sql('registry_outbox').where({ id: pending.id }).first()).sent_at).not.toBeNull());
  });

  it('ensureEventStream is idempotent', async () => {
    expect(await ensureEventStream(env.client.nc, env.prefix)).toBe(env.streamName);
    expect(await ensureEventStream(env.client.nc, env.prefix)).toBe(env.streamName);
    expect((await env.jsm.streams.info(env.streamName)).config.subjects).toEqual([`${env.prefix}.events.>`]);
  });
});
