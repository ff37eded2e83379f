import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Scope } from '@arbiter/contracts';
import type { TestDatabase, TestRedis } from './support/servers.js';
import { closeGatewayEnv, openGatewayEnv } from './support/app-env.js';
import { memberKey, newOrg, problem, signToken, withKey, withToken } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;

beforeAll(async () => ({ db, redis, app, adminKey } = await openGatewayEnv()));

afterAll(() => closeGatewayEnv({ app, redis, db }));

describe('GET /me', () => {
  it('names the key and its scopes when an API key was used', async () => {
    const res = await app.inject({ method: 'GET', url: '/me', headers: withKey(adminKey) });
    expect(res.json()).toEqual({
      orgId: 'acme',
      userId: 'admin',
      role: 'admin',
      apiKeyId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/),
      // The bootstrap admin key carries every scope.
      scopes: [...Scope.options],
    });
  });
});

describe('/users', () => {
  it('PUT adds a new member (201), then changes the role (200)', async () => {
    const add = await app.inject({ method: 'PUT', url: '/users/dana', headers: withKey(adminKey), payload: { role: 'editor' } });
    expect(add.statusCode).toBe(201);
    expect(add.json()).toMatchObject({ userId: 'dana', role: 'editor', createdAt: expect.any(String), updatedAt: expect.any(String) });
    const change = await app.inject({ method: 'PUT', url: '/users/dana', headers: withKey(adminKey), payload: { role: 'auditor' } });
    expect(change.statusCode).toBe(200);
    expect(change.json()).toMatchObject({ userId: 'dana', role: 'auditor' });
  });

  it('PUT accepts IdP subjects with special characters', async () => {
    const res = await app.inject({
      method: 'PUT',
      url: `/users/${encodeURIComponent('auth0|5f7c8ec7c33c6c004bbafe82')}`,
      headers: withKey(adminKey),
      payload: { role: 'viewer' },
    });
    expect(res.json()).toMatchObject({ userId: 'auth0|5f7c8ec7c33c6c004bbafe82' });
  });

  it('PUT refuses an unknown role or extra fields (400)', async () => {
    const bad = await app.inject({ method: 'PUT', url: '/users/dana', headers: withKey(adminKey), payload: { role: 'owner' } });
    expect(bad.json()).toMatchObject({ status: 400, errors: [expect.objectContaining({ path: 'body.role' })] });
    const extra = await app.inject({
      method: 'PUT',
      url: '/users/dana',
      headers: withKey(adminKey),
      payload: { role: 'viewer', org: 'beta' },
    });
    expect(extra.json()).toMatchObject({ status: 400, errors: [expect.objectContaining({ path: 'body.org', code: 'unrecognized_key' })] });
  });

  it('PUT refuses to demote the last admin (409), allows it once another admin exists', async () => {
    const org = 'solo';
    const soloKey = await newOrg(db, org, 'only');
    const demote = await app.inject({ method: 'PUT', url: '/users/only', headers: withKey(soloKey), payload: { role: 'viewer' } });
    expect(problem(demote)).toMatchObject({
      status: 409,
      code: 'conflict',
      detail: '`only` is the last admin of org `solo`; make another member admin first',
    });
    await app.inject({ method: 'PUT', url: '/users/second', headers: withKey(soloKey), payload: { role: 'admin' } });
    expect(
      (await app.inject({ method: 'PUT', url: '/users/only', headers: withKey(soloKey), payload: { role: 'viewer' } })).statusCode,
    ).toBe(200);
  });

  it('GET pages with limit and an opaque cursor, ordered by user id', async () => {
    for (const u of ['u1', 'u2', 'u3', 'u4', 'u5']) {
      await app.inject({ method: 'PUT', url: `/users/${u}`, headers: withKey(adminKey), payload: { role: 'viewer' } });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/users?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = (await app.inject({ method: 'GET', url, headers: withKey(adminKey) })).json() as {
        items: Array<{ userId: string }>;
        nextCursor: string | null;
      };
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i) => i.userId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 50);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(['admin', 'u1', 'u2', 'u3', 'u4', 'u5']));
    const all = (await app.inject({ method: 'GET', url: '/users', headers: withKey(adminKey) })).json();
    expect(all.nextCursor).toBeNull();
    expect(all.items.map((i: { userId: string }) => i.userId)).toEqual(seen);
  });

  it('GET refuses a cursor it did not make (400)', async () => {
    const res = await app.inject({ method: 'GET', url: '/users?cursor=garbage', headers: withKey(adminKey) });
    expect(problem(res)).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
      detail: expect.stringMatching(/^invalid cursor `garbage`: /),
    });
  });
});

