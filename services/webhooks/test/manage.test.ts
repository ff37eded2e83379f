/**
 * The `webhooks.*` requests on a real service (PostgreSQL, NATS): only an org's admins manage its
 * endpoints and another org's are not found; a bad or refused URL is a clear 400 and creates
 * nothing; each change is audited (`webhook created`, `webhook changed`, `webhook deleted`); a ping
 * reaches the endpoint; deliveries page by cursor and filter by status; a failed one is retried;
 * old deliveries are pruned.
 */
import {
  ArbiterError,
  eventStreamName,
  isArbiterError,
  TypedEvent,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookDeleted,
  WebhookPage,
  WebhookSubject,
  WebhookTestReply,
  WebhookWithSecret,
  type ArbiterEvent,
  type Principal,
} from '@arbiter/contracts';
import { rejectionOf, streamMessages } from '@arbiter/test-kit';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Webhooks } from '../src/service.js';
import { as, event, eventually, Receiver, startTestEnv, verifies, type TestEnv } from './support.js';

let t: TestEnv;
let service: Webhooks;
let receiver: Receiver;
beforeAll(async () => {
  t = await startTestEnv();
  service = await t.start({ WEBHOOKS_ALLOW_PRIVATE: 'false', WEBHOOKS_ALLOW_HTTP: 'false' });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

const admin = as('admin');
const call = <T>(subject: string, payload: object, reply: z.ZodType<T>) => t.client.request(subject, payload, reply);
const refusal = (p: Promise<unknown>) => rejectionOf(p, isArbiterError);

async function created(principal: Principal = admin, url = 'https://hooks.example.com/arbiter'): Promise<WebhookWithSecret> {
  return call(WebhookSubject.create, { principal, url, events: ['published', 'approval requested'], description: 'CI' }, WebhookWithSecret);
}

async function trailOf(kind: string): Promise<ArbiterEvent[]> {
  const msgs = await streamMessages(t.jsm, eventStreamName(t.prefix));
  return msgs.map((m) => m.json<ArbiterEvent>()).filter((e) => e.kind === kind);
}

describe('managing webhooks', () => {
  it('creates an endpoint with its secret shown once, then lists, reads, changes and deletes it, each change audited', async () => {
    const hook = await created();
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(hook).toMatchObject({
      url: 'https://hooks.example.com/arbiter',
      events: ['published', 'approval requested'],
      description: 'CI',
      enabled: true,
    });
    const got = await call(WebhookSubject.get, { principal: admin, id: hook.id }, Webhook);
    expect(got).not.toHaveProperty('secret');
    const list = await call(WebhookSubject.list, { principal: admin, limit: 50 }, WebhookPage);
    expect(list.items.map((w) => w.id)).toContain(hook.id);
    expect(JSON.stringify(list)).not.toContain(hook.secret);

    const changed = await call(WebhookSubject.update, { principal: admin, id: hook.id, events: ['*'], enabled: false }, Webhook);
    expect(changed).toMatchObject({ events: ['*'], enabled: false, disabledReason: 'by_admin' });
    const back = await call(WebhookSubject.update, { principal: admin, id: hook.id, enabled: true }, Webhook);
    expect(back).toMatchObject({ enabled: true, disabledReason: null });
    await call(WebhookSubject.delete, { principal: admin, id: hook.id }, WebhookDeleted);
    const gone = await refusal(call(WebhookSubject.get, { principal: admin, id: hook.id }, Webhook));
    expect(gone.code).toBe('not_found');

    await eventually(async () => {
      expect((await trailOf('webhook created')).map((e) => e.resource.id)).toContain(hook.id);
      const changes = (await trailOf('webhook changed')).filter((e) => e.resource.id === hook.id);
      expect(changes.map((e) => e.details)).toEqual([{ changes: { events: ['*'], enabled: false } }, { changes: { enabled: true } }]);
      expect((await trailOf('webhook deleted')).map((e) => e.resource.id)).toContain(hook.id);
    }, 20_000);
    // Each as newEvent makes it: the details typed by the kind.
    for (const kind of ['webhook created', 'webhook changed', 'webhook deleted']) {
      for (const e of await trailOf(kind)) expect(TypedEvent.parse(e)).toEqual(e);
    }
    const [createdEvent] = (await trailOf('webhook created')).filter((e) => e.resource.id === hook.id);
    expect(createdEvent).toMatchObject({ orgId: 'acme', actor: { userId: 'admin' }, resource: { type: 'webhook', id: hook.id } });
    expect(JSON.stringify(createdEvent)).not.toContain(hook.secret);
  });

  it('refuses viewers, editors, publishers, auditors and admin keys without the admin scope; another org sees nothing', async () => {
    const hook = await created();
    for (const principal of [as('viewer'), as('editor'), as('publisher'), as('auditor'), as('admin', { scopes: ['view', 'edit'] })]) {
      const err = await refusal(
        call(WebhookSubject.create, { principal, url: 'https://a.example.com/', events: ['*'] }, WebhookWithSecret),
      );
      expect(err.code).toBe('forbidden');
      expect((await refusal(call(WebhookSubject.list, { principal, limit: 10 }, WebhookPage))).code).toBe('forbidden');
      expect((await refusal(call(WebhookSubject.get, { principal, id: hook.id }, Webhook))).code).toBe('forbidden');
    }
    const stranger = as('admin', { orgId: 'globex' });
    const list = await call(WebhookSubject.list, { principal: stranger, limit: 50 }, WebhookPage);
    expect(list.items).toEqual([]);
    const target = { principal: stranger, id: hook.id };
    for (const [subject, payload] of [
      [WebhookSubject.get, target],
      [WebhookSubject.update, { ...target, enabled: false }],
      [WebhookSubject.delete, target],
      [WebhookSubject.rotate, target],
      [WebhookSubject.test, target],
      [WebhookSubject.deliveries, { ...target, limit: 10 }],
      [WebhookSubject.retry, { ...target, deliveryId: hook.id }],
    ] as const) {
      expect((await refusal(call(subject, payload, z.unknown()))).code).toBe('not_found');
    }
    const still = await call(WebhookSubject.get, { principal: admin, id: hook.id }, Webhook);
    expect(still.enabled).toBe(true);
  });

  it('answers a bad or refused URL with a clear 400 and creates nothing', async () => {
    const before = (await call(WebhookSubject.list, { principal: admin, limit: 200 }, WebhookPage)).items.length;
    const cases: [string, string, RegExp][] = [
      ['not a url', 'invalid_url', /not an absolute URL/],
      ['ftp://files.example.com/x', 'invalid_url', /https URL, not ftp/],
      ['https://user:pw@hooks.example.com/', 'invalid_url', /credentials/],
      ['http://hooks.example.com/', 'https_required', /must use https/],
      ['https://127.0.0.1/hook', 'address_refused', /private, loopback/],
      ['https://10.1.2.3/hook', 'address_refused', /private, loopback/],
      ['https://169.254.169.254/latest/meta-data', 'address_refused', /metadata/],
      ['https://[fd00:ec2::254]/', 'address_refused', /metadata/],
      ['https://[::1]:8443/', 'address_refused', /private, loopback/],
      ['https://localhost/hook', 'address_refused', /loopback name/],
    ];
    for (const [url, reason, message] of cases) {
      const err = await refusal(call(WebhookSubject.create, { principal: admin, url, events: ['*'] }, WebhookWithSecret));
      expect(err).toBeInstanceOf(ArbiterError);
      expect([url, err.code, err.status]).toEqual([url, 'validation_failed', 400]);
      expect(err.message).toMatch(message);
      expect(err.errors).toEqual([expect.objectContaining({ code: reason, path: 'url' })]);
    }
    // Malformed on the bus (the gateway answers these 400 `validation_failed` before they get here).
    const badKinds = await refusal(
      call(WebhookSubject.create, { principal: admin, url: 'https://a.example.com/', events: ['decided'] }, WebhookWithSecret),
    );
    expect(badKinds.status).toBe(400);
    const empty = await refusal(
      call(WebhookSubject.create, { principal: admin, url: 'https://a.example.com/', events: [] }, WebhookWithSecret),
    );
    expect(empty.status).toBe(400);
    const hook = await created();
    const patch = await refusal(call(WebhookSubject.update, { principal: admin, id: hook.id, url: 'https://192.168.1.1/' }, Webhook));
    expect(patch.code).toBe('validation_failed');
    expect((await call(WebhookSubject.get, { principal: admin, id: hook.id }, Webhook)).url).toBe('https://hooks.example.com/arbiter');
    expect((await call(WebhookSubject.list, { principal: admin, limit: 200 }, WebhookPage)).items).toHaveLength(before + 1);
  });
});

describe('pings, deliveries and retries', () => {
  let local: Webhooks;
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv();
    local = await env.start({ WEBHOOKS_RETRY_HOURS: '0.0003' });
  });
  afterAll(async () => {
    await env?.close();
  });
  const req = <T>(subject: string, payload: object, reply: z.ZodType<T>) => env.client.request(subject, payload, reply);

  it('sends a signed ping, pages deliveries by cursor and status, retries a failed one and prunes old ones', async () => {
    receiver.answer = () => ({ status: 204 });
    const hook = await req(WebhookSubject.create, { principal: admin, url: receiver.url, events: ['edited'] }, WebhookWithSecret);
    const ping = await req(WebhookSubject.test, { principal: admin, id: hook.id }, WebhookTestReply);
    await eventually(() => expect(receiver.ids()).toContain(ping.eventId), 20_000);
    const got = receiver.received.find((r) => r.id === ping.eventId)!;
    expect(verifies(got, hook.secret)).toBe(true);
    expect(JSON.parse(got.body)).toMatchObject({ kind: 'ping', orgId: 'acme', resource: { type: 'webhook', id: hook.id } });

    // Three events the receiver fails until their retry window (about a second) is over; the
    // endpoint, failing throughout, is disabled with them.
    receiver.answer = () => ({ status: 400 });
    const events = [event('edited'), event('edited'), event('edited')];
    await env.publish(events);
    await eventually(
      async () => expect((await req(WebhookSubject.get, { principal: admin, id: hook.id }, Webhook)).disabledReason).toBe('failing'),
      20_000,
    );
    // Disabled: nothing more is taken; once the attempts under way are recorded, the deliveries the
    // first failure overtook are failed by hand, to have three failed ones to page through.
    await eventually(
      async () => expect(await env.sql('webhook_deliveries').where('endpoint_id', hook.id).whereNotNull('lease_until')).toEqual([]),
      20_000,
    );
    await env
      .sql('webhook_deliveries')
      .where({ endpoint_id: hook.id, status: 'pending' })
      .update({ status: 'failed', finished_at: new Date(), next_attempt_at: null });
    const first = await req(WebhookSubject.deliveries, { principal: admin, id: hook.id, limit: 2, status: 'failed' }, WebhookDeliveryPage);
    expect(first.items).toHaveLength(2);
    expect([...first.items].every((d) => d.attempts.length > 0 && d.attempts[0]!.statusCode === 400)).toBe(true);
    const second = await req(
      WebhookSubject.deliveries,
      { principal: admin, id: hook.id, limit: 2, status: 'failed', cursor: first.nextCursor! },
      WebhookDeliveryPage,
    );
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    expect(new Set([...first.items, ...second.items].map((d) => d.eventId))).toEqual(new Set(events.map((e) => e.eventId)));
    const delivered = await req(
      WebhookSubject.deliveries,
      { principal: admin, id: hook.id, limit: 10, status: 'delivered' },
      WebhookDeliveryPage,
    );
    expect(delivered.items.map((d) => d.eventId)).toEqual([ping.eventId]);

    receiver.answer = () => ({ status: 200 });
    await req(WebhookSubject.update, { principal: admin, id: hook.id, enabled: true }, Webhook);
    const failed = first.items[0]!;
    const retried = await req(WebhookSubject.retry, { principal: admin, id: hook.id, deliveryId: failed.id }, WebhookDelivery);
    expect(retried.status).toBe('pending');
    await eventually(async () => {
      const page = await req(
        WebhookSubject.deliveries,
        { principal: admin, id: hook.id, limit: 10, status: 'delivered' },
        WebhookDeliveryPage,
      );
      expect(page.items.map((d) => d.id)).toContain(failed.id);
    }, 20_000);
    const unknown = await refusal(req(WebhookSubject.retry, { principal: admin, id: hook.id, deliveryId: hook.id }, WebhookDelivery));
    expect(unknown.code).toBe('not_found');

    // Pruning: deliveries finished (and attempts made) before the log window go.
    await env
      .sql('webhook_deliveries')
      .where('endpoint_id', hook.id)
      .whereNot('status', 'pending')
      .update({ finished_at: new Date(Date.now() - 40 * 86_400_000) });
    await env.sql('webhook_attempts').update({ at: new Date(Date.now() - 40 * 86_400_000) });
    expect(await local.prune()).toBe(4);
    const after = await req(WebhookSubject.deliveries, { principal: admin, id: hook.id, limit: 10 }, WebhookDeliveryPage);
    expect(after.items).toEqual([]);
    expect(Number(((await env.sql('webhook_attempts').count('* as n')) as { n: string }[])[0]!.n)).toBe(0);
  });
});

it('keeps the service ready while it runs', () => {
  expect(service.consumer.isConnected()).toBe(true);
});
