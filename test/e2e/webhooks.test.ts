/**
 * Webhooks end to end through the gateway: the real services (execution, registry, audit, webhooks,
 * gateway) as built processes and a local HTTP receiver verifying each request with the
 * `standardwebhooks` package. An admin registers an endpoint (its secret shown once); a change
 * made through the API reaches it signed, its body the event as `GET /audit` shows it; a ping
 * verifies with both secrets after a rotation; deliveries are listed; the management is audited;
 * a key without `admin` and another org's admin get nothing, a bad URL is a clear 400.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@arbiter/test-kit';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

interface Got {
  id: string;
  headers: Record<string, string>;
  body: string;
}

let stack: Stack;
let server: Server;
const received: Got[] = [];
let receiverUrl: string;
let globexKey: string;
let viewKey: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h])]));
      received.push({ id: headers['webhook-id']!, headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/arbiter`;
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'webhooks', 'gateway'],
    // The receiver is on this machine, over http: allowed for this stack only.
    env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_ALLOW_HTTP: 'true' },
  });
  const created = stack.admin(['create-org', 'globex', '--admin', 'gus']);
  expect(created.status, created.stderr).toBe(0);
  globexKey = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
  const key = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name: 'view only', scopes: ['view'] } });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  viewKey = key.body.key as string;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const verifies = (got: Got, secret: string): boolean => {
  try {
    new Webhook(secret).verify(got.body, got.headers);
    return true;
  } catch {
    return false;
  }
};

describe('webhooks through the gateway', () => {
  it('delivers a change signed, with the event as GET /audit shows it; rotation, ping, deliveries and audit', async () => {
    const key = stack.adminKey;
    const hook = await call(stack, 'POST', '/webhooks', { key, body: { url: receiverUrl, events: ['created'], description: 'CI' } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const { id, secret } = hook.body as { id: string; secret: string };
    expect(secret).toMatch(/^whsec_/);
    const shown = await call(stack, 'GET', `/webhooks/${id}`, { key });
    expect(shown.status).toBe(200);
    expect(shown.body).not.toHaveProperty('secret');
    expect((await call(stack, 'GET', '/webhooks', { key })).body.items.map((w: { id: string }) => w.id)).toEqual([id]);

    const policy = await call(stack, 'POST', '/policy', {
      key,
      body: { name: 'Licence', rule: 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.' },
    });
    expect(policy.status).toBe(201);
    const baseId = policy.body.baseId as string;
    const got = await eventually(() => {
      const g = received.find((r) => (JSON.parse(r.body) as { resource: { baseId?: string } }).resource.baseId === baseId);
      if (!g) throw new Error('not delivered yet');
      return g;
    }, 30_000);
    expect(verifies(got, secret)).toBe(true);
    const sent = JSON.parse(got.body) as { eventId: string; kind: string };
    expect(sent.kind).toBe('created');
    expect(got.id).toBe(sent.eventId);
    const audited = await eventually(async () => {
      const page = await call(stack, 'GET', `/audit?resourceId=${policy.body.policyId as string}&kind=created`, { key });
      expect(page.body.items).toHaveLength(1);
      return page.body.items[0] as unknown;
    }, 30_000);
    expect(sent).toEqual(audited);

    const rotated = await call(stack, 'POST', `/webhooks/${id}/secret`, { key });
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    const ping = await call(stack, 'POST', `/webhooks/${id}/test`, { key });
    expect(ping.status).toBe(202);
    const pinged = await eventually(() => {
      const g = received.find((r) => r.id === ping.body.eventId);
      if (!g) throw new Error('no ping yet');
      return g;
    }, 30_000);
    expect([verifies(pinged, secret), verifies(pinged, newSecret)]).toEqual([true, true]);

    const deliveries = await call(stack, 'GET', `/webhooks/${id}/deliveries?status=delivered`, { key });
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.items.map((d: { eventId: string }) => d.eventId).sort()).toEqual([sent.eventId, ping.body.eventId].sort());
    const retry = await call(stack, 'POST', `/webhooks/${id}/deliveries/${deliveries.body.items[0].id as string}/retry`, { key });
    expect(retry.status).toBe(202);

    const patched = await call(stack, 'PATCH', `/webhooks/${id}`, { key, body: { events: ['*'] } });
    expect([patched.status, patched.body.events]).toEqual([200, ['*']]);
    expect((await call(stack, 'DELETE', `/webhooks/${id}`, { key })).status).toBe(200);
    expect((await call(stack, 'GET', `/webhooks/${id}`, { key })).status).toBe(404);
    await eventually(async () => {
      const page = await call(stack, 'GET', `/audit?resourceId=${id}`, { key });
      expect(page.body.items.map((e: { kind: string }) => e.kind).sort()).toEqual([
        'webhook changed',
        'webhook changed',
        'webhook created',
        'webhook deleted',
      ]);
    }, 30_000);
  });

  it("refuses a key without `admin`, hides an org's endpoints from another org, and answers a bad URL with a clear 400", async () => {
    const key = stack.adminKey;
    const hook = await call(stack, 'POST', '/webhooks', { key, body: { url: receiverUrl, events: ['*'] } });
    expect(hook.status).toBe(201);
    const id = hook.body.id as string;
    const denied = await call(stack, 'POST', '/webhooks', { key: viewKey, body: { url: receiverUrl, events: ['*'] } });
    expect([denied.status, denied.body.code]).toEqual([403, 'forbidden']);
    expect((await call(stack, 'GET', '/webhooks', { key: viewKey })).status).toBe(403);
    expect((await call(stack, 'GET', `/webhooks/${id}`, { key: globexKey })).status).toBe(404);
    expect((await call(stack, 'DELETE', `/webhooks/${id}`, { key: globexKey })).status).toBe(404);
    expect((await call(stack, 'GET', '/webhooks', { key: globexKey })).body.items).toEqual([]);
    const bad = await call(stack, 'POST', '/webhooks', { key, body: { url: 'ftp://example.com/x', events: ['*'] } });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
    expect(bad.body.detail).toMatch(/https URL/);
    const noKinds = await call(stack, 'POST', '/webhooks', { key, body: { url: receiverUrl, events: ['decided'] } });
    expect([noKinds.status, noKinds.body.code]).toEqual([400, 'validation_failed']);
    expect((await call(stack, 'GET', `/webhooks/${id}`, { key })).status).toBe(200);
  });
});