describe('forged cursors', () => {
  const forge = (value: unknown) => encodeURIComponent(Buffer.from(JSON.stringify(value), 'utf8').toString('base64url'));
  const get = (url: string) => app.inject({ method: 'GET', url, headers: withKey(adminKey) });

  it('refuses a /users cursor holding U+0000 or an unpaired surrogate with 400 invalid_cursor (was 500)', async () => {
    for (const after of ['a\u0000b', '\ud800x', 'x\udfff']) {
      const res = await get(`/users?cursor=${forge({ after })}`);
      expect(problem(res), JSON.stringify(after)).toMatchObject({ status: 400, code: 'invalid_cursor' });
    }
  });

  it('refuses /apikeys and /apikeys?all=true cursors that are not key ids (was 500)', async () => {
    for (const after of ['not-a-uuid', 'a\u0000b', '\ud800', 42]) {
      for (const url of ['/apikeys', '/apikeys?all=true']) {
        const res = await get(`${url}${url.includes('?') ? '&' : '?'}cursor=${forge({ after })}`);
        expect(problem(res), `${url} ${JSON.stringify(after)}`).toMatchObject({ status: 400, code: 'invalid_cursor' });
      }
    }
  });

  it('still pages /apikeys with the cursors it makes', async () => {
    for (const name of ['k1', 'k2', 'k3']) {
      await app.inject({ method: 'POST', url: '/apikeys', headers: withKey(adminKey), payload: { name, scopes: ['view'] } });
    }
    const first = (await get('/apikeys?limit=2')).json<{ items: unknown[]; nextCursor: string }>();
    expect(first.items).toHaveLength(2);
    const second = await get(`/apikeys?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(second.statusCode).toBe(200);
    expect(second.json<{ items: unknown[] }>().items.length).toBeGreaterThan(0);
  });
});

describe('/apikeys', () => {
  it('POST answers 201 with the secret once; GET lists own keys without secrets; the key works', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(adminKey),
      payload: { name: '  ci pipeline ', scopes: ['view', 'edit'] },
    });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    const me = (await app.inject({ method: 'GET', url: '/me', headers: withKey(adminKey) })).json<{ apiKeyId: string }>();
    expect(created).toEqual({
      apiKeyId: expect.any(String),
      key: expect.stringMatching(/^arb_[A-Za-z0-9_-]{43}$/),
      name: 'ci pipeline',
      scopes: ['view', 'edit'],
      createdAt: expect.any(String),
      expiresAt: null,
      createdWithKeyId: me.apiKeyId,
      owner: 'admin',
      lastUsedAt: null,
    });
    const list = await app.inject({ method: 'GET', url: '/apikeys', headers: withKey(adminKey) });
    expect(list.body).not.toContain(created.key);
    const listed = list.json().items.find((k: { apiKeyId: string }) => k.apiKeyId === created.apiKeyId);
    expect(listed).toEqual({
      apiKeyId: created.apiKeyId,
      name: 'ci pipeline',
      scopes: ['view', 'edit'],
      createdAt: created.createdAt,
      expiresAt: null,
      createdWithKeyId: me.apiKeyId,
      owner: 'admin',
      lastUsedAt: null,
    });
    expect((await app.inject({ method: 'GET', url: '/me', headers: withKey(created.key) })).json()).toMatchObject({
      apiKeyId: created.apiKeyId,
      scopes: ['view', 'edit'],
    });
  });

  it.each([
    ['no scopes', { name: 'k', scopes: [] }, 'body.scopes'],
    ['an unknown scope', { name: 'k', scopes: ['root'] }, 'body.scopes.0'],
    ['a repeated scope', { name: 'k', scopes: ['view', 'view'] }, 'body.scopes'],
    ['an empty name', { name: ' ', scopes: ['view'] }, 'body.name'],
    ['a date without offset', { name: 'k', scopes: ['view'], expiresAt: '2999-01-01T00:00:00' }, 'body.expiresAt'],
    ['a past expiry', { name: 'k', scopes: ['view'], expiresAt: '2001-01-01T00:00:00Z' }, 'body.expiresAt'],
    ['an unknown field', { name: 'k', scopes: ['view'], userId: 'someone' }, 'body.userId'],
  ])('POST refuses %s (400)', async (_what, payload, path) => {
    const res = await app.inject({ method: 'POST', url: '/apikeys', headers: withKey(adminKey), payload });
    expect(res.json()).toMatchObject({
      status: 400,
      code: 'validation_failed',
      errors: expect.arrayContaining([expect.objectContaining({ path })]),
    });
  });

  it('GET lists only the caller’s own keys, not other members’', async () => {
    const evaKey = await memberKey(app, adminKey, 'acme', 'eva', 'editor', ['view']);
    const evas = (await app.inject({ method: 'GET', url: '/apikeys', headers: withKey(evaKey) })).json().items;
    expect(evas).toHaveLength(1);
    const admins = (await app.inject({ method: 'GET', url: '/apikeys?limit=200', headers: withKey(adminKey) })).json().items;
    expect(admins.map((k: { apiKeyId: string }) => k.apiKeyId)).not.toContain(evas[0].apiKeyId);
  });

  it('DELETE: own key 204; another member’s key 403 unless admin; unknown 404; revoked keys leave the list', async () => {
    const fredKey = await memberKey(app, adminKey, 'acme', 'fred', 'publisher', ['view', 'publish']);
    const gretaKey = await memberKey(app, adminKey, 'acme', 'greta', 'editor', ['view']);
    const fredKeyId = (await app.inject({ method: 'GET', url: '/me', headers: withKey(fredKey) })).json().apiKeyId as string;

    const byGreta = await app.inject({ method: 'DELETE', url: `/apikeys/${fredKeyId}`, headers: withKey(gretaKey) });
    expect(problem(byGreta)).toMatchObject({ status: 403, code: 'forbidden' });

    const token = await signToken({ sub: 'fred', org: 'acme' });
    const spare = (
      await app.inject({ method: 'POST', url: '/apikeys', headers: withToken(token), payload: { name: 'spare', scopes: ['view'] } })
    ).json();
    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${spare.apiKeyId}`, headers: withKey(fredKey) })).statusCode).toBe(204);
    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${spare.apiKeyId}`, headers: withKey(fredKey) })).statusCode).toBe(204); // idempotent

    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${fredKeyId}`, headers: withKey(adminKey) })).statusCode).toBe(204);
    expect(problem(await app.inject({ method: 'GET', url: '/me', headers: withKey(fredKey) })).status).toBe(401);
    const fredsKeys = (await app.inject({ method: 'GET', url: '/apikeys', headers: withToken(token) })).json().items;
    expect(fredsKeys).toEqual([]);

    const unknown = await app.inject({
      method: 'DELETE',
      url: '/apikeys/01900000-0000-7000-8000-000000000000',
      headers: withKey(adminKey),
    });
    expect(problem(unknown)).toMatchObject({
      status: 404,
      code: 'not_found',
      detail: 'API key `01900000-0000-7000-8000-000000000000` not found',
    });
  });
});

