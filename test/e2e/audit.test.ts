/**
 * The audit trail end to end: the real services (execution, registry, audit, gateway) as built
 * processes; every change and run through the public API shows up once in `GET /audit` with the
 * right actor and resource; with the audit service down, runs and edits go on and the trail
 * catches up when it is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let adminKeyId: string;

interface Ev {
  eventId: string;
  kind: string;
  actor: { userId: string; apiKeyId?: string };
  resource: { type: string; id: string; baseId?: string };
  details: Record<string, unknown>;
}

async function trail(query = ''): Promise<Ev[]> {
  const res = await call(stack, 'GET', `/audit?limit=200${query}`, { key: stack.adminKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items as Ev[];
}

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'audit', 'gateway'], env: { EVENTS_FLUSH_MS: '200' } });
  adminKeyId = (await call(stack, 'GET', '/me', { key: stack.adminKey })).body.apiKeyId as string;
}, 120_000);
afterAll(async () => stack?.stop());

describe('audit trail', () => {
  it('records each kind once, with the actor and the resource', async () => {
    const key = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', {
      key,
      body: { name: 'Licence', rule: 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.' },
    });
    expect(created.status).toBe(201);
    const { policyId, baseId } = created.body as { policyId: string; baseId: string };
    expect((await call(stack, 'PUT', `/policy/${policyId}`, { key, body: { status: 'draft', description: 'edited once' } })).status).toBe(
      200,
    );
    expect((await call(stack, 'PUT', `/policy/${policyId}`, { key, body: { status: 'published' } })).status).toBe(201);
    for (let i = 0; i < 3; i++) {
      expect((await call(stack, 'POST', `/run/policy/${baseId}`, { key, body: { driver: { age: 20 } } })).status).toBe(200);
    }
    const group = (await call(stack, 'POST', '/group', { key, body: { name: 'drivers' } })).body as { groupId: string };
    expect(
      (await call(stack, 'POST', `/group/${group.groupId}/member`, { key, body: { memberId: baseId, memberType: 'policy' } })).status,
    ).toBe(201);
    expect((await call(stack, 'PUT', '/users/carol', { key, body: { role: 'auditor' } })).status).toBeLessThan(300);
    const apiKey = (await call(stack, 'POST', '/apikeys', { key, body: { name: 'temp', scopes: ['view'] } })).body as { apiKeyId: string };
    expect((await call(stack, 'DELETE', `/apikeys/${apiKey.apiKeyId}`, { key })).status).toBe(204);
    expect((await call(stack, 'PUT', '/org/settings', { key, body: { governanceApproval: true } })).status).toBe(200);
    expect((await call(stack, 'PUT', '/org/settings', { key, body: { governanceApproval: false } })).status).toBe(200);
    expect((await call(stack, 'DELETE', `/policy/${policyId}`, { key })).status).toBeLessThan(300);
    expect((await call(stack, 'DELETE', '/users/carol', { key })).status).toBeLessThan(300);

    const want: Array<[string, string, string]> = [
      ['created', 'policy', baseId],
      ['edited', 'policy', baseId],
      ['published', 'policy', baseId],
      ['executed', 'policy', baseId],
      ['created', 'group', group.groupId],
      ['assigned', 'group', group.groupId],
      ['assigned', 'user', 'carol'],
      ['key created', 'apikey', apiKey.apiKeyId],
      ['key revoked', 'apikey', apiKey.apiKeyId],
      ['settings changed', 'org', 'acme'],
      ['deleted', 'policy', baseId],
      ['member removed', 'user', 'carol'],
    ];
    const matches = (e: Ev, [kind, type, id]: [string, string, string]) =>
      e.kind === kind && e.resource.type === type && (e.resource.id === id || e.resource.baseId === id);
    let events: Ev[] = [];
    const runsCounted = () => events.filter((e) => e.kind === 'executed').reduce((n, e) => n + Number(e.details.count), 0);
    // The execution service's `executed` events travel on their own (their window closes every
    // EVENTS_FLUSH_MS): a window's event may reach the trail after the later actions' events.
    await expect
      .poll(
        async () => {
          events = await trail();
          return { missing: want.filter((w) => !events.some((e) => matches(e, w))), runs: runsCounted() };
        },
        { timeout: 20_000, interval: 250 },
      )
      .toEqual({ missing: [], runs: 3 });
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    for (const w of want) {
      const found = events.filter((e) => matches(e, w));
      // `settings changed` happened twice (on, then off); runs are counted per window (the 3 runs may span two);
      // every other action once.
      if (w[0] === 'executed') expect(found.reduce((n, e) => n + Number(e.details.count), 0)).toBe(3);
      else expect(found, w.join(' ')).toHaveLength(w[0] === 'settings changed' ? 2 : 1);
      expect(found[0]!.actor).toEqual({ userId: 'admin', apiKeyId: adminKeyId });
    }
    const executed = events.find((e) => e.kind === 'executed')!;
    expect(executed.details).toMatchObject({ aggregated: true, falseCount: 0, errorCount: 0 });
    expect(executed.resource).toEqual({ type: 'policy', id: policyId, baseId });
  });

  it('keeps runs and edits working while the audit service is down; the trail catches up', async () => {
    const key = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', {
      key,
      body: { name: 'Offline', rule: 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.' },
    });
    const { policyId, baseId } = created.body as { policyId: string; baseId: string };
    await stack.stopService('audit');
    expect((await call(stack, 'GET', '/audit', { key })).status).toBe(503);
    for (let i = 0; i < 20; i++) {
      expect((await call(stack, 'POST', `/run/policy/${baseId}`, { key, body: { driver: { age: 30 } } })).status).toBe(200);
    }
    expect((await call(stack, 'PUT', `/policy/${policyId}`, { key, body: { status: 'draft', description: 'offline edit' } })).status).toBe(
      200,
    );
    await stack.startService('audit');
    await expect
      .poll(
        async () => {
          const events = await trail(`&baseId=${baseId}`);
          const runs = events.filter((e) => e.kind === 'executed').reduce((n, e) => n + Number(e.details.count), 0);
          return { runs, edited: events.filter((e) => e.kind === 'edited').length };
        },
        { timeout: 20_000, interval: 250 },
      )
      .toEqual({ runs: 20, edited: 1 });
  }, 60_000);
});
