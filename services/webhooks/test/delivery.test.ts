/**
 * Deliveries end to end inside the service, on real PostgreSQL, NATS and local HTTP receivers that
 * verify each request with the `standardwebhooks` package: events of the stream reach the endpoints
 * that asked for their kind, signed, with the event id as `webhook-id` and the event as `GET /audit`
 * shows it as body; `decided` records never go out; a 500 is retried until a 2xx; a 410 disables
 * the endpoint at once; an endpoint failing for the whole retry window is disabled; a receiver that
 * never answers holds only its own endpoint; during a rotation both secrets verify.
 */
import {
  AuditEvent,
  eventStreamName,
  TypedEvent,
  WebhookDeliveryPage,
  WebhookSubject,
  WebhookWithSecret,
  type ArbiterEvent,
} from '@arbiter/contracts';
import { streamMessages } from '@arbiter/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import type { Webhooks } from '../src/service.js';
import { as, event, eventually, Receiver, startTestEnv, verifies, type TestEnv } from './support.js';

let t: TestEnv | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.allSettled(receivers.splice(0).map((r) => r.close()));
  await t?.close();
  t = undefined;
});

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
}

async function create(env: TestEnv, url: string, events: string[], orgId = 'acme'): Promise<WebhookWithSecret> {
  return env.client.request(WebhookSubject.create, { principal: as('admin', { orgId }), url, events }, WebhookWithSecret);
}

async function deliveries(env: TestEnv, id: string, orgId = 'acme') {
  return env.client.request(WebhookSubject.deliveries, { principal: as('admin', { orgId }), id, limit: 200 }, WebhookDeliveryPage);
}

/** The events of `kind` on the stream (the service's own audit events, published by its outbox relay). */
async function ownEvents(env: TestEnv, kind: string): Promise<ArbiterEvent[]> {
  const msgs = await streamMessages(env.jsm, eventStreamName(env.prefix));
  return msgs.map((m) => m.json<ArbiterEvent>()).filter((e) => e.kind === kind);
}

