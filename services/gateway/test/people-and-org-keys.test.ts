import type { ArbiterEvent } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestDatabase, TestRedis } from './support/servers.js';
import { closeGatewayEnv, openGatewayEnv } from './support/app-env.js';
import { GATEWAY_OUTBOX_TABLE } from '../src/events/outbox.js';
import { memberKey, newOrg, problem, signToken, startGateway, withKey, withToken } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;
let otherOrgKey: string;

beforeAll(async () => {
  ({ db, redis, app, adminKey } = await openGatewayEnv());
  otherOrgKey = await newOrg(db, 'beta');
});

afterAll(() => closeGatewayEnv({ app, redis, db }));

const get = (url: string, key: string) => app.inject({ method: 'GET', url, headers: withKey(key) });
const del = (url: string, key: string) => app.inject({ method: 'DELETE', url, headers: withKey(key) });

describe('GET /users/{userId}', () => {
  it('answers a member for an admin; 404 for a stranger or another org’s member; 403 below admin; 401 without credentials', async () => {
    const editorKey = await memberKey(app, adminKey, 'acme', 'erin', 'editor', ['view', 'edit']);
    const res = await get('/users/erin', adminKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ userId: 'erin', role: 'editor', createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(problem(await get('/users/nobody', adminKey))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await get('/users/erin', otherOrgKey))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await get('/users/erin', editorKey))).toMatchObject({ status: 403, code: 'forbidden' });
    expect((await app.inject({ method: 'GET', url: '/users/erin' })).statusCode).toBe(401);
  });
});

describe('DELETE /users/{userId}', () => {
  it('removes the member and revokes their keys at once (and keys made with them), with events', async () => {
    const victimKey = await memberKey(app, adminKey, 'acme', 'vic', 'publisher', ['view', 'edit', 'publish']);
    const madeWith = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(victimKey),
      payload: { name: 'child', scopes: ['view'] },
    });
    expect(madeWith.statusCode).toBe(201);
    const childKey = madeWith.json<{ key: string }>().key;
    expect((await get('/me', victimKey)).statusCode).toBe(200); // cached grant
    expect((await get('/me', childKey)).statusCode).toBe(200);

    expect((await del('/users/vic', adminKey)).statusCode).toBe(204);
    expect(problem(await get('/me', victimKey))).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(problem(await get('/me', childKey))).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(problem(await get('/users/vic', adminKey))).toMatchObject({ status: 404 });

    const events = (await db.db(GATEWAY_OUTBOX_TABLE).select('payload')).map((r: { payload: ArbiterEvent }) => r.payload);
    const kinds = events.filter((e) => e.kind === 'member removed' || e.kind === 'key revoked');
    expect(kinds.filter((e) => e.kind === 'member removed').map((e) => e.resource.id)).toContain('vic');
    expect(kinds.filter((e) => e.kind === 'key revoked').length).toBeGreaterThanOrEqual(2);

    // Added again later, the old keys stay invalid (they went with the membership).
    await app.inject({ method: 'PUT', url: '/users/vic', headers: withKey(adminKey), payload: { role: 'publisher' } });
    expect(problem(await get('/me', victimKey))).toMatchObject({ status: 401 });
  });

  it('keeps a removed member out: their still-valid bearer token is refused (403) until an admin adds them back', async () => {
    const token = await signToken({ sub: 'remy', org: 'acme' });
    const key = await memberKey(app, adminKey, 'acme', 'remy', 'editor', ['view', 'edit']);
    const me = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/me', headers });
    expect((await me(withToken(token))).json()).toMatchObject({ userId: 'remy', role: 'editor' });
    expect((await me(withKey(key))).statusCode).toBe(200); // its grant is cached now

    expect((await del('/users/remy', adminKey)).statusCode).toBe(204);
    for (let i = 0; i < 2; i++) {
      expect(problem(await me(withToken(token)))).toMatchObject({
        status: 403,
        code: 'forbidden',
        detail: 'user `remy` was removed from org `acme`; their tokens are refused until an admin adds them back (`PUT /users/{userId}`)',
      });
    }
    // A new token of the same user, and one made for another route, are refused too; nothing made them a member again.
    const fresh = await signToken({ sub: 'remy', org: 'acme' }, { expiresIn: '1h' });
    expect(
      problem(await app.inject({ method: 'POST', url: '/apikeys', headers: withToken(fresh), payload: { name: 'k', scopes: ['view'] } })),
    ).toMatchObject({ status: 403, code: 'forbidden' });
    expect(problem(await me(withKey(key)))).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(problem(await get('/users/remy', adminKey))).toMatchObject({ status: 404 });
    // Another replica (its own process, same database and Redis) refuses them as well.
    const replica = await startGateway(db, redis);
    try {
      expect(problem(await replica.inject({ method: 'GET', url: '/me', headers: withToken(token) }))).toMatchObject({ status: 403 });
      expect(problem(await replica.inject({ method: 'GET', url: '/me', headers: withKey(key) }))).toMatchObject({ status: 401 });
    } finally {
      await replica.close();
    }
    // Someone else's first sign-in still joins as a viewer.
    expect((await me(withToken(await signToken({ sub: 'newcomer', org: 'acme' })))).json()).toMatchObject({ role: 'viewer' });

    // Added back by an admin: the same token works again, with the role the admin gave; the old key stays revoked.
    const put = await app.inject({ method: 'PUT', url: '/users/remy', headers: withKey(adminKey), payload: { role: 'viewer' } });
    expect(put.statusCode).toBe(201);
    expect((await me(withToken(token))).json()).toMatchObject({ userId: 'remy', role: 'viewer' });
    expect(problem(await me(withKey(key)))).toMatchObject({ status: 401 });
    // Removed again: refused again.
    expect((await del('/users/remy', adminKey)).statusCode).toBe(204);
    expect(problem(await me(withToken(token)))).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('refuses a removed member of one org in that org only: their token for another org still signs them in there', async () => {
    await app.inject({ method: 'PUT', url: '/users/two-orgs', headers: withKey(adminKey), payload: { role: 'viewer' } });
    expect((await del('/users/two-orgs', adminKey)).statusCode).toBe(204);
    expect(
      problem(await app.inject({ method: 'GET', url: '/me', headers: withToken(await signToken({ sub: 'two-orgs', org: 'acme' })) })),
    ).toMatchObject({ status: 403 });
    const beta = await app.inject({ method: 'GET', url: '/me', headers: withToken(await signToken({ sub: 'two-orgs', org: 'beta' })) });
    expect(beta.json()).toMatchObject({ orgId: 'beta', userId: 'two-orgs', role: 'viewer' });
  });

  it('never removes the last admin (409); 404 for a stranger or another org’s member; 403 below admin', async () => {
    const soloKey = await newOrg(db, 'solo', 'only');
    expect(problem(await del('/users/only', soloKey))).toMatchObject({
      status: 409,
      code: 'conflict',
      detail: '`only` is the last admin of org `solo`; make another member admin first',
    });
    expect((await get('/me', soloKey)).statusCode).toBe(200);
    expect(problem(await del('/users/nobody', adminKey))).toMatchObject({ status: 404, code: 'not_found' });
    await memberKey(app, adminKey, 'acme', 'pat', 'viewer', ['view']);
    expect(problem(await del('/users/pat', otherOrgKey))).toMatchObject({ status: 404 });
    const viewerKey = await memberKey(app, adminKey, 'acme', 'val', 'viewer', ['view']);
    expect(problem(await del('/users/pat', viewerKey))).toMatchObject({ status: 403, code: 'forbidden' });
    expect((await get('/users/pat', adminKey)).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: '/users/pat' })).statusCode).toBe(401);
  });
});

