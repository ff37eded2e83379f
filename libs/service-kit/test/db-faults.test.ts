import { freePort, TcpProxy, testServers } from '@arbiter/test-kit';
import pg from 'pg';
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

  it('recognises a frozen server: the connect deadline (`timeout expired`) and a query read deadline', async () => {
    const url = new URL(PG_URL);
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    const open = openDatabase(url.toString(), { poolMax: 1, statementTimeoutMs: 200, connectTimeoutMs: 5000 });
    try {
      await open.raw('select 1'); // a pooled connection, open before the freeze
      proxy.freeze();
      const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 300 });
      const connect = await failureOf(client.connect());
      expect((connect as Error).message).toBe('timeout expired');
      expect(isDatabaseUnavailable(connect)).toBe(true);
      const read = await failureOf(open.raw('select 1'));
      expect(isDatabaseUnavailable(read)).toBe(true);
    } finally {
      await proxy.restore();
      await open.destroy();
      await proxy.cut();
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
