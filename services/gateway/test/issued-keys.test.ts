import type { ArbiterEvent } from '@arbiter/contracts';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_OUTBOX_TABLE } from '../src/events/outbox.js';
import type { TestDatabase, TestRedis } from './support/servers.js';
import { closeGatewayEnv, openGatewayEnv } from './support/app-env.js';
import { memberKey, newOrg, problem, signToken, withKey, withToken } from './support/gateway.js';

// Without an identity provider an admin issues a member's first key
// (POST /users/{userId}/apikeys, docs/design/identity.md) and lists that member's keys.
let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;
let betaKey: string;

beforeAll(async () => {
  ({ db, redis, app, adminKey } = await openGatewayEnv());
  betaKey = await newOrg(db, 'beta');
  for (const [user, role] of [
    ['alice', 'editor'],
    ['vic', 'viewer'],
    ['aud', 'auditor'],
  ]) {
    await app.inject({ method: 'PUT', url: `/users/${user}`, headers: withKey(adminKey), payload: { role } });
  }
  await app.inject({ method: 'PUT', url: '/users/bob', headers: withKey(betaKey), payload: { role: 'editor' } });
});

afterAll(() => closeGatewayEnv({ app, redis, db }));

const issue = (userId: string, payload: unknown, headers: Record<string, string> = withKey(adminKey)) =>
  app.inject({ method: 'POST', url: `/users/${encodeURIComponent(userId)}/apikeys`, headers, payload: payload as object });
const listOf = (userId: string, headers: Record<string, string> = withKey(adminKey), query = '') =>
  app.inject({ method: 'GET', url: `/users/${encodeURIComponent(userId)}/apikeys${query}`, headers });
const me = (key: string) => app.inject({ method: 'GET', url: '/me', headers: withKey(key) });

async function keyEvents(): Promise<ArbiterEvent[]> {
  const rows = (await db.db(GATEWAY_OUTBOX_TABLE).orderBy('id').select('payload')) as Array<{ payload: ArbiterEvent }>;
  return rows.map((r) => r.payload).filter((e) => e.kind === 'key created');
}