describe('webhook deliveries', () => {
  it('sends each event of an org to the endpoints that asked for its kind, signed, once per endpoint; never a `decided` record', async () => {
    t = await startTestEnv();
    await t.start();
    const all = await receiver();
    const published = await receiver();
    const other = await receiver();
    const a = await create(t, all.url, ['*']);
    const p = await create(t, published.url, ['published']);
    const o = await create(t, other.url, ['*'], 'globex');

    const edited = event('edited');
    const pub = event('published', { details: { version: 3 }, extra: 'not shown by GET /audit' } as Partial<ArbiterEvent>);
    const decided = event('decided');
    const elsewhere = event('created', { orgId: 'globex' });
    await t.publish([edited, pub, decided, elsewhere]);

    // `*` includes the service's own events (`webhook created` of the endpoints above).
    const trail = (r: Receiver) => r.received.filter((x) => !x.body.includes('"kind":"webhook ')).map((x) => x.id);
    await eventually(() => expect(trail(all).sort()).toEqual([edited.eventId, pub.eventId].sort()), 20_000);
    await eventually(() => expect(published.ids()).toEqual([pub.eventId]), 20_000);
    await eventually(() => expect(trail(other)).toEqual([elsewhere.eventId]), 20_000);
    for (const [r, hook] of [
      [all, a],
      [published, p],
      [other, o],
    ] as const) {
      for (const got of r.received) {
        expect(verifies(got, hook.secret)).toBe(true);
        expect(got.signature).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
      }
    }
    expect(verifies(all.received[0]!, p.secret)).toBe(false);
    const sentPub = published.received[0]!;
    expect(JSON.parse(sentPub.body)).toEqual(AuditEvent.parse(pub));
    expect(JSON.parse(sentPub.body)).not.toHaveProperty('extra');
    // The same event redelivered by JetStream (a crash before the ack) makes no second delivery.
    await t.js.publish(`${t.prefix}.events.acme.published`, JSON.stringify(pub));
    // Events are consumed in order: once a later one arrived, the copy was handled.
    const marker = event('published');
    await t.publish([marker]);
    await eventually(() => expect(published.ids()).toEqual([pub.eventId, marker.eventId]), 20_000);
    const page = await deliveries(t, p.id);
    const first = page.items.find((d) => d.eventId === pub.eventId)!;
    expect(page.items).toHaveLength(2);
    expect([first.status, first.attempts.length, first.attempts[0]!.statusCode]).toEqual(['delivered', 1, 204]);
    expect(all.received.some((r) => r.id === decided.eventId)).toBe(false);
  });

  it('retries a receiver answering 500 with backoff until it answers 2xx, every attempt kept', async () => {
    t = await startTestEnv();
    await t.start();
    const r = await receiver();
    r.answer = (_req, n) => (n <= 2 ? { status: 500, body: 'x'.repeat(5000) } : { status: 200, body: 'ok' });
    const hook = await create(t, r.url, ['edited']);
    r.secrets.set('s', hook.secret);
    const e = event('edited');
    await t.publish([e]);
    await eventually(async () => {
      const page = await deliveries(t!, hook.id);
      expect(page.items[0]?.status).toBe('delivered');
    }, 20_000);
    expect(r.ids()).toEqual([e.eventId, e.eventId, e.eventId]);
    expect(r.received.every((x) => x.verified.s)).toBe(true);
    const [d] = (await deliveries(t, hook.id)).items;
    expect(d!.attempts.map((a) => a.statusCode)).toEqual([200, 500, 500]);
    expect(d!.attempts[1]!.response).toHaveLength(1024);
    expect(d!.attempts[0]!.response).toBe('ok');
    // Retried only after the backoff: each attempt after the one before it.
    const times = d!.attempts.map((a) => Date.parse(a.at)).reverse();
    expect(times[1]! > times[0]! && times[2]! > times[1]!).toBe(true);
  });

  it('counts a receiver that does not answer within the attempt deadline as a failed attempt, and retries it', async () => {
    t = await startTestEnv();
    await t.start({ WEBHOOKS_ATTEMPT_TIMEOUT_MS: '300' });
    const r = await receiver();
    r.answer = (_req, n) => (n === 1 ? { hang: true } : { status: 204 });
    const hook = await create(t, r.url, ['edited']);
    await t.publish([event('edited')]);
    await eventually(async () => expect((await deliveries(t!, hook.id)).items[0]?.status).toBe('delivered'), 20_000);
    const [d] = (await deliveries(t, hook.id)).items;
    expect(d!.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [204, null],
      [null, 'no answer within 300 ms'],
    ]);
  });

  it('never follows a redirect: a 3xx is a failed attempt, retried, and the other address is never hit', async () => {
    t = await startTestEnv();
    await t.start();
    const target = await receiver();
    const r = await receiver();
    r.answer = (_req, n) => (n === 1 ? { status: 307, headers: { location: target.url } } : { status: 204 });
    const hook = await create(t, r.url, ['edited']);
    await t.publish([event('edited')]);
    await eventually(async () => expect((await deliveries(t!, hook.id)).items[0]?.status).toBe('delivered'), 20_000);
    const [d] = (await deliveries(t, hook.id)).items;
    expect(d!.attempts.map((a) => a.statusCode)).toEqual([204, 307]);
    expect(target.received).toHaveLength(0);
  });

  it('disables an endpoint answering 410 at once and records `webhook disabled`', async () => {
    t = await startTestEnv();
    // One attempt at a time, so the first answer is seen before the next attempt starts.
    await t.start({ WEBHOOKS_CONCURRENCY: '1' });
    const r = await receiver();
    r.answer = () => ({ status: 410 });
    const hook = await create(t, r.url, ['edited', 'created']);
    await t.publish([event('edited'), event('created')]);
    await eventually(async () => expect(await ownEvents(t!, 'webhook disabled')).toHaveLength(1), 20_000);
    const [disabled] = await ownEvents(t, 'webhook disabled');
    expect(disabled!.resource).toEqual({ type: 'webhook', id: hook.id });
    expect(disabled!.details).toMatchObject({ reason: 'gone' });
    expect(TypedEvent.parse(disabled)).toEqual(disabled);
    const row = (await t.sql('webhook_endpoints').where('id', hook.id).first()) as { enabled: boolean; disabled_reason: string };
    expect(row).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    // The first 410 stops it: the other event waits (pending) for the endpoint to be enabled again.
    expect(r.received).toHaveLength(1);
    const page = await deliveries(t, hook.id);
    expect(page.items.map((d) => d.status).sort()).toEqual(['failed', 'pending']);
  });

  it('gives a delivery up after the retry window and disables an endpoint failing for all of it', async () => {
    t = await startTestEnv();
    // A window of about 1.5 s: 0.0004 h.
    await t.start({ WEBHOOKS_RETRY_HOURS: '0.0004' });
    const r = await receiver();
    r.answer = () => ({ status: 503 });
    const hook = await create(t, r.url, ['edited']);
    await t.publish([event('edited')]);
    await eventually(async () => expect((await deliveries(t!, hook.id)).items[0]?.status).toBe('failed'), 20_000);
    await eventually(async () => expect(await ownEvents(t!, 'webhook disabled')).toHaveLength(1), 20_000);
    expect((await ownEvents(t, 'webhook disabled'))[0]!.details).toMatchObject({ reason: 'failing' });
    expect(r.received.length).toBeGreaterThan(1);
  });

  it('a receiver that never answers holds only its own endpoint: another gets every event meanwhile', async () => {
    t = await startTestEnv();
    await t.start({ WEBHOOKS_CONCURRENCY: '2', WEBHOOKS_ATTEMPT_TIMEOUT_MS: '60000' });
    const stuck = await receiver();
    stuck.answer = () => ({ hang: true });
    const healthy = await receiver();
    await create(t, stuck.url, ['edited']);
    await create(t, healthy.url, ['edited']);
    const events = Array.from({ length: 20 }, () => event('edited'));
    await t.publish(events);
    await eventually(() => expect(healthy.ids().sort()).toEqual(events.map((e) => e.eventId).sort()), 20_000);
    // The stuck one holds at most its concurrency at once.
    expect(stuck.received.length).toBeLessThanOrEqual(2);
  });

  it('signs with both secrets during a rotation, so a receiver holding either verifies', async () => {
    t = await startTestEnv();
    await t.start();
    const r = await receiver();
    const hook = await create(t, r.url, ['edited']);
    const rotated = await t.client.request(WebhookSubject.rotate, { principal: as('admin'), id: hook.id }, WebhookWithSecret);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(rotated.previousSecretUntil).not.toBeNull();
    r.secrets.set('old', hook.secret);
    r.secrets.set('new', rotated.secret);
    await t.publish([event('edited')]);
    await eventually(() => expect(r.received).toHaveLength(1), 20_000);
    expect(r.received[0]!.verified).toEqual({ old: true, new: true });
    expect(r.received[0]!.signature.split(' ')).toHaveLength(2);
    // Once the overlap is over only the new secret signs.
    await t
      .sql('webhook_endpoints')
      .where('id', hook.id)
      .update({ previous_secret_until: new Date(Date.now() - 1000) });
    await t.publish([event('edited')]);
    await eventually(() => expect(r.received).toHaveLength(2), 20_000);
    expect(r.received[1]!.verified).toEqual({ old: false, new: true });
  });

  it('refuses to deliver to a private address unless allowed: the attempt is recorded, the receiver never hit', async () => {
    t = await startTestEnv();
    const s: Webhooks = await t.start({ WEBHOOKS_ALLOW_PRIVATE: 'false' });
    const r = await receiver();
    // A name resolving to a loopback address (as a public name may come to): refused when it is resolved, at delivery.
    await t.sql('webhook_endpoints').insert({
      id: '0190e2a0-0000-7000-8000-000000000001',
      org_id: 'acme',
      url: r.url.replace('127.0.0.1', 'localhost'),
      events: ['*'],
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      created_by: 'admin',
      created_at: new Date(),
      updated_at: new Date(),
    });
    await t.publish([event('edited')]);
    await eventually(async () => {
      const page = await deliveries(t!, '0190e2a0-0000-7000-8000-000000000001');
      expect(page.items[0]?.attempts.length ?? 0).toBeGreaterThan(0);
      expect(page.items[0]!.attempts[0]!.error).toMatch(/`localhost` resolves to (127\.0\.0\.1|::1), a private/);
    }, 20_000);
    expect(r.received).toHaveLength(0);
    expect(s.dispatcher).toBeDefined();
  });
});