describe('GET /apikeys?all=true', () => {
  it('lists every key of the org for an admin with owner and last use, never secrets; 403 below admin; other orgs not shown', async () => {
    const ownerKey = await memberKey(app, adminKey, 'acme', 'olga', 'editor', ['view', 'edit']);
    expect((await get('/me', ownerKey)).statusCode).toBe(200);
    const res = await get('/apikeys?all=true&limit=200', adminKey);
    expect(res.statusCode).toBe(200);
    const items = res.json<{ items: Array<Record<string, unknown>> }>().items;
    const olga = items.find((k) => k.owner === 'olga');
    expect(olga).toMatchObject({ name: 'olga key', scopes: ['view', 'edit'], lastUsedAt: expect.any(String) });
    expect(JSON.stringify(items)).not.toContain(ownerKey);
    expect(items.some((k) => k.owner === 'admin')).toBe(true);
    const beta = (await get('/apikeys?all=true', otherOrgKey)).json<{ items: Array<{ owner: string }> }>().items;
    expect(beta.map((k) => k.owner)).toEqual(['admin']);

    expect(problem(await get('/apikeys?all=true', ownerKey))).toMatchObject({ status: 403, code: 'forbidden' });
    const own = (await get('/apikeys', ownerKey)).json<{ items: Array<{ owner: string }> }>().items;
    expect(own.map((k) => k.owner)).toEqual(['olga']);
    expect(problem(await get('/apikeys?all=yes', adminKey))).toMatchObject({ status: 400 });
  });

  it('an admin revokes any key of the org from that list', async () => {
    const key = await memberKey(app, adminKey, 'acme', 'rick', 'viewer', ['view']);
    const listed = (await get('/apikeys?all=true&limit=200', adminKey)).json<{ items: Array<{ owner: string; apiKeyId: string }> }>().items;
    const rick = listed.find((k) => k.owner === 'rick')!;
    expect((await del(`/apikeys/${rick.apiKeyId}`, adminKey)).statusCode).toBe(204);
    expect((await get('/me', key)).statusCode).toBe(401);
  });

  it('keeps lastUsedAt without a write per request: one flush writes every use since', async () => {
    const token = await signToken({ sub: 'admin', org: 'acme' });
    const key = await memberKey(app, adminKey, 'acme', 'uma', 'viewer', ['view']);
    const before = (await app.inject({ method: 'GET', url: '/apikeys?all=true&limit=200', headers: withToken(token) })).json<{
      items: Array<{ owner: string; lastUsedAt: string | null }>;
    }>();
    expect(before.items.find((k) => k.owner === 'uma')?.lastUsedAt).toBeNull();
    for (let i = 0; i < 5; i++) expect((await get('/me', key)).statusCode).toBe(200);
    const stored = await db.db('api_keys').where({ user_id: 'uma' }).first('last_used_at');
    expect(stored.last_used_at).toBeNull(); // not written per request
    const after = (await app.inject({ method: 'GET', url: '/apikeys?all=true&limit=200', headers: withToken(token) })).json<{
      items: Array<{ owner: string; lastUsedAt: string | null }>;
    }>();
    expect(after.items.find((k) => k.owner === 'uma')?.lastUsedAt).toEqual(expect.any(String));
  });
});
