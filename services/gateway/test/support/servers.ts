import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { ensureDatabase, openDatabase } from '@arbiter/service-kit';
import { deleteRedisKeys, dropDatabases, randomPrefix, testServers, withDatabase } from '@arbiter/test-kit';
import { migrateGateway } from '../../src/migrate.js';

/** PostgreSQL (its database name replaced per file) and Redis (a key prefix per file) the tests use. */
const { postgres: PG_URL, redis: REDIS_URL } = testServers();
export { REDIS_URL };

/** A migrated database of its own for one test file. */
export interface TestDatabase {
  readonly url: string;
  readonly db: Knex;
  drop(): Promise<void>;
}

/** Creates `arbiter_test_<random>` through the gateway's own first-start path and migrates it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = randomPrefix('arbiter_test');
  const url = withDatabase(PG_URL, name);
  await ensureDatabase(url);
  const db = openDatabase(url, { poolMax: 5 });
  await migrateGateway(db);
  return {
    url,
    db,
    async drop() {
      await db.destroy();
      await dropDatabases(PG_URL, [name]);
    },
  };
}

/** A Redis connection plus a key prefix of its own; `cleanup` deletes the prefix's keys. */
export interface TestRedis {
  readonly redis: Redis;
  readonly prefix: string;
  cleanup(): Promise<void>;
}

/** Connects to the test Redis with a fresh key prefix. */
export async function createTestRedis(): Promise<TestRedis> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const prefix = `${randomPrefix('arbiter:test')}:`;
  return {
    redis,
    prefix,
    async cleanup() {
      await redis.quit();
      await deleteRedisKeys(REDIS_URL, prefix);
    },
  };
}
