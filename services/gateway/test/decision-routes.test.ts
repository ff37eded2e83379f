/**
 * The decision settings routes (`GET`, `PUT` and `DELETE /decisions/settings…`) against a real audit
 * service (its built `dist/main.js`) over the real NATS, with a stand-in registry answering which
 * bases exist (the real one is in test/e2e/decisions.test.ts): settings only for live bases of the
 * caller's org, bounded per org before anything is written, and removable.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import {
  ArbiterError,
  DECISION_SETTINGS_LIMIT,
  MAX_DECISION_SETTINGS_BASES,
  MAX_DECISION_SETTINGS_BYTES,
  MAX_MASKS,
  type Principal,
} from '@arbiter/contracts';
import { connectBus, createLogger, openDatabase, type Bus } from '@arbiter/service-kit';
import { CLEANUP_TIMEOUT_MS, dropDatabases, eventually, testServers } from '@arbiter/test-kit';
import { NatsDecisionsClient } from '../src/clients/decisions-client.js';
import type { RegistryClient } from '../src/clients/registry-client.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { memberKey, newOrg, problem, signToken, startGateway, withKey, withToken } from './support/gateway.js';

const { nats: NATS_URL, postgres: PG_URL } = testServers();
const AUDIT_MAIN = path.join(path.dirname(createRequire(import.meta.url).resolve('@arbiter/audit/package.json')), 'dist/main.js');

const id = randomBytes(6).toString('hex');
const prefix = `test_gwdecisions_${id}`;
const auditDb = `arbiter_audit_gwdec_${id}`;
let db: TestDatabase;
let redis: TestRedis;
let bus: Bus;
let app: FastifyInstance;
let child: ChildProcess | undefined;
const keys: Record<string, string> = {};

/** What the stand-in registry knows: base ids (and one record id) by org, kind and state. */
const bases = new Map<string, { orgId: string; kind: 'policy' | 'flow'; baseId: string; deleted?: boolean }>();
const POLICY = randomUUID();
const FLOW = randomUUID();
const RECORD = randomUUID(); // a record id of POLICY: no base id
const DELETED = randomUUID();
const OTHER = randomUUID(); // a base of the other org
bases.set(POLICY, { orgId: 'acme', kind: 'policy', baseId: POLICY });
bases.set(FLOW, { orgId: 'acme', kind: 'flow', baseId: FLOW });
bases.set(RECORD, { orgId: 'acme', kind: 'policy', baseId: POLICY });
bases.set(DELETED, { orgId: 'acme', kind: 'policy', baseId: DELETED, deleted: true });
bases.set(OTHER, { orgId: 'other', kind: 'policy', baseId: OTHER });

/** `registry.{policy,flow}.get` as the registry answers them: any member, own org, live bases; a base id or a record id. */
function getter(kind: 'policy' | 'flow') {
  return (principal: Principal, recordId: string) => {
    const b = bases.get(recordId);
    if (!b || b.orgId !== principal.orgId || b.kind !== kind || b.deleted) {
      return Promise.reject(new ArbiterError('not_found', `${kind} \`${recordId}\` not found`));
    }
    return Promise.resolve({ baseId: b.baseId });
  };
}
const registry = { policies: { get: getter('policy') }, flows: { get: getter('flow') }, groups: {} } as unknown as RegistryClient;

