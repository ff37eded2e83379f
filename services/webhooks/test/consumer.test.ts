/**
 * The durable consumer on a real stream: an event the database refuses at every try (text
 * PostgreSQL cannot hold) is parked on the dead-letter stream after `WEBHOOKS_MAX_DELIVERIES`
 * deliveries, with its headers and a metric, and the events after it flow meanwhile.
 */
import { deadEventStreamName } from '@arbiter/contracts';
import { streamMessages } from '@arbiter/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookSubject, WebhookWithSecret } from '@arbiter/contracts';
import { as, event, eventually, Receiver, startTestEnv, type TestEnv } from './support.js';

let t: TestEnv | undefined;
let r: Receiver | undefined;
afterEach(async () => {
  await r?.close();
  await t?.close();
});

describe('the webhooks consumer', () => {
  it('parks an event it cannot fan out after its last delivery, counts it, and goes on with the next', async () => {
    t = await startTestEnv();
    await t.start({ WEBHOOKS_MAX_DELIVERIES: '2' });
    r = await Receiver.start();
    await t.client.request(WebhookSubject.create, { principal: as('admin'), url: r.url, events: ['edited'] }, WebhookWithSecret);
    const poison = event('edited', { orgId: 'ac\u0000me' });
    const next = event('edited');
    await t.publish([poison, next]);
    await eventually(() => expect(r!.ids()).toEqual([next.eventId]), 20_000);
    const dead = await eventually(async () => {
      const msgs = await streamMessages(t!.jsm, deadEventStreamName(t!.prefix));
      expect(msgs).toHaveLength(1);
      return msgs[0]!;
    }, 20_000);
    expect(dead.json<{ eventId: string }>().eventId).toBe(poison.eventId);
    expect(dead.header?.get('Arbiter-Consumer')).toBe('webhooks');
    expect(dead.header?.get('Arbiter-Deliveries')).toBe('2');
    const metric = await t.metrics.getSingleMetric('arbiter_webhooks_events_dead_lettered_total')!.get();
    expect(metric.values[0]!.value).toBe(1);
  });
});
