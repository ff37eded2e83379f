/**
 * The Redis key cache is tied to the database its grants were read from: after
 * the database is replaced (a new bootstrap with the same admin key) or restored (the key's row
 * gone or re-made), a cached grant never names a key id the database does not have; what it
 * writes with the key id (a key made with a key) re-reads the grant instead of a 500.
 */

import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapIdentity } from '../src/identity/bootstrap.js';
import { hashApiKey, installationId } from '@arbiter/key-auth';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { problem, startGateway, withKey } from './support/gateway.js';

const ADMIN_KEY = `arb_test_${randomBytes(24).toString('base64url')}`;

let first: TestDatabase;
let second: TestDatabase;
let redis: TestRedis;
const apps: FastifyInstance[] = [];

const me = (app: FastifyInstance, key = ADMIN_KEY) => app.inject({ method: 'GET', url: '/me', headers: withKey(key) });
const createKey = (app: FastifyInstance, key = ADMIN_KEY) =>
  app.inject({ method: 'POST', url: '/apikeys', headers: withKey(key), payload: { name: 'made with a key', scopes: ['view'] } });

beforeAll(async () => {
  [first, second, redis] = await Promise.all([createTestDatabase(), createTestDatabase(), createTestRedis()]);
  for (const db of [first, second]) await bootstrapIdentity(db.db, { orgId: 'default', adminKey: ADMIN_KEY });
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await redis?.cleanup();
  await first?.drop();
  await second?.drop();
});

async function gateway(db: TestDatabase): Promise<FastifyInstance> {
  const app = await startGateway(db, redis);
  apps.push(app);
  return app;
}

describe('the key cache and the database it came from', () => {
  it('gives every database its own installation id', async () => {
    const [a, b] = [await installationId(first.db), await installationId(second.db)];
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).not.toBe(b);
    expect(await installationId(first.db)).toBe(a);
  });

  it('after the database is replaced (same admin key, new bootstrap), a key made with the key is 201, not 500', async () => {
    const before = await gateway(first);
    const old = (await me(before)).json<{ apiKeyId: string }>();
    expect(old.apiKeyId).toEqual(expect.any(String));
    // The same Redis, a new database bootstrapped with the same key: that key has another id there.
    const after = await gateway(second);
    const now = (await me(after)).json<{ apiKeyId: string }>();
    expect(now.apiKeyId).not.toBe(old.apiKeyId);
    const created = await createKey(after);
    expect(created.statusCode, created.body).toBe(201);
    const keys = (await after.inject({ method: 'GET', url: '/apikeys?limit=200', headers: withKey(ADMIN_KEY) })).json<{
      items: Array<{ apiKeyId: string }>;
    }>().items;
    expect(keys.map((k) => k.apiKeyId)).toEqual(expect.arrayContaining([now.apiKeyId, created.json<{ apiKeyId: string }>().apiKeyId]));
  });

  it('after a restore that re-made the key under another id, the stale grant is re-read and the key is made (201)', async () => {
    const app = await gateway(first);
    const cachedId = (await me(app)).json<{ apiKeyId: string }>().apiKeyId;
    // As a restore of an older backup leaves it: the row the cache names is gone, the key hash is there under a new id.
    const remade = '0190a0b0-0000-7000-8000-0000000000bb';
    await first.db.transaction(async (trx) => {
      await trx('api_keys').where({ created_with_key_id: cachedId }).update({ created_with_key_id: null });
      await trx('api_keys').where({ id: cachedId }).update({ id: remade });
    });
    const created = await createKey(app);
    expect(created.statusCode, created.body).toBe(201);
    expect((await first.db('api_keys').where({ id: created.json<{ apiKeyId: string }>().apiKeyId }).first()).created_with_key_id).toBe(
      remade,
    );
    // the cache now holds the grant as the database has it
    expect((await me(app)).json<{ apiKeyId: string }>().apiKeyId).toBe(remade);
  });

  it('after a restore that lost the key, the stale grant is dropped and the caller gets 401, never 500', async () => {
    const app = await gateway(second);
    expect((await me(app)).statusCode).toBe(200);
    await second
      .db('api_keys')
      .where({ key_hash: hashApiKey(ADMIN_KEY) })
      .update({ created_with_key_id: null });
    await second.db('api_keys').update({ created_with_key_id: null });
    await second
      .db('api_keys')
      .where({ key_hash: hashApiKey(ADMIN_KEY) })
      .delete();
    expect(problem(await createKey(app))).toMatchObject({ status: 401, code: 'unauthenticated', detail: 'the API key is not valid' });
    expect(problem(await me(app))).toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});
