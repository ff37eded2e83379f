/**
 * Webhooks under faults (docs/design/webhooks.md): 1,000 events are published for one endpoint;
 * while deliveries are in flight the webhooks service is killed with SIGKILL, and the receiver goes
 * down too. The service comes back, keeps retrying into the refused connections, and once the
 * receiver is back every event arrives: each `webhook-id` seen at least once. Duplicates (attempts
 * the receiver answered but the service had not recorded when it died, or answers lost when the
 * receiver went down) are counted and printed; they are bounded by the attempts that can be in
 * flight, twice `WEBHOOKS_CONCURRENCY`. The receiver's outage is `WEBHOOKS_FAULT_DOWN_MS` (10 s by
 * default; the 60 s with `WEBHOOKS_FAULT_DOWN_MS=60000`).
 * `npm run test:faults` runs it with the fault suite; `npm test` runs it with the other end-to-end suites.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { eventSubject, type ArbiterEvent } from '@arbiter/contracts';
import { natsServers } from '@arbiter/service-kit';
import { eventually, freePort } from '@arbiter/test-kit';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';

const EVENTS = 1000;
const CONCURRENCY = 4;
const DOWN_MS = Number(process.env.WEBHOOKS_FAULT_DOWN_MS ?? 10_000);

let stack: Stack;
let nc: NatsConnection;
let port: number;
let server: Server | undefined;
let secret = '';
/** Times each `webhook-id` arrived with a valid signature. */
const seen = new Map<string, number>();
let invalid = 0;

function startReceiver(): Promise<void> {
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h])]));
      try {
        new Webhook(secret).verify(body, headers);
        seen.set(headers['webhook-id']!, (seen.get(headers['webhook-id']!) ?? 0) + 1);
      } catch {
        invalid += 1;
      }
      res.writeHead(204).end();
    });
  });
  server = s;
  return new Promise((resolve) => s.listen(port, '127.0.0.1', resolve));
}

async function stopReceiver(): Promise<void> {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
}

beforeAll(async () => {
  port = await freePort();
  stack = await startStack({
    services: ['webhooks', 'gateway'],
    env: {
      LOG_LEVEL: 'warn',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_ALLOW_HTTP: 'true',
      WEBHOOKS_CONCURRENCY: String(CONCURRENCY),
      WEBHOOKS_RETRY_BASE_MS: '250',
      WEBHOOKS_RETRY_MAX_DELAY_MS: '2000',
      WEBHOOKS_POLL_MS: '200',
    },
  });
  nc = await connect({ servers: natsServers(stack.env.NATS_URL!) });
  await startReceiver();
}, 120_000);

afterAll(async () => {
  await stopReceiver();
  await nc?.close().catch(() => undefined);
  await stack?.stop();
});

describe('webhooks under faults', () => {
  it('delivers every event at least once across a SIGKILL of the service and a receiver outage', async () => {
    const hook = await call(stack, 'POST', '/webhooks', {
      key: stack.adminKey,
      body: { url: `http://127.0.0.1:${port}/hook`, events: ['edited'] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    secret = hook.body.secret as string;
    const js = jetstream(nc, { timeout: 10_000 });
    const ids: string[] = [];
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const e: ArbiterEvent = {
        eventId: randomUUID(),
        orgId: stack.orgId,
        kind: 'edited',
        at: new Date().toISOString(),
        actor: { userId: 'load' },
        resource: { type: 'policy', id: randomUUID(), baseId: randomUUID() },
        details: { i },
      };
      ids.push(e.eventId);
      pending.push(js.publish(eventSubject(stack.env.NATS_SUBJECT_PREFIX!, e.orgId, e.kind), JSON.stringify(e), { msgID: e.eventId }));
    }
    await Promise.all(pending);

    // Some delivered, most still to go: kill the service with attempts in flight, and take the receiver down.
    await eventually(() => expect(seen.size).toBeGreaterThanOrEqual(EVENTS / 10), { timeoutMs: 60_000, intervalMs: 20 });
    await stack.killService('webhooks');
    const atKill = seen.size;
    await stopReceiver();
    await stack.startService('webhooks');
    const downSince = Date.now();
    // The restarted service retries into refused connections for the whole outage.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, DOWN_MS - (Date.now() - downSince))));
    await startReceiver();

    await eventually(() => expect(seen.size).toBe(EVENTS), { timeoutMs: 180_000, intervalMs: 200 });
    expect(ids.filter((id) => !seen.has(id))).toEqual([]);
    const duplicates = [...seen.values()].reduce((n, c) => n + c - 1, 0);
    console.log(
      `webhooks fault: ${EVENTS} events, ${atKill} delivered before the SIGKILL, receiver down ${DOWN_MS} ms; ` +
        `every webhook-id seen; duplicates ${duplicates}; bad signatures ${invalid}`,
    );
    expect(invalid).toBe(0);
    expect(duplicates).toBeLessThanOrEqual(2 * CONCURRENCY);
  }, 300_000);
});
