/** End-to-end: gateway → NATS → execution, identity and keys. */

import { SignJWT } from 'jose';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let orgBAdminKey: string;

const RULE = `A **driver** gets a licence
  if the __age__ of the **driver** is at least 17
  and the **driver** passes the eyesight test.
A **driver** passes the eyesight test if the __vision__ of the **driver** is greater than 0.5.`;

async function createKey(ownerKey: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(stack, 'POST', '/apikeys', { key: ownerKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key as string;
}

/** Makes `userId` a member with `role` (admin call) and returns a key of theirs, via a JWT login. */
async function memberKey(userId: string, role: string, scopes: string[]): Promise<string> {
  const put = await call(stack, 'PUT', `/users/${userId}`, { key: stack.adminKey, body: { role } });
  expect([200, 201]).toContain(put.status);
  const jwt = await token({ sub: userId });
  const res = await call(stack, 'POST', '/apikeys', {
    headers: { authorization: `Bearer ${jwt}` },
    body: { name: `${userId}-key`, scopes },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key as string;
}

async function token(
  claims: Record<string, unknown>,
  opts: { secret?: string; issuer?: string; audience?: string; exp?: string | number } = {},
) {
  return new SignJWT({ org: stack.orgId, ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(opts.issuer ?? stack.issuer)
    .setAudience(opts.audience ?? stack.audience)
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '5m')
    .sign(new TextEncoder().encode(opts.secret ?? stack.jwtSecret));
}

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'gateway'] });
  const created = stack.admin(['create-org', 'globex', '--admin', 'boss']);
  expect(created.status, created.stderr).toBe(0);
  orgBAdminKey = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
});

afterAll(async () => {
  await stack?.stop();
});

