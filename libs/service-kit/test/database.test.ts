import { randomBytes } from 'node:crypto';
import { CLEANUP_TIMEOUT_MS, dropDatabases, testServers, withDatabase } from '@arbiter/test-kit';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDatabase } from '../src/database.js';

const name = `arbiter_test_ensure_${randomBytes(4).toString('hex')}`;
const url = withDatabase(testServers().postgres, name);

afterAll(() => dropDatabases(testServers().postgres, [name]), CLEANUP_TIMEOUT_MS);

describe('ensureDatabase', () => {
  it('creates a missing database once, even when many processes race', async () => {
    await Promise.all(Array.from({ length: 6 }, () => ensureDatabase(url)));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    expect((await client.query('select current_database() as db')).rows[0].db).toBe(name);
    await client.end();
    await ensureDatabase(url);
  });

  it('refuses a database name that is not a plain identifier', async () => {
    await expect(ensureDatabase(withDatabase(testServers().postgres, 'bad;name'))).rejects.toThrow(/invalid database name/);
  });
});
