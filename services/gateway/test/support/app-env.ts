import type { FastifyInstance } from 'fastify';
import { newOrg, startGateway } from './gateway.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './servers.js';

/** A gateway app on a test file's own database and Redis keys, with the first admin key of org `acme`. */
export interface GatewayEnv {
  db: TestDatabase;
  redis: TestRedis;
  app: FastifyInstance;
  adminKey: string;
}

/** Opens a {@link GatewayEnv} (for a file's `beforeAll`). */
export async function openGatewayEnv(): Promise<GatewayEnv> {
  const db = await createTestDatabase();
  const redis = await createTestRedis();
  const app = await startGateway(db, redis);
  return { db, redis, app, adminKey: await newOrg(db, 'acme') };
}

/** Closes what {@link openGatewayEnv} opened, as far as it got (for a file's `afterAll`). */
export async function closeGatewayEnv(env: Partial<Omit<GatewayEnv, 'adminKey'>>): Promise<void> {
  await env.app?.close();
  await env.redis?.cleanup();
  await env.db?.drop();
}
