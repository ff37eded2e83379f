import { GovernanceSubject as G, ReviewSummary, TypedEvent, type ArbiterEvent } from '@arbiter/contracts';
import { ensureEventStream } from '@arbiter/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamMessages } from '@arbiter/test-kit';
import { as, eventually, registryOf, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
let reg: ReturnType<typeof registryOf>;
beforeAll(async () => {
  env = await startTestEnv();
  reg = registryOf(env);
});
afterAll(async () => {
  await env?.close();
});

const editor = { ...as('editor'), apiKeyId: 'key-of-the-editor' };
const publisher = as('publisher');
const target = (principal: unknown, recordId: string) => ({ principal, kind: 'policy', recordId });

/** The stream's events about `recordId` (with their subjects and message ids), once `n` are there. */
async function eventsAbout(
  recordId: string,
  n: number,
): Promise<Array<{ event: ArbiterEvent; subject: string; msgId: string | undefined }>> {
  return eventually(async () => {
    const out: Array<{ event: ArbiterEvent; subject: string; msgId: string | undefined }> = [];
    for (const msg of await streamMessages(env.jsm, env.streamName)) {
      const event = msg.json<ArbiterEvent>();
      if (event.resource.id === recordId && event.kind !== 'created')
        out.push({ event, subject: msg.subject, msgId: msg.header?.get('Nats-Msg-Id') });
    }
    expect(out).toHaveLength(n);
    return out;
  });
}

const pendingRows = async () => Number((await env.sql('governance_outbox').whereNull('sent_at').count({ n: '*' }).first())!.n);

describe('review events through the governance outbox', () => {
  it('approval requested, rejected and approved land on the stream with actor, request id, subject and message id', async () => {
    const d = await reg.createPolicy(editor);
    const first = await env.call(G.submit, target(editor, d.policyId), ReviewSummary);
    await env.call(G.reject, { ...target(publisher, d.policyId), comment: 'no' }, ReviewSummary);
    const second = await env.call(G.submit, target(editor, d.policyId), ReviewSummary);
    await env.call(G.approve, target(publisher, d.policyId), ReviewSummary);
    const got = await eventsAbout(d.policyId, 4);
    expect(got.map(({ event }) => [event.kind, event.actor, event.details.requestId])).toEqual([
      ['approval requested', { userId: 'editor', apiKeyId: 'key-of-the-editor' }, first.requestId],
      ['rejected', { userId: 'publisher' }, first.requestId],
      ['approval requested', { userId: 'editor', apiKeyId: 'key-of-the-editor' }, second.requestId],
      ['approved', { userId: 'publisher' }, second.requestId],
    ]);
    expect(got[1]!.event.details.comment).toBe('no');
    for (const { event, subject, msgId } of got) {
      expect(event).toMatchObject({ orgId: 'acme', resource: { type: 'policy', id: d.policyId, baseId: d.baseId } });
      expect(subject).toBe(`${env.prefix}.events.acme.${event.kind.replaceAll(' ', '_')}`);
      expect(msgId).toBe(event.eventId);
      expect(TypedEvent.parse(event)).toEqual(event);
    }
  });

  it('a refused change leaves no event behind', async () => {
    await eventually(async () => expect(await pendingRows()).toBe(0));
    const before = Number((await env.sql('governance_outbox').count({ n: '*' }).first())!.n);
    const d = await reg.createPolicy(publisher);
    await env.call(G.submit, target(publisher, d.policyId), ReviewSummary);
    expect((await env.fail(G.approve, target(publisher, d.policyId))).code).toBe('separation_of_duties');
    expect((await env.fail(G.submit, target(publisher, d.policyId))).code).toBe('conflict');
    expect(Number((await env.sql('governance_outbox').count({ n: '*' }).first())!.n)).toBe(before + 1);
  });

  it('an event is not lost while JetStream refuses it: the relay retries until the stream is back', async () => {
    await eventually(async () => expect(await pendingRows()).toBe(0));
    await env.jsm.streams.delete(env.streamName);
    const d = await reg.createPolicy(editor);
    await env.call(G.submit, target(editor, d.policyId), ReviewSummary);
    const pending = await eventually(async () => {
      const row = await env.sql('governance_outbox').whereRaw(`payload->'resource'->>'id' = ?`, [d.policyId]).first();
      expect(row.attempts).toBeGreaterThanOrEqual(1);
      expect(row.sent_at).toBeNull();
      return row as { id: string; event_id: string };
    });
    await ensureEventStream(env.client.nc, env.prefix);
    const [got] = await eventsAbout(d.policyId, 1);
    expect(got!.event).toMatchObject({ kind: 'approval requested', eventId: pending.event_id });
    await eventually(async () => expect((await env.sql('governance_outbox').where({ id: pending.id }).first()).sent_at).not.toBeNull());
  });
});
