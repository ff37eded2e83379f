import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CLEANUP_TIMEOUT_MS, dropDatabases, testServers, withDatabase } from '../src/index.js';

const PG_URL = testServers().postgres;

async function exists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    return (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await admin.end();
  }
}

describe('dropDatabases: clean-ups on a deadline of their own', () => {
  it(
    'drops databases that still have sessions, even when the server URL sets a statement timeout too short for a drop',
    async () => {
      const names = [`arbiter_test_drop_${randomBytes(4).toString('hex')}`, `arbiter_test_drop_${randomBytes(4).toString('hex')}`];
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      for (const name of names) await admin.query(`create database ${name}`);
      await admin.end();
      const holder = new pg.Client({ connectionString: withDatabase(PG_URL, names[0]!) });
      holder.on('error', () => undefined);
      await holder.connect();
      const short = new URL(PG_URL);
      short.searchParams.set('options', '-c statement_timeout=1');
      try {
        await dropDatabases(short.toString(), [...names, 'arbiter_test_never_created']);
        expect(await exists(names[0]!)).toBe(false);
        expect(await exists(names[1]!)).toBe(false);
      } finally {
        await holder.end().catch(() => undefined);
        await dropDatabases(PG_URL, names);
      }
    },
    CLEANUP_TIMEOUT_MS,
  );
});