async function startAudit(): Promise<void> {
  const u = new URL(PG_URL);
  u.pathname = `/${auditDb}`;
  child = spawn(process.execPath, [AUDIT_MAIN], {
    env: { ...process.env, NATS_URL, NATS_SUBJECT_PREFIX: prefix, AUDIT_DATABASE_URL: u.toString(), LOG_LEVEL: 'silent', OPS_PORT: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await eventually(
    async () => {
      const res = await app.inject({ url: '/decisions/settings', headers: withKey(keys.admin!) });
      expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}

async function stopAudit(): Promise<void> {
  const c = child;
  child = undefined;
  if (!c || c.exitCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await exited;
}

/** Runs `sql` on the audit service's database (rows written behind the API's back: settings from before the bounds). */
async function auditSql(sql: string, bindings: unknown[] = []): Promise<void> {
  const u = new URL(PG_URL);
  u.pathname = `/${auditDb}`;
  const adb = openDatabase(u.toString(), { poolMax: 1 });
  try {
    await adb.raw(sql, bindings as never);
  } finally {
    await adb.destroy();
  }
}

const put = (url: string, payload: unknown, key = keys.admin!) =>
  app.inject({ method: 'PUT', url, headers: { ...withKey(key), 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
const del = (url: string, key = keys.admin!) => app.inject({ method: 'DELETE', url, headers: withKey(key) });
const settingsOf = async (key = keys.admin!) => {
  const res = await app.inject({ url: '/decisions/settings', headers: withKey(key) });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return res.json<{ masks: string[]; bases: Record<string, unknown> }>();
};
/** 64 masks of 199 characters: the largest one base's settings can be (about 13 KB). */
const bigMasks = (tag: string) =>
  Array.from({ length: MAX_MASKS }, (_, i) => `${tag}.${String(i).padStart(2, '0')}.${'x'.repeat(199 - tag.length - 4)}`);

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  bus = await connectBus({
    url: NATS_URL,
    prefix,
    name: 'gateway-decisions-test',
    logger: createLogger({ service: 't', level: 'silent' }),
  });
  app = await startGateway(db, redis, { decisions: new NatsDecisionsClient(bus, 5000), registry });
  keys.admin = await newOrg(db, 'acme');
  keys.other = await newOrg(db, 'other', 'other-admin');
  keys.publisher = await memberKey(app, keys.admin, 'acme', 'pia', 'publisher', ['view', 'edit', 'publish']);
  keys.publisherViewOnly = await memberKey(app, keys.admin, 'acme', 'pete', 'publisher', ['view']);
  keys.editor = await memberKey(app, keys.admin, 'acme', 'eddie', 'editor', ['view', 'edit']);
  keys.viewer = await memberKey(app, keys.admin, 'acme', 'vic', 'viewer', ['view']);
  keys.auditor = await memberKey(app, keys.admin, 'acme', 'audrey', 'auditor', ['view', 'audit']);
  await startAudit();
}, 60_000);

afterAll(async () => {
  await stopAudit();
  await app?.close();
  await bus?.close();
  await redis?.cleanup();
  await db?.drop();
  await dropDatabases(PG_URL, [auditDb]);
}, CLEANUP_TIMEOUT_MS);

describe('PUT /decisions/settings/{baseId}', () => {
  it("sets a policy base's and a flow base's settings for admins and publishers", async () => {
    const policy = await put(`/decisions/settings/${POLICY}`, { masks: ['applicant.ssn'] }, keys.publisher);
    expect(policy.statusCode, policy.body).toBe(200);
    const flow = await put(`/decisions/settings/${FLOW}`, { sampleRate: 0.5 });
    expect(flow.statusCode, flow.body).toBe(200);
    expect(flow.json()).toEqual({
      masks: [],
      bases: {
        [POLICY]: { enabled: true, sampleRate: 1, masks: ['applicant.ssn'] },
        [FLOW]: { enabled: true, sampleRate: 0.5, masks: [] },
      },
    });
    const bearer = await signToken({ sub: 'admin', org: 'acme' });
    const res = await app.inject({ method: 'PUT', url: `/decisions/settings/${FLOW}`, headers: withToken(bearer), payload: { masks: [] } });
    expect(res.statusCode).toBe(200);
  });

  it('answers 404 for an id that is no live base of the org, and writes nothing', async () => {
    const before = await settingsOf();
    for (const [what, baseId] of [
      ['unknown', randomUUID()],
      ["another org's base", OTHER],
      ['a deleted base', DELETED],
      ['a record id', RECORD],
      ['not a uuid', 'no-such-base'],
    ] as const) {
      const res = await put(`/decisions/settings/${baseId}`, { masks: ['a.b'] });
      expect(problem(res), what).toMatchObject({ status: 404, code: 'not_found' });
    }
    expect(await settingsOf()).toEqual(before);
    // The other org sees its own settings only, and cannot set acme's bases.
    expect(problem(await put(`/decisions/settings/${POLICY}`, { masks: [] }, keys.other!))).toMatchObject({ status: 404 });
    expect(await settingsOf(keys.other)).toEqual({ masks: [], bases: {} });
  });

  it('answers 401 without credentials and 403 to other roles and to a key without the `publish` scope, and writes nothing', async () => {
    const before = await settingsOf();
    const none = await app.inject({ method: 'PUT', url: `/decisions/settings/${POLICY}`, payload: { masks: [] } });
    expect(problem(none)).toMatchObject({ status: 401, code: 'unauthenticated' });
    for (const who of ['editor', 'viewer', 'auditor', 'publisherViewOnly']) {
      expect(problem(await put(`/decisions/settings/${POLICY}`, { masks: [] }, keys[who])), who).toMatchObject({
        status: 403,
        code: 'forbidden',
      });
    }
    // Only admins set the org masks.
    expect(problem(await put('/decisions/settings', { masks: [] }, keys.publisher))).toMatchObject({ status: 403 });
    expect(await settingsOf()).toEqual(before);
  });

  it('answers 400 to malformed settings, and writes nothing', async () => {
    const before = await settingsOf();
    for (const body of [
      { sampleRate: 2 },
      { enabled: 'yes' },
      { masks: ['a..b'] },
      { masks: [''] },
      { masks: [7] },
      { masks: ['x'.repeat(201)] },
      { masks: Array.from({ length: MAX_MASKS + 1 }, (_, i) => `m${i}`) },
      { masks: [Array.from({ length: 17 }, () => 'a').join('.')] },
      { masks: [], extra: true },
      [],
    ]) {
      expect(problem(await put(`/decisions/settings/${POLICY}`, body)).status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    const notJson = await app.inject({
      method: 'PUT',
      url: `/decisions/settings/${POLICY}`,
      headers: { ...withKey(keys.admin!), 'content-type': 'application/json' },
      payload: '{"masks": [',
    });
    expect(notJson.statusCode).toBe(400);
    expect(await settingsOf()).toEqual(before);
  });

  it("refuses (413) a change that would take the org's settings past their bytes, before anything is written", async () => {
    // Bases of the org with the largest settings one base can have, until the org's bound refuses one.
    const filled: string[] = [];
    let refused: { status: number; body: string } | undefined;
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const baseId = randomUUID();
      bases.set(baseId, { orgId: 'acme', kind: 'policy', baseId });
      const before = await settingsOf();
      const res = await put(`/decisions/settings/${baseId}`, { masks: bigMasks(`b${i}`) });
      if (res.statusCode === 200) {
        filled.push(baseId);
        continue;
      }
      refused = { status: res.statusCode, body: res.body };
      expect(problem(res)).toMatchObject({ status: 413, code: 'payload_too_large' });
      expect(res.json().errors).toEqual([expect.objectContaining({ code: DECISION_SETTINGS_LIMIT })]);
      // Nothing was written: the settings read as before, and still within the bound.
      const after = await app.inject({ url: '/decisions/settings', headers: withKey(keys.admin!) });
      expect(after.statusCode).toBe(200);
      expect(after.json()).toEqual(before);
      expect(after.json().bases[baseId]).toBeUndefined();
      expect(after.rawPayload.length).toBeLessThanOrEqual(MAX_DECISION_SETTINGS_BYTES);
      // The org masks count too; a change that makes the settings smaller is taken.
      expect(problem(await put('/decisions/settings', { masks: bigMasks('org') })).status).toBe(413);
      expect(await settingsOf()).toEqual(before);
      expect((await put(`/decisions/settings/${filled[0]}`, { masks: ['a.b'] })).statusCode).toBe(200);
    }
    expect(refused, 'the org bound never refused a change').toBeDefined();
    expect(filled.length).toBeGreaterThan(10);
    for (const baseId of filled) expect((await del(`/decisions/settings/${baseId}`)).statusCode).toBe(204);
  });

  it(`refuses (413) settings for more than ${MAX_DECISION_SETTINGS_BASES} bases of one org`, async () => {
    // Rows written behind the API's back, up to the bound; the next base is refused, an existing one may change.
    const existing = Object.keys((await settingsOf()).bases).length;
    const ids = Array.from({ length: MAX_DECISION_SETTINGS_BASES - existing }, () => randomUUID());
    await auditSql(
      'insert into decision_settings (org_id, base_id, settings) select \'acme\', unnest(?::text[]), \'{"enabled":true,"sampleRate":1,"masks":[]}\'::jsonb',
      [ids],
    );
    const baseId = randomUUID();
    bases.set(baseId, { orgId: 'acme', kind: 'policy', baseId });
    const res = await put(`/decisions/settings/${baseId}`, { masks: [] });
    expect(problem(res)).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect((await settingsOf()).bases[baseId]).toBeUndefined();
    expect((await put(`/decisions/settings/${POLICY}`, { masks: ['applicant.ssn'] })).statusCode).toBe(200);
    await auditSql("delete from decision_settings where org_id = 'acme' and base_id = any(?::text[])", [ids]);
  });
});

describe('DELETE /decisions/settings/{baseId}', () => {
  it("removes a base's settings (204); 404 when the org has none for that id, another org's included", async () => {
    const otherBase = await put(`/decisions/settings/${OTHER}`, { masks: ['x'] }, keys.other!);
    expect(otherBase.statusCode).toBe(200);
    expect(problem(await del(`/decisions/settings/${OTHER}`))).toMatchObject({ status: 404, code: 'not_found' });
    expect((await settingsOf(keys.other)).bases[OTHER]).toBeDefined();

    expect((await settingsOf()).bases[POLICY]).toBeDefined();
    const removed = await del(`/decisions/settings/${POLICY}`, keys.publisher);
    expect(removed.statusCode, removed.body).toBe(204);
    expect(removed.body).toBe('');
    expect((await settingsOf()).bases[POLICY]).toBeUndefined();
    expect(problem(await del(`/decisions/settings/${POLICY}`))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await del(`/decisions/settings/${randomUUID()}`))).toMatchObject({ status: 404 });
  });

  it('answers 404 for ids that name object internals (`__proto__`, `constructor`) and removes nothing', async () => {
    const before = await settingsOf();
    for (const id of ['__proto__', 'constructor', 'hasOwnProperty']) {
      const res = await del(`/decisions/settings/${id}`);
      expect(res.statusCode, `${id}: ${res.body}`).toBe(404);
    }
    expect(await settingsOf()).toEqual(before);
  });

  it('removes the settings of a base deleted since (no live base needed)', async () => {
    const baseId = randomUUID();
    bases.set(baseId, { orgId: 'acme', kind: 'flow', baseId });
    expect((await put(`/decisions/settings/${baseId}`, { enabled: false })).statusCode).toBe(200);
    bases.set(baseId, { orgId: 'acme', kind: 'flow', baseId, deleted: true });
    expect(problem(await put(`/decisions/settings/${baseId}`, { enabled: true }))).toMatchObject({ status: 404 });
    expect((await del(`/decisions/settings/${baseId}`)).statusCode).toBe(204);
    expect((await settingsOf()).bases[baseId]).toBeUndefined();
  });

  it('answers 401 without credentials and 403 to other roles, and removes nothing', async () => {
    expect((await put(`/decisions/settings/${FLOW}`, { masks: ['k'] })).statusCode).toBe(200);
    expect(problem(await app.inject({ method: 'DELETE', url: `/decisions/settings/${FLOW}` }))).toMatchObject({ status: 401 });
    for (const who of ['editor', 'viewer', 'auditor', 'publisherViewOnly']) {
      expect(problem(await del(`/decisions/settings/${FLOW}`, keys[who])), who).toMatchObject({ status: 403, code: 'forbidden' });
    }
    expect((await settingsOf()).bases[FLOW]).toEqual({ enabled: true, sampleRate: 1, masks: ['k'] });
  });
});

describe('GET /decisions/settings', () => {
  it('answers admins, auditors and publishers; 403 to editors and viewers; 401 without credentials', async () => {
    for (const who of ['admin', 'auditor', 'publisher']) await settingsOf(keys[who]);
    for (const who of ['editor', 'viewer']) {
      const res = await app.inject({ url: '/decisions/settings', headers: withKey(keys[who]!) });
      expect(problem(res), who).toMatchObject({ status: 403, code: 'forbidden' });
    }
    expect(problem(await app.inject({ url: '/decisions/settings' }))).toMatchObject({ status: 401 });
  });

  it('documents the routes in /openapi.json with their error answers', async () => {
    const doc = (await app.inject({ url: '/openapi.json' })).json<{ paths: Record<string, Record<string, { responses: object }>> }>();
    const one = doc.paths['/decisions/settings/{baseId}']!;
    expect(Object.keys(one).sort()).toEqual(['delete', 'put']);
    expect(Object.keys(one.put!.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '413']));
    expect(Object.keys(one.delete!.responses)).toEqual(expect.arrayContaining(['204', '401', '403', '404']));
    expect(Object.keys(doc.paths['/decisions/settings']!.put!.responses)).toContain('413');
  });
});
