import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { ensureDatabase, migrateLatest, openDatabase } from '../../src/db/database.js';

/** PostgreSQL server used by the tests (trust auth); the test database name replaces the path. */
const PG_URL = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Redis used by the tests; every file works under its own key prefix. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A migrated database of its own for one test file. */
export interface TestDatabase {
  readonly url: string;
  readonly db: Knex;
  drop(): Promise<void>;
}

/** Creates `arbiter_test_<random>` through the gateway's own first-start path and migrates it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `arbiter_test_${randomBytes(6).toString('hex')}`;
  const url = withDatabase(PG_URL, name);
  await ensureDatabase(url);
  const db = openDatabase(url, 5);
  await migrateLatest(db);
  return {
    url,
    db,
    async drop() {
      await db.destroy();
      const admin = openDatabase(withDatabase(PG_URL, 'postgres'), 1);
      try {
        await admin.raw('drop database if exists ?? with (force)', [name]);
      } finally {
        await admin.destroy();
      }
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
  const prefix = `arbiter:test:${randomBytes(6).toString('hex')}:`;
  return {
    redis,
    prefix,
    async cleanup() {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await redis.quit();
    },
  };
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
