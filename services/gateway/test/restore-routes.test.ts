/**
 * Restore of soft-deleted policies and flows and the lists of deleted bases
 * against a real registry in-process with its own database, on a subject prefix of this file.
 */

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import { eventStreamName } from '@arbiter/contracts';
import { RegistryConfig } from '@arbiter/registry/config';
import { startRegistry, type Registry } from '@arbiter/registry/service';
import { connectBus, createLogger, inProcessKit, type Bus } from '@arbiter/service-kit';
import { dropDatabases, testServers, withDatabase } from '@arbiter/test-kit';
import { jetstreamManager } from '@nats-io/jetstream';
import { NatsRegistryClient } from '../src/clients/registry-client.js';
import { createTestDatabase, createTestRedis, REDIS_URL, type TestDatabase, type TestRedis } from './support/servers.js';
import { memberKey, newOrg, problem, startGateway, withKey } from './support/gateway.js';

const { postgres: PG_URL, nats: NATS_URL } = testServers();
const RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
const UNKNOWN = '0190a0b0-0000-7000-8000-00000000dead';

const id = randomBytes(6).toString('hex');
const prefix = `test_gwrst_${id}`;
const logger = createLogger({ service: 'gateway-restore-test', level: 'silent' });

let db: TestDatabase;
let redis: TestRedis;
let registry: Registry;
let bus: Bus;
let app: FastifyInstance;
type Member = 'admin' | 'editor' | 'publisher' | 'viewer' | 'stranger';
const keys = {} as Record<Member, string>;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  const registryConfig = RegistryConfig.parse({
    NATS_URL,
    REDIS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    DATABASE_URL: withDatabase(PG_URL, `arbiter_test_reg_${id}`),
    LOG_LEVEL: 'silent',
    DB_POOL_MAX: '3',
    REGISTRY_CHECK_TIMEOUT_MS: '10000',
  });
  registry = await startRegistry(inProcessKit('registry', registryConfig, { logger }));
  bus = await connectBus({ url: NATS_URL, prefix, name: 'gateway-restore-test', logger });
  app = await startGateway(db, redis, { registry: new NatsRegistryClient(bus, 10_000) });
  keys.admin = await newOrg(db, 'acme');
  keys.editor = await memberKey(app, keys.admin, 'acme', 'eddie', 'editor', ['view', 'edit']);
  keys.publisher = await memberKey(app, keys.admin, 'acme', 'pat', 'publisher', ['view', 'edit', 'publish']);
  keys.viewer = await memberKey(app, keys.admin, 'acme', 'vic', 'viewer', ['view']);
  keys.stranger = await newOrg(db, 'globex', 'stranger');
}, 60_000);

afterAll(async () => {
  await app?.close();
  await registry?.close();
  if (bus) {
    const jsm = await jetstreamManager(bus.nc);
    await jsm.streams.delete(eventStreamName(prefix)).catch(() => undefined);
    await bus.close();
  }
  await redis?.cleanup();
  await db?.drop();
  await dropDatabases(PG_URL, [`arbiter_test_reg_${id}`]);
});

type Who = Member | 'nobody';
const headers = (who: Who, extra: Record<string, string> = {}) => (who === 'nobody' ? extra : { ...withKey(keys[who]), ...extra });
const call = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  who: Who,
  payload?: string | object,
  extra: Record<string, string> = {},
) =>
  app.inject({
    method,
    url,
    headers: headers(who, extra),
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
  });
const ok = (res: LightMyRequestResponse, status: number) => {
  expect(res.statusCode, res.body).toBe(status);
  return res.json<Record<string, unknown>>();
};
const createPolicy = async (name: string) =>
  ok(await call('POST', '/policy', 'editor', { name, rule: RULE }), 201) as { policyId: string; baseId: string };
const deletePolicy = async (recordId: string) => expect((await call('DELETE', `/policy/${recordId}`, 'admin')).statusCode).toBe(204);

