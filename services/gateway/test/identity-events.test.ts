import { TypedEvent, type ArbiterEvent } from '@arbiter/contracts';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_OUTBOX_TABLE } from '../src/events/outbox.js';
import type { TestDatabase, TestRedis } from './support/servers.js';
import { closeGatewayEnv, openGatewayEnv } from './support/app-env.js';
import { memberKey, withKey } from './support/gateway.js';

// The gateway's identity changes write their audit events into its outbox in the change's own
// transaction (service-kit's relay publishes them; its tests cover that part).
let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;

beforeAll(async () => ({ db, redis, app, adminKey } = await openGatewayEnv()));

afterAll(() => closeGatewayEnv({ app, redis, db }));

async function outboxSince(id: number): Promise<Array<{ id: number; event: ArbiterEvent }>> {
  const rows = (await db.db(GATEWAY_OUTBOX_TABLE).where('id', '>', id).orderBy('id')) as Array<{ id: string; payload: ArbiterEvent }>;
  // Every identity event has the details its kind is typed with.
  for (const r of rows) expect(TypedEvent.parse(r.payload)).toEqual(r.payload);
  return rows.map((r) => ({ id: Number(r.id), event: r.payload }));
}

async function lastId(): Promise<number> {
  const row = (await db.db(GATEWAY_OUTBOX_TABLE).max({ id: 'id' }).first()) as { id: string | null } | undefined;
  return Number(row?.id ?? 0);
}

describe('identity events in the outbox', () => {
  it('records a role assignment as `assigned`, with the actor and whether the member was added', async () => {
    const before = await lastId();
    expect(
      (await app.inject({ method: 'PUT', url: '/users/dana', headers: withKey(adminKey), payload: { role: 'editor' } })).statusCode,
    ).toBe(201);
    expect(
      (await app.inject({ method: 'PUT', url: '/users/dana', headers: withKey(adminKey), payload: { role: 'publisher' } })).statusCode,
    ).toBe(200);
    const events = (await outboxSince(before)).map((r) => r.event);
    expect(events).toHaveLength(2);
    const me = (await app.inject({ method: 'GET', url: '/me', headers: withKey(adminKey) })).json<{ apiKeyId: string }>();
    expect(events[0]).toMatchObject({
      orgId: 'acme',
      kind: 'assigned',
      actor: { userId: 'admin', apiKeyId: me.apiKeyId },
      resource: { type: 'user', id: 'dana' },
      details: { role: 'editor', added: true },
    });
    expect(events[1]).toMatchObject({ kind: 'assigned', details: { role: 'publisher', added: false } });
  });

  it('records key creation and revocation (once) without the secret', async () => {
    const me = (await app.inject({ method: 'GET', url: '/me', headers: withKey(adminKey) })).json<{ apiKeyId: string }>();
    const before = await lastId();
    const created = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(adminKey),
      payload: { name: 'ci', scopes: ['view'] },
    });
    expect(created.statusCode).toBe(201);
    const { apiKeyId, key } = created.json<{ apiKeyId: string; key: string }>();
    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${apiKeyId}`, headers: withKey(adminKey) })).statusCode).toBe(204);
    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${apiKeyId}`, headers: withKey(adminKey) })).statusCode).toBe(204);
    const rows = await outboxSince(before);
    expect(rows.map((r) => [r.event.kind, r.event.resource])).toEqual([
      ['key created', { type: 'apikey', id: apiKeyId }],
      ['key revoked', { type: 'apikey', id: apiKeyId }],
    ]);
    expect(rows[0]!.event.details).toEqual({
      name: 'ci',
      scopes: ['view'],
      owner: 'admin',
      expiresAt: null,
      createdWithKeyId: me.apiKeyId,
    });
    expect(JSON.stringify(rows)).not.toContain(key);
  });

  it('records a settings change with its old and new value, and nothing when nothing changed', async () => {
    const before = await lastId();
    const put = (governanceApproval: boolean) =>
      app.inject({ method: 'PUT', url: '/org/settings', headers: withKey(adminKey), payload: { governanceApproval } });
    expect((await put(true)).statusCode).toBe(200);
    expect((await put(true)).statusCode).toBe(200);
    const events = (await outboxSince(before)).map((r) => r.event);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'settings changed',
      resource: { type: 'org', id: 'acme' },
      details: { governanceApproval: { from: false, to: true } },
    });
    expect(events[0].details).not.toHaveProperty('minCoverage');
    await put(false);
  });

  it('records a minCoverage change with its old and new value', async () => {
    const before = await lastId();
    const put = (minCoverage: number) =>
      app.inject({ method: 'PUT', url: '/org/settings', headers: withKey(adminKey), payload: { governanceApproval: false, minCoverage } });
    expect((await put(70)).statusCode).toBe(200);
    expect((await put(70)).statusCode).toBe(200);
    const events = (await outboxSince(before)).map((r) => r.event);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'settings changed',
      details: { governanceApproval: { from: false, to: false }, minCoverage: { from: 0, to: 70 } },
    });
    await put(0);
  });

  it('records nothing for a change that is refused (the last admin stays admin)', async () => {
    const before = await lastId();
    const res = await app.inject({ method: 'PUT', url: '/users/admin', headers: withKey(adminKey), payload: { role: 'viewer' } });
    expect(res.statusCode).toBe(409);
    expect(await outboxSince(before)).toEqual([]);
    // and a member's own key shows as the actor of what it does
    const erinKey = await memberKey(app, adminKey, 'acme', 'erin', 'admin', ['view', 'admin']);
    const before2 = await lastId();
    await app.inject({ method: 'PUT', url: '/users/frank', headers: withKey(erinKey), payload: { role: 'viewer' } });
    expect((await outboxSince(before2))[0]?.event.actor.userId).toBe('erin');
  });
});
