import { freePort, testServers } from '@arbiter/test-kit';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/database.js';
import { isDatabaseUnavailable } from '../src/db-faults.js';

const PG_URL = testServers().postgres;

async function failureOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('isDatabaseUnavailable', () => {
  it('recognises a refused connection, a statement deadline and an exhausted pool from real servers', async () => {
    const down = openDatabase(`postgres://postgres@127.0.0.1:${await freePort()}/x`, { connectTimeoutMs: 500 });
    const slow = openDatabase(PG_URL, { poolMax: 1, statementTimeoutMs: 100, connectTimeoutMs: 300 });
    try {
      expect(isDatabaseUnavailable(await failureOf(down.raw('select 1')))).toBe(true);
      expect(isDatabaseUnavailable(await failureOf(slow.raw('select pg_sleep(2)')))).toBe(true);
      const held = slow.transaction((trx) => trx.raw('select pg_sleep(0.05)').then(() => new Promise((r) => setTimeout(r, 800))));
      expect(isDatabaseUnavailable(await failureOf(slow.raw('select 1')))).toBe(true);
      await held;
    } finally {
      await down.destroy();
      await slow.destroy();
    }
  });

  it('does not take a bad statement or a constraint violation for an outage', async () => {
    const db = openDatabase(PG_URL, { poolMax: 1 });
    try {
      expect(isDatabaseUnavailable(await failureOf(db.raw('select * from no_such_table_here')))).toBe(false);
      expect(isDatabaseUnavailable(await failureOf(db.raw("select 'x'::int")))).toBe(false);
      expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
      expect(isDatabaseUnavailable(undefined)).toBe(false);
    } finally {
      await db.destroy();
    }
  });

  it('looks through causes', () => {
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: '57P01' }) }))).toBe(true);
  });
});