describe('POST /policy/{policyId}/restore', () => {
  it('restores a deleted base with its versions; it lists and loads again', async () => {
    const d = await createPolicy('restorable');
    const v1 = ok(await call('PUT', `/policy/${d.policyId}`, 'publisher', { status: 'published' }), 201);
    await deletePolicy(d.policyId);
    expect(problem(await call('GET', `/policy/${d.policyId}`, 'admin'))).toMatchObject({ status: 404, code: 'not_found' });

    const restored = ok(await call('POST', `/policy/${d.baseId}/restore`, 'admin'), 200);
    expect(restored).toMatchObject({ policyId: d.policyId, baseId: d.baseId, status: 'published', version: v1.version });
    expect(ok(await call('GET', `/policy/${d.policyId}`, 'viewer'), 200)).toMatchObject({ version: 1 });
    const listed = ok(await call('GET', '/policies?q=restorable', 'viewer'), 200);
    expect((listed.items as { baseId: string }[]).map((i) => i.baseId)).toEqual([d.baseId]);
  });

  it('accepts an empty body whatever the content type, `{}` as JSON; refuses other bodies', async () => {
    const d = await createPolicy('empty bodies');
    for (const contentType of ['application/json', 'text/plain', 'application/octet-stream']) {
      await deletePolicy(d.policyId);
      ok(await call('POST', `/policy/${d.policyId}/restore`, 'admin', '', { 'content-type': contentType }), 200);
    }
    await deletePolicy(d.policyId);
    ok(await call('POST', `/policy/${d.policyId}/restore`, 'admin', {}), 200);
    await deletePolicy(d.policyId);
    expect(problem(await call('POST', `/policy/${d.policyId}/restore`, 'admin', { force: true }))).toMatchObject({ status: 400 });
    expect(problem(await call('POST', `/policy/${d.policyId}/restore`, 'admin', 'x', { 'content-type': 'text/plain' }))).toMatchObject({
      status: 415,
      code: 'unsupported_media_type',
    });
    expect(
      problem(await call('POST', `/policy/${d.policyId}/restore`, 'admin', '{', { 'content-type': 'application/json' })),
    ).toMatchObject({
      status: 400,
    });
  });

  it('401 without credentials, 403 below admin, 404 unknown or other org, 409 when not deleted', async () => {
    const d = await createPolicy('guarded');
    expect(problem(await call('POST', `/policy/${d.policyId}/restore`, 'admin'))).toMatchObject({ status: 409, code: 'conflict' });
    await deletePolicy(d.policyId);
    expect(problem(await call('POST', `/policy/${d.policyId}/restore`, 'nobody'))).toMatchObject({ status: 401 });
    for (const who of ['editor', 'publisher', 'viewer'] as const) {
      expect(problem(await call('POST', `/policy/${d.policyId}/restore`, who))).toMatchObject({ status: 403, code: 'forbidden' });
    }
    expect(problem(await call('POST', `/policy/${d.policyId}/restore`, 'stranger'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await call('POST', `/policy/${UNKNOWN}/restore`, 'admin'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await call('POST', `/policy/not-a-uuid/restore`, 'admin'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await call('POST', `/flow/${d.policyId}/restore`, 'admin'))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('flows restore the same way', async () => {
    const f = ok(
      await call('POST', '/flow', 'editor', {
        name: 'gone flow',
        definition: { start: 'r', nodes: { r: { type: 'return', value: true } } },
      }),
      201,
    ) as { flowId: string; baseId: string };
    expect((await call('DELETE', `/flow/${f.flowId}`, 'admin')).statusCode).toBe(204);
    const deleted = ok(await call('GET', '/flows?deleted=true&q=gone%20flow', 'admin'), 200);
    expect(deleted.items).toEqual([expect.objectContaining({ flowId: f.flowId, deletedBy: 'admin' })]);
    expect(ok(await call('POST', `/flow/${f.flowId}/restore`, 'admin'), 200)).toMatchObject({ flowId: f.flowId, status: 'draft' });
    expect(problem(await call('POST', `/flow/${f.flowId}/restore`, 'admin'))).toMatchObject({ status: 409 });
  });
});

describe('GET /policies?deleted=true', () => {
  it('admins list deleted bases with deletedAt/deletedBy; others 403; other orgs see none', async () => {
    const d = await createPolicy('binned');
    await deletePolicy(d.policyId);
    const page = ok(await call('GET', '/policies?deleted=true&q=binned', 'admin'), 200);
    expect(page).toEqual({
      items: [expect.objectContaining({ policyId: d.policyId, baseId: d.baseId, deletedBy: 'admin', deletedAt: expect.any(String) })],
      nextCursor: null,
    });
    expect((ok(await call('GET', '/policies?q=binned', 'admin'), 200).items as unknown[]).length).toBe(0);
    expect((ok(await call('GET', '/policies?deleted=false&q=binned', 'admin'), 200).items as unknown[]).length).toBe(0);
    for (const who of ['editor', 'publisher', 'viewer'] as const) {
      expect(problem(await call('GET', '/policies?deleted=true', who))).toMatchObject({ status: 403, code: 'forbidden' });
    }
    expect(problem(await call('GET', '/policies?deleted=true', 'nobody'))).toMatchObject({ status: 401 });
    expect((ok(await call('GET', '/policies?deleted=true&q=binned', 'stranger'), 200).items as unknown[]).length).toBe(0);
    expect(problem(await call('GET', '/policies?deleted=yes', 'admin'))).toMatchObject({ status: 400 });
    expect(problem(await call('GET', '/policies?deleted=true&cursor=junk', 'admin'))).toMatchObject({ status: 400 });
  });
});

describe('OpenAPI', () => {
  it('documents the restore routes and the `deleted` query, and stays valid', async () => {
    const doc = ok(await app.inject({ method: 'GET', url: '/openapi.json' }), 200) as { paths: Record<string, Record<string, unknown>> };
    expect(doc.paths['/policy/{policyId}/restore']?.post).toBeDefined();
    expect(doc.paths['/flow/{flowId}/restore']?.post).toBeDefined();
    expect(JSON.stringify(doc.paths['/policies']?.get)).toContain('"deleted"');
    expect((await new Validator().validate(doc)).errors ?? []).toEqual([]);
  });
});

describe('GET /export', () => {
  it('answers the org’s bundle: policies with every version, flows, groups; more than one registry page', async () => {
    const made: string[] = [];
    for (let i = 0; i < 22; i++) made.push((await createPolicy(`bundled ${i}`)).baseId);
    const v = await createPolicy('bundled published');
    ok(await call('PUT', `/policy/${v.policyId}`, 'admin', { status: 'published', description: 'one' }), 201);
    const g = ok(await call('POST', '/group', 'editor', { name: 'bundle group' }), 201) as { groupId: string };
    ok(await call('POST', `/group/${g.groupId}/member`, 'editor', { memberId: v.baseId, memberType: 'policy' }), 201);

    const res = await call('GET', '/export', 'admin');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const bundle = res.json<{
      format: string;
      formatVersion: number;
      orgId: string;
      policies: { baseId: string; records: { version: number | null; description: string; rule: string }[] }[];
      flows: { baseId: string }[];
      groups: { groupId: string; members: unknown[] }[];
    }>();
    expect(bundle).toMatchObject({ format: 'arbiter-bundle', formatVersion: 1, orgId: 'acme' });
    const ids = bundle.policies.map((p) => p.baseId);
    for (const id of [...made, v.baseId]) expect(ids).toContain(id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(bundle.policies.find((p) => p.baseId === v.baseId)!.records).toEqual([
      expect.objectContaining({ version: 1, description: 'one', rule: RULE }),
    ]);
    expect(bundle.groups.find((x) => x.groupId === g.groupId)!.members).toEqual([{ memberId: v.baseId, memberType: 'policy' }]);
    expect(Array.isArray(bundle.flows)).toBe(true);
  });

  it('401 without credentials, 403 below admin; another org gets its own (empty) bundle', async () => {
    expect(problem(await call('GET', '/export', 'nobody'))).toMatchObject({ status: 401 });
    for (const who of ['editor', 'publisher', 'viewer'] as const) {
      expect(problem(await call('GET', '/export', who))).toMatchObject({ status: 403, code: 'forbidden' });
    }
    expect(ok(await call('GET', '/export', 'stranger'), 200)).toMatchObject({ orgId: 'globex', policies: [], flows: [], groups: [] });
  });
});

describe('query strings: one rule for every route', () => {
  it('ignores unknown query parameters, and still validates the known ones', async () => {
    const d = ok(await call('POST', '/policy', 'editor', { name: 'query rules', rule: RULE }), 201) as { policyId: string };
    for (const url of [
      '/policies',
      '/policies?deleted=true',
      '/flows',
      '/groups',
      '/export',
      '/me',
      '/users',
      '/apikeys',
      '/apikeys?all=true',
      '/policies?all=false',
      `/policy/${d.policyId}/versions`,
    ]) {
      const withBogus = `${url}${url.includes('?') ? '&' : '?'}bogus=1&all_the_things=yes`;
      expect((await call('GET', withBogus, 'admin')).statusCode, withBogus).toBe(200);
    }
    for (const url of [
      '/policies?all=yes',
      '/apikeys?all=yes',
      '/policies?bogus=1&limit=0',
      '/groups?bogus=1&limit=x',
      '/users?bogus=1&cursor=',
    ]) {
      const answer = problem(await call('GET', url, 'admin'));
      expect(answer, url).toMatchObject({ status: 400 });
      expect(JSON.stringify(answer), url).not.toContain('bogus');
    }
  });
});
