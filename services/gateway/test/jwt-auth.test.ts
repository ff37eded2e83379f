import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { createLogger } from '@arbiter/service-kit';
import { buildApp } from '../src/app.js';
import type { JwtSettings } from '../src/config.js';
import type { TestDatabase, TestRedis } from './support/servers.js';
import { closeGatewayEnv, openGatewayEnv } from './support/app-env.js';
import { StubExecution } from './support/stub-execution.js';
import { problem, signToken, withKey, withToken, JWT_AUDIENCE, JWT_ISSUER } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;

beforeAll(async () => ({ db, redis, app, adminKey } = await openGatewayEnv()));

afterAll(() => closeGatewayEnv({ app, redis, db }));

const me = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/me', headers });

describe('bearer JWT authentication', () => {
  it('accepts a valid token; the role comes from the membership table, not the token', async () => {
    const token = await signToken({ sub: 'admin', org: 'acme', role: 'viewer', roles: ['viewer'] });
    const res = await me(withToken(token));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ orgId: 'acme', userId: 'admin', role: 'admin' });
  });

  it('provisions an unknown user of a known org as a viewer', async () => {
    const token = await signToken({ sub: 'auth0|new-person', org: 'acme' });
    const res = await me(withToken(token));
    expect(res.json()).toEqual({ orgId: 'acme', userId: 'auth0|new-person', role: 'viewer' });
    const users = await app.inject({ method: 'GET', url: '/users', headers: withKey(adminKey) });
    expect(users.json().items).toContainEqual(expect.objectContaining({ userId: 'auth0|new-person', role: 'viewer' }));
    // a provisioned viewer is refused on admin endpoints
    expect(problem(await app.inject({ method: 'GET', url: '/users', headers: withToken(token) })).status).toBe(403);
  });

  it('keeps a provisioned member’s role once an admin changed it', async () => {
    const token = await signToken({ sub: 'pat', org: 'acme' });
    expect((await me(withToken(token))).json()).toMatchObject({ role: 'viewer' });
    await app.inject({ method: 'PUT', url: '/users/pat', headers: withKey(adminKey), payload: { role: 'publisher' } });
    expect((await me(withToken(token))).json()).toMatchObject({ role: 'publisher' });
  });

  it('refuses a token of an unknown org (401)', async () => {
    const res = await me(withToken(await signToken({ sub: 'x', org: 'nowhere' })));
    expect(problem(res)).toMatchObject({ status: 401, code: 'unauthenticated', detail: 'invalid bearer token: org `nowhere` is unknown' });
  });

  it.each([
    [
      'a wrong signature',
      () => signToken({ sub: 'admin', org: 'acme' }, { secret: 'another-secret-of-at-least-32-characters!!' }),
      'signature does not verify',
    ],
    ['a wrong issuer', () => signToken({ sub: 'admin', org: 'acme' }, { issuer: 'https://evil.test' }), 'claim `iss` is not accepted'],
    ['no issuer', () => signToken({ sub: 'admin', org: 'acme' }, { issuer: '' }), 'claim `iss` is missing'],
    ['a wrong audience', () => signToken({ sub: 'admin', org: 'acme' }, { audience: 'someone-else' }), 'claim `aud` is not accepted'],
    [
      'an expired token',
      () => signToken({ sub: 'admin', org: 'acme' }, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      'token expired',
    ],
    ['no org claim', () => signToken({ sub: 'admin' }), 'claim `org` must name the org'],
    ['no sub', () => signToken({ org: 'acme' }), 'claim `sub` is missing'],
    [
      'an unsigned (alg none) token',
      async () =>
        new UnsecuredJWT({ sub: 'admin', org: 'acme' }).setIssuer(JWT_ISSUER).setAudience(JWT_AUDIENCE).setExpirationTime('5m').encode(),
      undefined,
    ],
    ['garbage', async () => 'not.a.jwt', undefined],
  ])('refuses %s (401)', async (_what, make, detail) => {
    const res = await me(withToken(await make()));
    expect(problem(res)).toMatchObject({ status: 401, code: 'unauthenticated' });
    if (detail !== undefined) expect(problem(res).detail).toBe(`invalid bearer token: ${detail}`);
  });

  it.each([
    ['Basic dXNlcjpwdw==', 'the `Authorization` header must be `Bearer <token>`'],
    ['Bearer', 'the `Authorization` header must be `Bearer <token>`'],
  ])('refuses Authorization `%s` (401)', async (header, detail) => {
    expect(problem(await me({ authorization: header }))).toMatchObject({ status: 401, detail });
  });

  it('refuses bearer tokens when no JWT key material is configured (401)', async () => {
    const bare = await appWithJwt({ orgClaim: 'org' });
    try {
      const res = await bare.inject({ method: 'GET', url: '/me', headers: withToken(await signToken({ sub: 'admin', org: 'acme' })) });
      expect(problem(res)).toMatchObject({ status: 401, detail: 'bearer tokens are not enabled on this server; use an `x-api-key`' });
      expect((await bare.inject({ method: 'GET', url: '/me', headers: withKey(adminKey) })).statusCode).toBe(200);
    } finally {
      await bare.close();
    }
  });

  it('verifies tokens against the identity provider JWKS (ES256), with a custom org claim', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const idp: Server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    const jwksUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/jwks.json`;
    const withJwks = await appWithJwt({ jwksUrl, issuer: JWT_ISSUER, orgClaim: 'https://arbiter/org' });
    const sign = (kid: string, key = privateKey) =>
      new SignJWT({ 'https://arbiter/org': 'acme' })
        .setProtectedHeader({ alg: 'ES256', kid })
        .setSubject('admin')
        .setIssuer(JWT_ISSUER)
        .setExpirationTime('5m')
        .sign(key);
    try {
      const ok = await withJwks.inject({ method: 'GET', url: '/me', headers: withToken(await sign('k1')) });
      expect(ok.json()).toEqual({ orgId: 'acme', userId: 'admin', role: 'admin' });
      const other = await generateKeyPair('ES256');
      const forged = await withJwks.inject({ method: 'GET', url: '/me', headers: withToken(await sign('k1', other.privateKey)) });
      expect(problem(forged)).toMatchObject({ status: 401, detail: 'invalid bearer token: signature does not verify' });
      // an HS256 token is refused when the server trusts the JWKS only
      expect(
        problem(await withJwks.inject({ method: 'GET', url: '/me', headers: withToken(await signToken({ sub: 'admin', org: 'acme' })) }))
          .status,
      ).toBe(401);
    } finally {
      await withJwks.close();
      await new Promise((r) => idp.close(r));
    }
  });

  it('answers 503, not 401, when the JWKS cannot be fetched', async () => {
    const down = await appWithJwt({ jwksUrl: 'http://127.0.0.1:9/jwks.json', orgClaim: 'org' });
    try {
      const { privateKey } = await generateKeyPair('ES256');
      const token = await new SignJWT({ org: 'acme' })
        .setProtectedHeader({ alg: 'ES256', kid: 'x' })
        .setSubject('admin')
        .setExpirationTime('5m')
        .sign(privateKey);
      expect(problem(await down.inject({ method: 'GET', url: '/me', headers: withToken(token) }))).toMatchObject({
        status: 503,
        code: 'dependency_unavailable',
      });
    } finally {
      await down.close();
    }
  });
});

/** A gateway on this file's database and Redis with other JWT settings. */
async function appWithJwt(jwt: JwtSettings): Promise<FastifyInstance> {
  const other = await buildApp({
    config: {
      jwt,
      limits: { bodyLimitBytes: 1024, rateLimitMax: 10_000, rateLimitWindowMs: 60_000, authFailuresMax: 20 },
      redisKeyPrefix: redis.prefix,
      apiKeyCacheTtlSeconds: 60,
    },
    logger: createLogger({ service: 'gateway-test', level: 'silent' }),
    db: db.db,
    redis: redis.redis,
    execution: new StubExecution(),
  });
  await other.ready();
  return other;
}