describe('POST /users/{userId}/apikeys', () => {
  it('issues a key owned by the member, shown once, that acts as the member; audited as `key created` naming the issuer', async () => {
    const res = await issue('alice', { name: 'first key', scopes: ['view', 'edit'] });
    expect(res.statusCode).toBe(201);
    const body = res.json<{ apiKeyId: string; key: string }>();
    expect(body).toMatchObject({
      name: 'first key',
      scopes: ['view', 'edit'],
      owner: 'alice',
      expiresAt: null,
      key: expect.stringMatching(/^arb_/),
    });
    expect((await me(body.key)).json()).toMatchObject({ orgId: 'acme', userId: 'alice', role: 'editor', scopes: ['view', 'edit'] });

    // the secret is never listed again, neither to the admin nor to its owner
    const listed = await listOf('alice');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toMatchObject({ items: [{ apiKeyId: body.apiKeyId, owner: 'alice', name: 'first key' }], nextCursor: null });
    expect(listed.body).not.toContain(body.key);
    const own = (await app.inject({ method: 'GET', url: '/apikeys', headers: withKey(body.key) })).json<{ items: unknown[] }>();
    expect(own.items).toEqual([expect.objectContaining({ apiKeyId: body.apiKeyId })]);
    expect(JSON.stringify(own)).not.toContain(body.key);

    const adminId = (await me(adminKey)).json<{ apiKeyId: string }>().apiKeyId;
    const event = (await keyEvents()).find((e) => e.resource.id === body.apiKeyId);
    expect(event).toMatchObject({
      orgId: 'acme',
      actor: { userId: 'admin', apiKeyId: adminId },
      resource: { type: 'apikey', id: body.apiKeyId },
      details: { name: 'first key', scopes: ['view', 'edit'], owner: 'alice', issuedBy: 'admin', createdWithKeyId: null },
    });
    expect(JSON.stringify(event)).not.toContain(body.key);
  });

  it('an issued key stands alone: revoking the admin key that issued it leaves it working', async () => {
    const token = withToken(await signToken({ sub: 'admin', org: 'acme' }));
    const fromSession = (await issue('vic', { name: 'from a session', scopes: ['view'] }, token)).json<{
      key: string;
      createdWithKeyId: null;
    }>();
    expect(fromSession.createdWithKeyId).toBeNull();

    // a second admin issues with their own key, then that key is revoked: the issued key stays
    const second = await memberKey(app, adminKey, 'acme', 'root2', 'admin', ['view', 'admin']);
    const secondId = (await me(second)).json<{ apiKeyId: string }>().apiKeyId;
    const issued = (await issue('vic', { name: 'from a key', scopes: ['view'] }, withKey(second))).json<{
      key: string;
      createdWithKeyId: string | null;
    }>();
    expect(issued.createdWithKeyId).toBeNull();
    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${secondId}`, headers: withKey(adminKey) })).statusCode).toBe(204);
    expect((await me(second)).statusCode).toBe(401);
    expect((await me(issued.key)).statusCode).toBe(200);
    expect((await me(fromSession.key)).statusCode).toBe(200);
  });

  it('refuses scopes past the member role with 403 naming them; nothing is created', async () => {
    const before = (await listOf('vic')).json<{ items: unknown[] }>().items.length;
    expect(problem(await issue('vic', { name: 'too much', scopes: ['view', 'edit'] }))).toMatchObject({
      status: 403,
      code: 'forbidden',
      detail: 'scope `edit` exceeds the role of `vic`: role `viewer` allows `view`',
    });
    expect(problem(await issue('aud', { name: 'too much', scopes: ['audit', 'publish'] }))).toMatchObject({
      status: 403,
      detail: 'scope `publish` exceeds the role of `aud`: role `auditor` allows `view`, `audit`',
    });
    expect((await issue('aud', { name: 'reader', scopes: ['view', 'audit'] })).statusCode).toBe(201);
    expect((await listOf('vic')).json<{ items: unknown[] }>().items).toHaveLength(before);
  });

  it('never issues past the issuing key scopes; its expiry does not bind the issued key', async () => {
    const narrow = await memberKey(app, adminKey, 'acme', 'root3', 'admin', ['view', 'admin']);
    expect(problem(await issue('alice', { name: 'x', scopes: ['edit'] }, withKey(narrow)))).toMatchObject({
      status: 403,
      detail: 'scope `edit` exceeds your rights: your role and API key allow `view`, `admin`',
    });
    const expiry = new Date(Date.now() + 3_600_000).toISOString();
    const expiring = (
      await app.inject({
        method: 'POST',
        url: '/apikeys',
        headers: withKey(adminKey),
        payload: { name: 'an hour', scopes: ['view', 'admin'], expiresAt: expiry },
      })
    ).json<{ key: string }>().key;
    const later = new Date(Date.now() + 7_200_000).toISOString();
    // the issued key stands alone: the issuing key's expiry neither bounds nor is inherited by it
    const outlives = await issue('vic', { name: 'outlives', scopes: ['view'], expiresAt: later }, withKey(expiring));
    expect(outlives.json()).toMatchObject({ owner: 'vic', expiresAt: later });
    const own = await issue('vic', { name: 'no expiry', scopes: ['view'] }, withKey(expiring));
    expect(own.json()).toMatchObject({ owner: 'vic', expiresAt: null });
  });

  it('answers 401 without credentials and 403 below admin (even for oneself)', async () => {
    expect(problem(await issue('alice', { name: 'x', scopes: ['view'] }, {}))).toMatchObject({ status: 401, code: 'unauthenticated' });
    const editorKey = await memberKey(app, adminKey, 'acme', 'eddie', 'editor', ['view', 'edit']);
    expect(problem(await issue('alice', { name: 'x', scopes: ['view'] }, withKey(editorKey)))).toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    expect(problem(await issue('eddie', { name: 'x', scopes: ['view'] }, withKey(editorKey)))).toMatchObject({ status: 403 });
    // an admin's key without the `admin` scope is refused too
    const adminViewKey = (
      await app.inject({ method: 'POST', url: '/apikeys', headers: withKey(adminKey), payload: { name: 'ro', scopes: ['view'] } })
    ).json<{ key: string }>().key;
    expect(problem(await issue('alice', { name: 'x', scopes: ['view'] }, withKey(adminViewKey)))).toMatchObject({ status: 403 });
  });

  it('answers 404 for an unknown user, another org’s member, and a removed member; nothing is created', async () => {
    const events = (await keyEvents()).length;
    expect(problem(await issue('nobody', { name: 'x', scopes: ['view'] }))).toMatchObject({
      status: 404,
      code: 'not_found',
      detail: 'user `nobody` is not a member of org `acme`',
    });
    expect(problem(await issue('bob', { name: 'x', scopes: ['view'] }))).toMatchObject({ status: 404 });
    await app.inject({ method: 'PUT', url: '/users/gone', headers: withKey(adminKey), payload: { role: 'viewer' } });
    await app.inject({ method: 'DELETE', url: '/users/gone', headers: withKey(adminKey) });
    expect(problem(await issue('gone', { name: 'x', scopes: ['view'] }))).toMatchObject({ status: 404 });
    expect((await keyEvents()).length).toBe(events);
    expect(await db.db('api_keys').where({ org_id: 'beta', user_id: 'bob' }).count('* as n').first()).toEqual({ n: '0' });
  });

  it('refuses a malformed body with 400 naming the field; a non-JSON body with 415', async () => {
    const cases: Array<[unknown, string]> = [
      [{ scopes: ['view'] }, 'body.name'],
      [{ name: 'x' }, 'body.scopes'],
      [{ name: 'x', scopes: [] }, 'body.scopes'],
      [{ name: 'x', scopes: ['root'] }, 'body.scopes.0'],
      [{ name: 'x', scopes: ['view', 'view'] }, 'body.scopes'],
      [{ name: 'x', scopes: ['view'], owner: 'vic' }, 'body.owner'],
      [{ name: 'x', scopes: ['view'], expiresAt: 'tomorrow' }, 'body.expiresAt'],
      [{ name: 'x', scopes: ['view'], expiresAt: '2001-01-01T00:00:00Z' }, 'body.expiresAt'],
    ];
    for (const [payload, path] of cases) {
      const res = await issue('alice', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(
        res.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path),
        JSON.stringify(payload),
      ).toContain(path);
    }
    const text = await app.inject({
      method: 'POST',
      url: '/users/alice/apikeys',
      headers: { ...withKey(adminKey), 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    expect(text.statusCode).toBe(415);
    expect((await issue('a'.repeat(301), { name: 'x', scopes: ['view'] })).statusCode).toBe(400);
  });
});

describe('GET /users/{userId}/apikeys', () => {
  it('lists the member’s live keys in pages; 401, 403 below admin, 404 for a stranger or another org’s member', async () => {
    await app.inject({ method: 'PUT', url: '/users/paula', headers: withKey(adminKey), payload: { role: 'publisher' } });
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      ids.push((await issue('paula', { name, scopes: ['view'] })).json<{ apiKeyId: string }>().apiKeyId);
    }
    await app.inject({ method: 'DELETE', url: `/apikeys/${ids[1]}`, headers: withKey(adminKey) });
    const first = (await listOf('paula', withKey(adminKey), '?limit=1')).json<{ items: Array<{ apiKeyId: string }>; nextCursor: string }>();
    expect(first.items.map((k) => k.apiKeyId)).toEqual([ids[0]]);
    const rest = (await listOf('paula', withKey(adminKey), `?limit=1&cursor=${first.nextCursor}`)).json<{
      items: Array<{ apiKeyId: string }>;
      nextCursor: string | null;
    }>();
    expect(rest).toEqual({ items: [expect.objectContaining({ apiKeyId: ids[2] })], nextCursor: null });

    expect(problem(await listOf('paula', {}))).toMatchObject({ status: 401 });
    const editorKey = await memberKey(app, adminKey, 'acme', 'ed2', 'editor', ['view', 'edit']);
    expect(problem(await listOf('paula', withKey(editorKey)))).toMatchObject({ status: 403, code: 'forbidden' });
    expect(problem(await listOf('nobody'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await listOf('paula', withKey(betaKey)))).toMatchObject({ status: 404 });
    expect(problem(await listOf('paula', withKey(adminKey), '?limit=0'))).toMatchObject({ status: 400 });
  });
});

describe('OpenAPI', () => {
  it('documents both routes with their problems', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const post = doc.paths['/users/{userId}/apikeys'].post;
    expect(Object.keys(post.responses).sort()).toEqual(['201', '400', '401', '403', '404', '409', '413', '415', '429']);
    expect(post.requestBody.content['application/json'].schema).toMatchObject({
      required: ['name', 'scopes'],
      additionalProperties: false,
    });
    expect(Object.keys(doc.paths['/users/{userId}/apikeys'].get.responses).sort()).toEqual(['200', '400', '401', '403', '404', '429']);
    expect(Object.keys(doc.paths['/apikeys'].post.responses)).toContain('409');
  });
});