describe('/org/settings', () => {
  it('only an admin reads and writes (docs/design/identity.md); unknown fields are refused', async () => {
    const viewerKey = await memberKey(app, adminKey, 'acme', 'hal', 'viewer', ['view']);
    expect(problem(await app.inject({ method: 'GET', url: '/org/settings', headers: withKey(viewerKey) }))).toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    expect((await app.inject({ method: 'GET', url: '/org/settings', headers: withKey(adminKey) })).json()).toEqual({
      governanceApproval: false,
      minCoverage: 0,
    });

    const put = await app.inject({
      method: 'PUT',
      url: '/org/settings',
      headers: withKey(adminKey),
      payload: { governanceApproval: true },
    });
    expect(put.json()).toEqual({ governanceApproval: true, minCoverage: 0 });
    expect((await app.inject({ method: 'GET', url: '/org/settings', headers: withKey(adminKey) })).json()).toEqual({
      governanceApproval: true,
      minCoverage: 0,
    });

    expect(
      problem(
        await app.inject({ method: 'PUT', url: '/org/settings', headers: withKey(viewerKey), payload: { governanceApproval: false } }),
      ).status,
    ).toBe(403);
    const bad = await app.inject({
      method: 'PUT',
      url: '/org/settings',
      headers: withKey(adminKey),
      payload: { governanceApproval: 'yes' },
    });
    expect(bad.json()).toMatchObject({ status: 400, errors: [expect.objectContaining({ path: 'body.governanceApproval' })] });
  });

  it('settings are per org', async () => {
    const otherKey = await newOrg(db, 'other-org');
    expect((await app.inject({ method: 'GET', url: '/org/settings', headers: withKey(otherKey) })).json()).toEqual({
      governanceApproval: false,
      minCoverage: 0,
    });
  });

  it('minCoverage: an integer from 0 to 100, kept when a PUT leaves it out; 400 past the bounds, nothing written', async () => {
    const key = await newOrg(db, 'coverage-org');
    const put = (payload: Record<string, unknown>) => app.inject({ method: 'PUT', url: '/org/settings', headers: withKey(key), payload });
    const get = async () => (await app.inject({ method: 'GET', url: '/org/settings', headers: withKey(key) })).json();
    expect((await put({ governanceApproval: false, minCoverage: 80 })).json()).toEqual({ governanceApproval: false, minCoverage: 80 });
    expect((await put({ governanceApproval: true })).json()).toEqual({ governanceApproval: true, minCoverage: 80 });
    for (const minCoverage of [-1, 101, 50.5, '80', null]) {
      const bad = await put({ governanceApproval: false, minCoverage });
      expect(bad.json(), JSON.stringify(minCoverage)).toMatchObject({
        status: 400,
        code: 'validation_failed',
        errors: [expect.objectContaining({ path: 'body.minCoverage' })],
      });
    }
    expect(await get()).toEqual({ governanceApproval: true, minCoverage: 80 });
    expect((await put({ governanceApproval: true, minCoverage: 100 })).json()).toEqual({ governanceApproval: true, minCoverage: 100 });
    expect((await put({ governanceApproval: true, minCoverage: 0 })).json()).toEqual({ governanceApproval: true, minCoverage: 0 });
  });
});
