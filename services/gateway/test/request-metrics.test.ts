import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { newOrg, startGateway, withKey } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;
const metrics = new Registry();

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { metrics });
  adminKey = await newOrg(db, 'acme');
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

describe('request metrics', () => {
  it('count answers by method, route pattern and status, and time them, with bounded labels', async () => {
    for (let i = 0; i < 3; i++)
      await app.inject({ method: 'POST', url: '/run', headers: withKey(adminKey), payload: { rule: 'x', data: {} } });
    await app.inject({ method: 'POST', url: '/run', payload: { rule: 'x', data: {} } });
    await app.inject({ method: 'PUT', url: '/users/some-one', headers: withKey(adminKey), payload: { role: 'viewer' } });
    await app.inject({ method: 'GET', url: '/no/such/path/123' });
    const text = await metrics.metrics();
    expect(text).toContain('arbiter_http_requests_total{method="POST",route="/run",status="200"} 3');
    expect(text).toContain('arbiter_http_requests_total{method="POST",route="/run",status="401"} 1');
    expect(text).toContain('arbiter_http_requests_total{method="PUT",route="/users/:userId",status="201"} 1');
    expect(text).toContain('arbiter_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toContain('arbiter_http_request_duration_seconds_count{method="POST",route="/run"} 4');
    expect(text).not.toContain('some-one');
    expect(text).not.toContain('/no/such/path');
  });

  it('are not served on the public port (the ops server serves them on OPS_PORT)', async () => {
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: withKey(adminKey) });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('arbiter_http_requests_total');
  });
});
