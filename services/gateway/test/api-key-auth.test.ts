import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { memberKey, newOrg, problem, signToken, startGateway, withKey, withToken } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let replica: FastifyInstance;
let adminKey: string;
const clock = { now: new Date() };

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { now: () => clock.now });
  replica = await startGateway(db, redis);
  adminKey = await newOrg(db, 'acme');
});

afterAll(async () => {
  await app?.close();
  await replica?.close();
  await redis?.cleanup();
  await db?.drop();
});

const run = (a: FastifyInstance, headers: Record<string, string>) =>
  a.inject({ method: 'POST', url: '/run', headers, payload: { rule: 'x', data: {} } });

describe('x-api-key authentication', () => {
  it('refuses a request without a key (401 problem)', async () => {
    const res = await run(app, {});
    expect(problem(res)).toMatchObject({
      status: 401,
      code: 'unauthenticated',
      contentType: expect.stringContaining('application/problem+json'),
    });
    expect(problem(res).detail).toContain('x-api-key');
  });

  it.each([
    ['an unknown key', 'arb_thisKeyWasNeverIssuedByTheGatewayAtAll000'],
    ['an over-long key', 'x'.repeat(10_000)],
    ['a key that differs in one character', 'CHANGE'],
  ])('refuses %s (401)', async (_what, key) => {
    const used = key === 'CHANGE' ? adminKey.slice(0, -1) + (adminKey.endsWith('A') ? 'B' : 'A') : key;
    const res = await app.inject({ method: 'GET', url: '/me', headers: withKey(used) });
    expect(problem(res)).toMatchObject({ status: 401, code: 'unauthenticated', detail: 'the API key is not valid' });
  });

  it('refuses a bearer token on execution endpoints, which need an x-api-key (401)', async () => {
    const token = await signToken({ sub: 'admin', org: 'acme' });
    const res = await run(app, withToken(token));
    expect(problem(res)).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(problem(res).detail).toContain('`x-api-key`');
  });

  it('runs with a key that has scope view (200)', async () => {
    const res = await run(app, withKey(adminKey));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: true });
  });

  it('refuses a key without scope view on every execution endpoint (403)', async () => {
    const auditKey = await memberKey(app, adminKey, 'acme', 'aud', 'auditor', ['audit']);
    for (const req of [
      { method: 'POST' as const, url: '/run', payload: { rule: 'x', data: {} } },
      { method: 'POST' as const, url: '/validate', payload: { rule: 'x' } },
      { method: 'POST' as const, url: '/explain', payload: { rule: 'x' } },
      { method: 'GET' as const, url: '/operators' },
    ]) {
      const res = await app.inject({ ...req, headers: withKey(auditKey) });
      expect(problem(res)).toMatchObject({
        status: 403,
        code: 'forbidden',
        detail: 'the API key lacks scope `view`; this endpoint needs `view`',
      });
    }
  });

  it('refuses a viewer key on admin endpoints (403)', async () => {
    const viewerKey = await memberKey(app, adminKey, 'acme', 'vic', 'viewer', ['view']);
    const calls = [
      app.inject({ method: 'GET', url: '/users', headers: withKey(viewerKey) }),
      app.inject({ method: 'PUT', url: '/users/vic', headers: withKey(viewerKey), payload: { role: 'admin' } }),
      app.inject({ method: 'PUT', url: '/org/settings', headers: withKey(viewerKey), payload: { governanceApproval: true } }),
    ];
    for (const res of await Promise.all(calls)) {
      expect(problem(res)).toMatchObject({
        status: 403,
        code: 'forbidden',
        detail: 'role `viewer` does not include `admin`; this endpoint needs `admin`',
      });
    }
  });
});

