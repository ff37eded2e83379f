import type { FastifyInstance } from 'fastify';
import { openDatabase } from '@arbiter/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { newOrg, problem, startGateway, withKey } from './support/gateway.js';
import { TcpProxy } from '@arbiter/test-kit';

// PostgreSQL is reached through a proxy this file can cut: the shared server keeps running.
const CACHE_TTL_SECONDS = 1;
let direct: TestDatabase;
let proxied: TestDatabase;
let proxy: TcpProxy;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;

const run = (key: string) => app.inject({ method: 'POST', url: '/run', headers: withKey(key), payload: { rule: 'x', data: {} } });
const cacheKeys = async () => redis.redis.keys(`${redis.prefix}*:apikey:*`);

beforeAll(async () => {
  direct = await createTestDatabase();
  const url = new URL(direct.url);
  proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
  url.host = `127.0.0.1:${proxy.port}`;
  proxied = {
    url: url.toString(),
    db: openDatabase(url.toString(), { poolMax: 3, connectTimeoutMs: 500, statementTimeoutMs: 2000 }),
    drop: () => Promise.resolve(),
  };
  redis = await createTestRedis();
  app = await startGateway(proxied, redis, { cacheTtlSeconds: CACHE_TTL_SECONDS });
  adminKey = await newOrg(direct, 'acme');
});

afterAll(async () => {
  await app?.close();
  await proxy?.restore();
  await proxied?.db.destroy();
  await redis?.cleanup();
  await direct?.drop();
});

describe('a PostgreSQL outage', () => {
  it('keeps a key in use working past the cache TTL, answers 503 with retry-after for what needs the database, and recovers', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(adminKey),
      payload: { name: 'runner', scopes: ['view'] },
    });
    const { key, apiKeyId } = created.json<{ key: string; apiKeyId: string }>();
    expect((await run(key)).statusCode).toBe(200);

    await proxy.cut();
    // Used several times over more than three TTLs: each use restarts the entry's TTL, and the
    // background re-read of the stale grant fails quietly.
    const deadline = Date.now() + 3.5 * CACHE_TTL_SECONDS * 1000;
    let runs = 0;
    while (Date.now() < deadline) {
      expect((await run(key)).statusCode).toBe(200);
      runs++;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(runs).toBeGreaterThan(5);

    const users = await app.inject({ method: 'GET', url: '/users', headers: withKey(adminKey) });
    expect(problem(users)).toMatchObject({
      status: 503,
      code: 'dependency_unavailable',
      detail: 'the database is unavailable; retry later',
    });
    expect(users.headers['retry-after']).toBe('5');
    const unknown = await run('arb_not_a_key_that_the_cache_knows_about_0000000');
    expect(problem(unknown)).toMatchObject({ status: 503, code: 'dependency_unavailable' });
    expect(unknown.headers['retry-after']).toBe('5');
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ checks: { database: 'failed', redis: 'ok' } });

    await proxy.restore();
    const revoke = await app.inject({ method: 'DELETE', url: `/apikeys/${apiKeyId}`, headers: withKey(adminKey) });
    expect(revoke.statusCode).toBe(204);
    expect(problem(await run(key))).toMatchObject({ status: 401, detail: 'the API key has been revoked' });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  }, 30_000);

  it('drops the cache entry of a key nobody uses once its TTL passes', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(adminKey),
      payload: { name: 'idle', scopes: ['view'] },
    });
    const before = new Set(await cacheKeys());
    expect((await run(created.json<{ key: string }>().key)).statusCode).toBe(200);
    const added = (await cacheKeys()).filter((k) => !before.has(k));
    expect(added).toHaveLength(1);
    await expect.poll(async () => redis.redis.exists(added[0]!), { timeout: 5000, interval: 200 }).toBe(0);
  });
});

describe('a frozen PostgreSQL', () => {
  it('answers 503 with retry-after, never 500, when the server accepts connections but answers nothing, and recovers', async () => {
    proxy.freeze();
    try {
      // Until every pooled connection has failed, some requests wait for a read deadline and some for a connect deadline.
      for (let i = 0; i < 4; i++) {
        const users = await app.inject({ method: 'GET', url: '/users', headers: withKey(adminKey) });
        expect(problem(users), `attempt ${i}`).toMatchObject({ status: 503, code: 'dependency_unavailable' });
        expect(users.headers['retry-after']).toBe('5');
      }
      const created = await app.inject({
        method: 'POST',
        url: '/apikeys',
        headers: withKey(adminKey),
        payload: { name: 'x', scopes: ['view'] },
      });
      expect(problem(created)).toMatchObject({ status: 503, code: 'dependency_unavailable' });
    } finally {
      await proxy.restore();
    }
    await expect
      .poll(async () => (await app.inject({ method: 'GET', url: '/users', headers: withKey(adminKey) })).statusCode, { timeout: 10_000 })
      .toBe(200);
  }, 60_000);
});
