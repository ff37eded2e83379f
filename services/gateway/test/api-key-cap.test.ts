import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { memberKey, newOrg, problem, signToken, startGateway, withKey, withToken } from './support/gateway.js';

// Live keys per user are capped (APIKEYS_PER_USER_MAX); past the cap both ways of
// making a key answer 409 `too_many_api_keys` and create nothing, even when requests race.
const MAX = 5;

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;
let clock = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { limits: { apiKeysPerUserMax: MAX }, now: () => clock });
  adminKey = await newOrg(db, 'acme');
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

const liveKeys = async (userId: string): Promise<number> =>
  Number(
    (
      (await db
        .db('api_keys')
        .where({ org_id: 'acme', user_id: userId })
        .whereNull('revoked_at')
        .andWhere((w) => void w.whereNull('expires_at').orWhere('expires_at', '>', clock))
        .count('* as n')
        .first()) as { n: string }
    ).n,
  );

const create = async (headers: Record<string, string>, name: string, extra: Record<string, unknown> = {}) =>
  app.inject({ method: 'POST', url: '/apikeys', headers, payload: { name, scopes: ['view'], ...extra } });

const issue = async (userId: string, name: string) =>
  app.inject({ method: 'POST', url: `/users/${userId}/apikeys`, headers: withKey(adminKey), payload: { name, scopes: ['view'] } });

describe('live API keys per user', () => {
  it('20 concurrent POST /apikeys of one user create exactly up to the cap; the rest are 409 and create nothing', async () => {
    await app.inject({ method: 'PUT', url: '/users/racer', headers: withKey(adminKey), payload: { role: 'editor' } });
    const bearer = withToken(await signToken({ sub: 'racer', org: 'acme' }));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(bearer, `race ${i}`)));
    const statuses = answers.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX);
    expect(statuses.filter((s) => s === 409)).toHaveLength(20 - MAX);
    const refused = answers.find((r) => r.statusCode === 409)!;
    expect(problem(refused)).toMatchObject({
      status: 409,
      code: 'too_many_api_keys',
      detail: `\`racer\` already has ${MAX} live API keys in org \`acme\` (the most allowed, APIKEYS_PER_USER_MAX): revoke one first`,
      contentType: 'application/problem+json; charset=utf-8',
    });
    expect(await liveKeys('racer')).toBe(MAX);
  });

  it('counts only live keys: revoking or expiry frees a place; the admin endpoint shares the same cap', async () => {
    const key = await memberKey(app, adminKey, 'acme', 'rita', 'editor', ['view', 'edit']);
    const made: string[] = [];
    for (let i = 1; i < MAX - 1; i++) {
      const res = await create(withKey(key), `own ${i}`);
      expect(res.statusCode).toBe(201);
      made.push(res.json<{ apiKeyId: string }>().apiKeyId);
    }
    // one that expires soon
    const expiring = await create(withKey(key), 'short-lived', { expiresAt: new Date(clock.getTime() + 60_000).toISOString() });
    expect(expiring.statusCode).toBe(201);
    expect(await liveKeys('rita')).toBe(MAX);

    expect(problem(await create(withKey(key), 'one too many'))).toMatchObject({ status: 409, code: 'too_many_api_keys' });
    expect(problem(await issue('rita', 'issued one too many'))).toMatchObject({ status: 409, code: 'too_many_api_keys' });
    expect(await liveKeys('rita')).toBe(MAX);

    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${made[0]}`, headers: withKey(adminKey) })).statusCode).toBe(204);
    expect((await issue('rita', 'issued in the freed place')).statusCode).toBe(201);
    expect(problem(await create(withKey(key), 'full again'))).toMatchObject({ status: 409 });

    clock = new Date(clock.getTime() + 120_000); // the short-lived key has expired
    expect((await create(withKey(key), 'after expiry')).statusCode).toBe(201);
    expect(await liveKeys('rita')).toBe(MAX);
  });

  it('20 concurrent admin issues for one user never pass the cap', async () => {
    await app.inject({ method: 'PUT', url: '/users/ivan', headers: withKey(adminKey), payload: { role: 'viewer' } });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => issue('ivan', `issued ${i}`)));
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(MAX);
    expect(answers.filter((r) => r.statusCode === 409).map((r) => problem(r).code)).toEqual(Array(20 - MAX).fill('too_many_api_keys'));
    expect(await liveKeys('ivan')).toBe(MAX);
  });

  it('is per user: another member of the org still creates keys', async () => {
    const bearer = withToken(await signToken({ sub: 'other', org: 'acme' }));
    expect((await create(bearer, 'first')).statusCode).toBe(201);
  });
});