describe('a key never exceeds its owner', () => {
  it('refuses to create a key with a scope beyond the role (403, clear detail)', async () => {
    const token = await signToken({ sub: 'ed', org: 'acme' });
    await app.inject({ method: 'PUT', url: '/users/ed', headers: withKey(adminKey), payload: { role: 'editor' } });
    const res = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withToken(token),
      payload: { name: 'too much', scopes: ['view', 'publish', 'admin'] },
    });
    expect(problem(res)).toMatchObject({
      status: 403,
      code: 'forbidden',
      detail: 'scope `publish`, `admin` exceeds your rights: your role allows `view`, `edit`',
    });
  });

  it('refuses to mint, from a narrow key, a key wider than the key in use (403)', async () => {
    const narrow = await memberKey(app, adminKey, 'acme', 'nina', 'admin', ['view', 'edit']);
    const res = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(narrow),
      payload: { name: 'wider', scopes: ['admin'] },
    });
    expect(problem(res)).toMatchObject({
      status: 403,
      code: 'forbidden',
      detail: 'scope `admin` exceeds your rights: your role and API key allow `view`, `edit`',
    });
  });

  it('a demoted owner’s key loses the rights on the very next request, on every replica', async () => {
    const carolKey = await memberKey(app, adminKey, 'acme', 'carol', 'admin', ['view', 'admin']);
    // warm the shared cache through both instances
    expect((await app.inject({ method: 'GET', url: '/users', headers: withKey(carolKey) })).statusCode).toBe(200);
    expect((await replica.inject({ method: 'GET', url: '/users', headers: withKey(carolKey) })).statusCode).toBe(200);

    const demote = await app.inject({ method: 'PUT', url: '/users/carol', headers: withKey(adminKey), payload: { role: 'viewer' } });
    expect(demote.statusCode).toBe(200);

    const onReplica = await replica.inject({ method: 'GET', url: '/users', headers: withKey(carolKey) });
    expect(problem(onReplica)).toMatchObject({ status: 403, code: 'forbidden' });
    expect((await replica.inject({ method: 'GET', url: '/me', headers: withKey(carolKey) })).json()).toMatchObject({ role: 'viewer' });
    // the key still runs rules: viewer ∩ {view, admin} = {view}
    expect((await run(replica, withKey(carolKey))).statusCode).toBe(200);

    await app.inject({ method: 'PUT', url: '/users/carol', headers: withKey(adminKey), payload: { role: 'admin' } });
    expect((await replica.inject({ method: 'GET', url: '/users', headers: withKey(carolKey) })).statusCode).toBe(200);
  });
});

