import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, startRedisServer, testServers, type OwnServer } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/database.js';
import { connectRedis } from '../src/redis.js';
import { builtWorkerFile } from '../src/worker-file.js';
import { memoryLogger } from './helpers.js';

const PG_URL = testServers().postgres;

describe('Redis deadlines (own redis-server, frozen with SIGSTOP)', () => {
  let server: OwnServer;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('rejects a command with a timeout while Redis is frozen, and works again once it thaws', async () => {
    const redis = await connectRedis(server.url, memoryLogger().logger, { commandTimeoutMs: 200, connectTimeoutMs: 500 });
    try {
      expect(await redis.ping()).toBe('PONG');
      server.freeze();
      await expect(redis.ping()).rejects.toThrow('Command timed out');
      server.thaw();
      await expect.poll(() => redis.ping().catch(() => 'failed'), { timeout: 10_000 }).toBe('PONG');
    } finally {
      server.thaw();
      redis.disconnect();
    }
  });

  it('fails a command at once while disconnected instead of queueing it', async () => {
    const deadPort = await freePort();
    const logger = memoryLogger();
    await expect(
      connectRedis(`redis://127.0.0.1:${deadPort}`, logger.logger, { commandTimeoutMs: 5000, connectTimeoutMs: 500 }),
    ).rejects.toThrow();
  });
});

describe('PostgreSQL deadlines', () => {
  it('cancels a statement that runs past statement_timeout with SQLSTATE 57014', async () => {
    const db = openDatabase(PG_URL, { poolMax: 1, statementTimeoutMs: 200 });
    try {
      await expect(db.raw('select pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
      expect((await db.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it('gives up acquiring a connection from an exhausted pool after the connect deadline', async () => {
    const db = openDatabase(PG_URL, { poolMax: 1, connectTimeoutMs: 300, statementTimeoutMs: 5000 });
    try {
      const holding = db.transaction(async (trx) => {
        await trx.raw('select pg_sleep(1.5)');
      });
      await expect(db.raw('select 1')).rejects.toThrow(/Knex: Timeout acquiring a connection/);
      await holding;
    } finally {
      await db.destroy();
    }
  });
});

describe('builtWorkerFile', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'arbiter-worker-file-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('prefers the sibling file, else the same path under dist/, else explains what to build', () => {
    for (const dir of ['src/checks', 'dist/checks']) mkdirSync(path.join(root, 'pkg', dir), { recursive: true });
    const moduleUrl = pathToFileURL(path.join(root, 'pkg/src/checks/pool.ts')).href;
    expect(() => builtWorkerFile(moduleUrl, './worker.js')).toThrow(/not found and no built copy under dist\/: run `npm run build`/);
    writeFileSync(path.join(root, 'pkg/dist/checks/worker.js'), '');
    expect(builtWorkerFile(moduleUrl, './worker.js').href).toBe(pathToFileURL(path.join(root, 'pkg/dist/checks/worker.js')).href);
    writeFileSync(path.join(root, 'pkg/src/checks/worker.js'), '');
    expect(builtWorkerFile(moduleUrl, './worker.js').href).toBe(pathToFileURL(path.join(root, 'pkg/src/checks/worker.js')).href);
  });
});