describe('POST /run through the full stack', () => {
  it('evaluates a rule and returns result and trace', async () => {
    const res = await call(stack, 'POST', '/run', {
      key: stack.adminKey,
      body: { rule: RULE, data: { driver: { age: 18, vision: 0.8 } } },
    });
    expect(res.status).toBe(200);
    expect(res.body.result).toBe(true);
    expect(res.body.trace.at(-1)).toBe('result: true');
    expect(res.body.error).toBeUndefined();
  });

  it.each([
    [
      'parse_error',
      'A **driver** gets a licence if the __age__ of the **driver** is gold.',
      { driver: { age: 1 } },
      /^Parse error: line 1, column 65: unexpected word `gold`/,
    ],
    ['missing_selector', RULE, { person: {} }, /^Missing selector: driver$/],
    ['missing_property', RULE, { driver: { age: 18 } }, /^Missing property: driver\.vision$/],
  ])('reports %s as a 200 result with error and errorCode', async (code, rule, data, message) => {
    const res = await call(stack, 'POST', '/run', { key: stack.adminKey, body: { rule, data } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: false, errorCode: code });
    expect(res.body.error).toMatch(message);
  });

  it('validates, explains and lists operators', async () => {
    const v = await call(stack, 'POST', '/validate', { key: stack.adminKey, body: { rule: RULE } });
    // No registry in this stack: the static checks did not run, /validate answers all the same.
    expect(v.body).toEqual({ valid: true, error: null, checks: [], checksComplete: false });
    const e = await call(stack, 'POST', '/explain', { key: stack.adminKey, body: { rule: RULE } });
    expect(e.body.rule_count).toBe(2);
    const o = await call(stack, 'GET', '/operators', { key: stack.adminKey });
    expect(o.body[0]).toEqual({ operator: 'is greater than', forms: ['is greater than', '>'] });
  });

  it('refuses a malformed body, a non-object data and an oversized body', async () => {
    const bad = await call(stack, 'POST', '/run', { key: stack.adminKey, rawBody: '{"rule": "x", ' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const notObject = await call(stack, 'POST', '/run', { key: stack.adminKey, body: { rule: 'x', data: [1] } });
    expect(notObject.status).toBe(400);
    const big = await call(stack, 'POST', '/run', {
      key: stack.adminKey,
      body: { rule: RULE, data: { driver: { blob: 'x'.repeat(1_100_000) } } },
    });
    expect(big.status).toBe(413);
  });
});

describe('credentials', () => {
  it('refuses a missing, unknown or revoked key with 401', async () => {
    const body = { rule: RULE, data: {} };
    expect((await call(stack, 'POST', '/run', { body })).status).toBe(401);
    expect((await call(stack, 'POST', '/run', { key: 'arb_not_a_real_key_at_all_000000000000', body })).status).toBe(401);
    const key = await createKey(stack.adminKey, { name: 'short-lived', scopes: ['view'] });
    const list = await call(stack, 'GET', '/apikeys', { key: stack.adminKey });
    const id = list.body.items.find((k: { name: string }) => k.name === 'short-lived').apiKeyId;
    expect((await call(stack, 'POST', '/run', { key, body })).status).toBe(200);
    expect((await call(stack, 'DELETE', `/apikeys/${id}`, { key: stack.adminKey })).status).toBe(204);
    // Revocation is visible to the very next request (0 ms grace).
    expect((await call(stack, 'POST', '/run', { key, body })).status).toBe(401);
  });

  it('refuses an expired key with 401', async () => {
    const expiresAt = Date.now() + 1500;
    const key = await createKey(stack.adminKey, { name: 'expiring', scopes: ['view'], expiresAt: new Date(expiresAt).toISOString() });
    expect((await call(stack, 'GET', '/me', { key })).status).toBe(200);
    // Polled until refused (the gateway shares this machine's clock): refused only once expired.
    const refusedAt = await eventually(
      async () => {
        const res = await call(stack, 'GET', '/me', { key });
        if (res.status === 200) throw new Error('still accepted');
        expect(res.status).toBe(401);
        return Date.now();
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(refusedAt).toBeGreaterThanOrEqual(expiresAt);
  });

  it('refuses a key without the view scope with 403 on /run', async () => {
    const key = await createKey(stack.adminKey, { name: 'audit-only', scopes: ['audit'] });
    const res = await call(stack, 'POST', '/run', { key, body: { rule: RULE, data: {} } });
    expect(res.status).toBe(403);
  });

  it('refuses JWTs with a wrong signature, issuer, audience or expiry with 401', async () => {
    const cases = [
      await token({ sub: 'admin' }, { secret: 'x'.repeat(64) }),
      await token({ sub: 'admin' }, { issuer: 'https://evil.example' }),
      await token({ sub: 'admin' }, { audience: 'someone-else' }),
      await token({ sub: 'admin' }, { exp: Math.floor(Date.now() / 1000) - 60 }),
    ];
    for (const jwt of cases) {
      const res = await call(stack, 'GET', '/me', { headers: { authorization: `Bearer ${jwt}` } });
      expect(res.status).toBe(401);
    }
    const ok = await call(stack, 'GET', '/me', { headers: { authorization: `Bearer ${await token({ sub: 'admin' })}` } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ orgId: 'acme', userId: 'admin', role: 'admin' });
  });
});

describe('roles, scopes and tenants', () => {
  it("a viewer's key cannot call admin endpoints", async () => {
    const key = await memberKey('vera', 'viewer', ['view']);
    expect((await call(stack, 'GET', '/users', { key })).status).toBe(403);
    expect((await call(stack, 'PUT', '/users/someone', { key, body: { role: 'admin' } })).status).toBe(403);
    expect((await call(stack, 'PUT', '/org/settings', { key, body: { governanceApproval: true } })).status).toBe(403);
    expect((await call(stack, 'POST', '/run', { key, body: { rule: RULE, data: { driver: { age: 20, vision: 1 } } } })).status).toBe(200);
  });

  it("a key cannot exceed its owner's role, and demoting the owner demotes the key", async () => {
    const editorJwt = await token({ sub: 'eddie' });
    await call(stack, 'PUT', '/users/eddie', { key: stack.adminKey, body: { role: 'editor' } });
    const tooMuch = await call(stack, 'POST', '/apikeys', {
      headers: { authorization: `Bearer ${editorJwt}` },
      body: { name: 'too-much', scopes: ['view', 'admin'] },
    });
    expect(tooMuch.status).toBe(403);
    const publisherKey = await memberKey('pat', 'publisher', ['view', 'edit', 'publish']);
    expect((await call(stack, 'GET', '/me', { key: publisherKey })).body.role).toBe('publisher');
    await call(stack, 'PUT', '/users/pat', { key: stack.adminKey, body: { role: 'viewer' } });
    const me = await call(stack, 'GET', '/me', { key: publisherKey });
    expect(me.body.role).toBe('viewer');
  });

  it("org B's admin cannot see org A's users or keys", async () => {
    const users = await call(stack, 'GET', '/users', { key: orgBAdminKey });
    expect(users.status).toBe(200);
    expect(users.body.items.map((u: { userId: string }) => u.userId)).toEqual(['boss']);
    const aKeys = await call(stack, 'GET', '/apikeys', { key: stack.adminKey });
    const aKeyId = aKeys.body.items[0].apiKeyId;
    expect((await call(stack, 'DELETE', `/apikeys/${aKeyId}`, { key: orgBAdminKey })).status).toBe(404);
    const me = await call(stack, 'GET', '/me', { key: orgBAdminKey });
    expect(me.body).toMatchObject({ orgId: 'globex', userId: 'boss', role: 'admin' });
  });
});

describe('execution service outage', () => {
  it('answers 503 while no execution replica runs, and 200 again after it restarts', async () => {
    const body = { rule: RULE, data: { driver: { age: 30, vision: 0.9 } } };
    await stack.stopService('execution');
    const down = await call(stack, 'POST', '/run', { key: stack.adminKey, body });
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('dependency_unavailable');
    await stack.startService('execution');
    const up = await call(stack, 'POST', '/run', { key: stack.adminKey, body });
    expect(up.status).toBe(200);
    expect(up.body.result).toBe(true);
  });
});
