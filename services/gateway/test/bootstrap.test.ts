import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { isArbiterError } from '@arbiter/contracts';
import { ensureDatabase } from '@arbiter/service-kit';
import { migrateGateway } from '../src/migrate.js';
import { bootstrapIdentity, createOrgWithAdmin } from '../src/identity/bootstrap.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { startGateway, withKey } from './support/gateway.js';

const run = promisify(execFile);
let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis);
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

const me = (key: string) => app.inject({ method: 'GET', url: '/me', headers: withKey(key) });

describe('first start', () => {
  it('creating the database and migrating again are no-ops', async () => {
    await ensureDatabase(db.url);
    await migrateGateway(db.db);
    const tables = await db.db.raw("select tablename from pg_tables where schemaname = 'public' order by 1");
    expect(tables.rows.map((r: { tablename: string }) => r.tablename)).toEqual(
      expect.arrayContaining(['api_keys', 'memberships', 'org_settings', 'orgs', 'users', 'gateway_knex_migrations']),
    );
  });

  it('the schema enforces its constraints', async () => {
    await expect(db.db('orgs').insert({ id: 'Not A Slug' })).rejects.toThrow(/orgs_id_slug/);
    await expect(db.db('memberships').insert({ org_id: 'nope', user_id: 'nobody', role: 'viewer' })).rejects.toThrow(/foreign key/);
  });
});

describe('bootstrap without POLICY_BOOTSTRAP_ADMIN_KEY', () => {
  it('generates an admin key once, for org default and user admin', async () => {
    const first = await bootstrapIdentity(db.db, { orgId: 'default' });
    expect(first.generatedKey).toMatch(/^arb_/);
    expect((await me(first.generatedKey!)).json()).toMatchObject({ orgId: 'default', userId: 'admin', role: 'admin' });
    const again = await bootstrapIdentity(db.db, { orgId: 'default' });
    expect(again.generatedKey).toBeUndefined();
  });

  it('runs once when several replicas start together', async () => {
    const results = await Promise.all([1, 2, 3].map(() => bootstrapIdentity(db.db, { orgId: 'racy' })));
    expect(results.filter((r) => r.generatedKey !== undefined)).toHaveLength(1);
  });
});

describe('bootstrap with POLICY_BOOTSTRAP_ADMIN_KEY', () => {
  const adminKey = 'configured-admin-key-0123456789abcdef';

  it('ensures the org, the admin and exactly that key, idempotently', async () => {
    const first = await bootstrapIdentity(db.db, { orgId: 'boot', adminKey });
    const second = await bootstrapIdentity(db.db, { orgId: 'boot', adminKey });
    expect(first.generatedKey).toBeUndefined();
    expect(second.notes).toEqual([]);
    expect((await me(adminKey)).json()).toMatchObject({ orgId: 'boot', userId: 'admin', role: 'admin' });
    const keys = (await app.inject({ method: 'GET', url: '/apikeys', headers: withKey(adminKey) })).json().items;
    expect(keys).toHaveLength(1);
  });

  it('leaves a revoked configured key revoked', async () => {
    const id = (await me(adminKey)).json().apiKeyId as string;
    expect((await app.inject({ method: 'DELETE', url: `/apikeys/${id}`, headers: withKey(adminKey) })).statusCode).toBe(204);
    const again = await bootstrapIdentity(db.db, { orgId: 'boot', adminKey });
    expect(again.notes).toEqual(['POLICY_BOOTSTRAP_ADMIN_KEY was revoked and stays revoked']);
    expect((await me(adminKey)).statusCode).toBe(401);
  });

  it('refuses a configured key shorter than 128 bits of base64', async () => {
    await expect(bootstrapIdentity(db.db, { orgId: 'boot', adminKey: 'short' })).rejects.toThrow(/too short/);
  });
});

describe('create-org', () => {
  it('creates an org with its admin and first key; refuses a duplicate or a bad id', async () => {
    const created = await createOrgWithAdmin(db.db, 'acme', 'alice');
    expect((await me(created.key)).json()).toMatchObject({ orgId: 'acme', userId: 'alice', role: 'admin' });
    await expect(createOrgWithAdmin(db.db, 'acme', 'bob')).rejects.toSatisfy((e) => isArbiterError(e, 'conflict'));
    await expect(createOrgWithAdmin(db.db, 'Bad_Org', 'bob')).rejects.toSatisfy((e) => isArbiterError(e, 'bad_request'));
  });

  it('the admin script prints the new key (built dist/admin.js)', async () => {
    const script = fileURLToPath(new URL('../dist/admin.js', import.meta.url));
    const { stdout } = await run(process.execPath, [script, 'create-org', 'cli-org', '--admin', 'root'], {
      env: { ...process.env, DATABASE_URL: db.url },
    });
    const key = /^\s+(arb_\S+)$/m.exec(stdout)?.[1];
    expect(stdout).toContain('Created org `cli-org` with admin `root`');
    expect((await me(key!)).json()).toMatchObject({ orgId: 'cli-org', userId: 'root', role: 'admin' });

    const dup = await run(process.execPath, [script, 'create-org', 'cli-org'], { env: { ...process.env, DATABASE_URL: db.url } }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(dup).toMatchObject({ code: 1, stderr: 'error: org `cli-org` already exists\n' });
    const usage = await run(process.execPath, [script], { env: { ...process.env, DATABASE_URL: db.url } }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(usage).toMatchObject({ code: 2 });
  });
});