describe('keys that make keys (docs/design/identity.md)', () => {
  const create = (headers: Record<string, string>, payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/apikeys', headers, payload });
  const ownKeyIds = async (key: string) =>
    (await app.inject({ method: 'GET', url: '/apikeys?limit=200', headers: withKey(key) }))
      .json<{ items: Array<{ apiKeyId: string }> }>()
      .items.map((k) => k.apiKeyId);

  it('refuses a key that can only read: a short-lived view key cannot mint a permanent one (403, nothing created)', async () => {
    clock.now = new Date();
    const expiresAt = new Date(clock.now.getTime() + 3600_000).toISOString();
    const shortLived = (await create(withKey(adminKey), { name: 'short view', scopes: ['view'], expiresAt })).json<{ key: string }>().key;
    const before = await ownKeyIds(adminKey);
    const res = await create(withKey(shortLived), { name: 'forever', scopes: ['view'] });
    expect(problem(res)).toMatchObject({
      status: 403,
      code: 'forbidden',
      detail: 'creating API keys with an API key needs its `edit`, `publish` or `admin` scope; this key allows `view`',
    });
    expect(await ownKeyIds(adminKey)).toEqual(before);
    const auditorKey = await memberKey(app, adminKey, 'acme', 'aude', 'auditor', ['view', 'audit']);
    expect(problem(await create(withKey(auditorKey), { name: 'x', scopes: ['view'] }))).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('gives a key made with an expiring key that expiry, refuses a later one, accepts an earlier one', async () => {
    clock.now = new Date();
    const parentExpiry = new Date(clock.now.getTime() + 3600_000);
    const parent = await create(withKey(adminKey), { name: 'ci', scopes: ['view', 'edit'], expiresAt: parentExpiry.toISOString() });
    const { key: parentKey, apiKeyId: parentId } = parent.json<{ key: string; apiKeyId: string }>();
    const child = await create(withKey(parentKey), { name: 'runner', scopes: ['view'] });
    expect(child.statusCode).toBe(201);
    expect(child.json()).toMatchObject({ expiresAt: parentExpiry.toISOString(), createdWithKeyId: parentId, scopes: ['view'] });
    const later = new Date(parentExpiry.getTime() + 1000).toISOString();
    expect(problem(await create(withKey(parentKey), { name: 'later', scopes: ['view'], expiresAt: later }))).toMatchObject({
      status: 403,
      code: 'forbidden',
      detail: `expiresAt \`${later}\` is after the expiry of the API key in use (${parentExpiry.toISOString()}): a key never outlives the key that made it`,
    });
    const earlier = new Date(parentExpiry.getTime() - 60_000).toISOString();
    expect((await create(withKey(parentKey), { name: 'earlier', scopes: ['view'], expiresAt: earlier })).json()).toMatchObject({
      expiresAt: earlier,
    });
  });

  it('lets a bearer session create a key as before: no expiry unless asked, no creating key', async () => {
    const token = await signToken({ sub: 'admin', org: 'acme' });
    const res = await create(withToken(token), { name: 'from a session', scopes: ['view'] });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ expiresAt: null, createdWithKeyId: null });
  });

  it('revokes every key made from a revoked key, transitively, on the very next request on every replica', async () => {
    const parent = (await create(withKey(adminKey), { name: 'parent', scopes: ['view', 'edit'] })).json<{
      key: string;
      apiKeyId: string;
    }>();
    const child = (await create(withKey(parent.key), { name: 'child', scopes: ['view', 'edit'] })).json<{
      key: string;
      apiKeyId: string;
    }>();
    const grandchild = (await create(withKey(child.key), { name: 'grandchild', scopes: ['view'] })).json<{
      key: string;
      apiKeyId: string;
    }>();
    const sibling = (await create(withKey(adminKey), { name: 'unrelated', scopes: ['view'] })).json<{ key: string }>();
    for (const k of [parent.key, child.key, grandchild.key, sibling.key]) expect((await run(replica, withKey(k))).statusCode).toBe(200);

    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${parent.apiKeyId}`, headers: withKey(adminKey) })).statusCode).toBe(204);
    for (const k of [parent.key, child.key, grandchild.key]) {
      expect(problem(await run(replica, withKey(k)))).toMatchObject({ status: 401, detail: 'the API key has been revoked' });
    }
    expect((await run(replica, withKey(sibling.key))).statusCode).toBe(200);
  });
});

describe('revocation and expiry', () => {
  it('a revoked key is refused on the very next request, including on another replica (401)', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(adminKey),
      payload: { name: 'doomed', scopes: ['view'] },
    });
    const { key, apiKeyId } = created.json<{ key: string; apiKeyId: string }>();
    expect((await run(app, withKey(key))).statusCode).toBe(200);
    expect((await run(replica, withKey(key))).statusCode).toBe(200);

    const del = await app.inject({ method: 'DELETE', url: `/apikeys/${apiKeyId}`, headers: withKey(adminKey) });
    expect(del.statusCode).toBe(204);

    for (const a of [replica, app]) {
      const res = await run(a, withKey(key));
      expect(problem(res)).toMatchObject({ status: 401, code: 'unauthenticated', detail: 'the API key has been revoked' });
    }
  });

  it('a key can revoke itself; the revoking request succeeds and the next one is refused', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(adminKey),
      payload: { name: 'self', scopes: ['view'] },
    });
    const { key, apiKeyId } = created.json() as { key: string; apiKeyId: string };
    expect((await replica.inject({ method: 'DELETE', url: `/apikeys/${apiKeyId}`, headers: withKey(key) })).statusCode).toBe(204);
    expect(problem(await app.inject({ method: 'GET', url: '/me', headers: withKey(key) })).status).toBe(401);
  });

  it('an expired key is refused (401), also when its grant is cached', async () => {
    clock.now = new Date();
    const expiresAt = new Date(clock.now.getTime() + 60 * 60 * 1000).toISOString();
    const created = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(adminKey),
      payload: { name: 'short', scopes: ['view'], expiresAt },
    });
    expect(created.json()).toMatchObject({ expiresAt });
    const { key } = created.json() as { key: string };
    expect((await run(app, withKey(key))).statusCode).toBe(200); // cached now

    clock.now = new Date(clock.now.getTime() + 2 * 60 * 60 * 1000);
    const res = await run(app, withKey(key));
    expect(problem(res)).toMatchObject({ status: 401, code: 'unauthenticated', detail: 'the API key has expired' });
    clock.now = new Date();
  });
});

describe('organizations are isolated', () => {
  it('org A admin sees neither org B users nor keys, and cannot revoke them (404)', async () => {
    const betaKey = await newOrg(db, 'beta', 'boss');
    const betaKeys = await app.inject({ method: 'GET', url: '/apikeys', headers: withKey(betaKey) });
    const betaKeyId = (betaKeys.json() as { items: Array<{ apiKeyId: string }> }).items[0]?.apiKeyId;
    expect(betaKeyId).toBeDefined();

    const users = await app.inject({ method: 'GET', url: '/users?limit=200', headers: withKey(adminKey) });
    const ids = (users.json() as { items: Array<{ userId: string }> }).items.map((u) => u.userId);
    expect(ids).toContain('admin');
    expect(ids).not.toContain('boss');

    const keys = await app.inject({ method: 'GET', url: '/apikeys', headers: withKey(adminKey) });
    expect((keys.json() as { items: Array<{ apiKeyId: string }> }).items.map((k) => k.apiKeyId)).not.toContain(betaKeyId);

    const del = await app.inject({ method: 'DELETE', url: `/apikeys/${betaKeyId}`, headers: withKey(adminKey) });
    expect(problem(del)).toMatchObject({ status: 404, code: 'not_found' });
    expect((await app.inject({ method: 'GET', url: '/me', headers: withKey(betaKey) })).statusCode).toBe(200);

    // PUT /users only ever touches the caller's org
    await app.inject({ method: 'PUT', url: '/users/boss', headers: withKey(adminKey), payload: { role: 'viewer' } });
    expect((await app.inject({ method: 'GET', url: '/me', headers: withKey(betaKey) })).json()).toMatchObject({
      orgId: 'beta',
      role: 'admin',
    });
  });
});
