/**
 * The review endpoints and the governed `PUT` against a real registry and a real
 * governance service, each in-process with its own database, on a subject prefix of this file.
 */

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import { DecisionSubject, eventStreamName } from '@arbiter/contracts';
import { GovernanceConfig } from '@arbiter/governance/config';
import { startGovernance, type Governance } from '@arbiter/governance/service';
import { RegistryConfig } from '@arbiter/registry/config';
import { startRegistry, type Registry } from '@arbiter/registry/service';
import { connectBus, createLogger, encodeFrame, inProcessKit, type Bus } from '@arbiter/service-kit';
import { jetstreamManager } from '@nats-io/jetstream';
import { dropDatabases, testServers, withDatabase as databaseUrl } from '@arbiter/test-kit';
import { NatsGovernanceClient } from '../src/clients/governance-client.js';
import { NatsImpactClient } from '../src/clients/impact-client.js';
import { NatsRegistryClient } from '../src/clients/registry-client.js';
import { createTestDatabase, createTestRedis, REDIS_URL, type TestDatabase, type TestRedis } from './support/servers.js';
import { memberKey, newOrg, problem, startGateway, withKey } from './support/gateway.js';

const { postgres: PG_URL, nats: NATS_URL } = testServers();
const RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
const UNKNOWN = '0190a0b0-0000-7000-8000-00000000dead';

const withDatabase = (name: string): string => databaseUrl(PG_URL, name);

const id = randomBytes(6).toString('hex');
const prefix = `test_gwgov_${id}`;
const logger = createLogger({ service: 'gateway-review-test', level: 'silent' });
const governanceConfig = GovernanceConfig.parse({
  NATS_URL,
  NATS_SUBJECT_PREFIX: prefix,
  GOVERNANCE_DATABASE_URL: withDatabase(`arbiter_test_gov_${id}`),
  LOG_LEVEL: 'silent',
  DB_POOL_MAX: '3',
});

let db: TestDatabase;
let redis: TestRedis;
let registry: Registry;
let governance: Governance | undefined;
let bus: Bus;
let app: FastifyInstance;
type Member = 'admin' | 'editor' | 'publisher' | 'publisher2' | 'viewer' | 'auditor' | 'publisherViewKey' | 'stranger';
const keys = {} as Record<Member, string>;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  const registryConfig = RegistryConfig.parse({
    NATS_URL,
    REDIS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    DATABASE_URL: withDatabase(`arbiter_test_reg_${id}`),
    LOG_LEVEL: 'silent',
    DB_POOL_MAX: '3',
    // publish checks share the machine with other suites: a slow compile must not fail a publish
    REGISTRY_CHECK_TIMEOUT_MS: '10000',
  });
  registry = await startRegistry(inProcessKit('registry', registryConfig, { logger }));
  governance = await startGovernance(inProcessKit('governance', governanceConfig, { logger }));
  bus = await connectBus({ url: NATS_URL, prefix, name: 'gateway-review-test', logger });
  app = await startGateway(db, redis, {
    registry: new NatsRegistryClient(bus, 10_000),
    governance: new NatsGovernanceClient(bus, 15_000),
    impact: new NatsImpactClient(bus, 15_000),
  });
  keys.admin = await newOrg(db, 'acme');
  keys.editor = await memberKey(app, keys.admin, 'acme', 'eddie', 'editor', ['view', 'edit']);
  keys.publisher = await memberKey(app, keys.admin, 'acme', 'pat', 'publisher', ['view', 'edit', 'publish']);
  keys.publisher2 = await memberKey(app, keys.admin, 'acme', 'quinn', 'publisher', ['view', 'edit', 'publish']);
  keys.viewer = await memberKey(app, keys.admin, 'acme', 'vic', 'viewer', ['view']);
  keys.auditor = await memberKey(app, keys.admin, 'acme', 'audrey', 'auditor', ['view', 'audit']);
  keys.publisherViewKey = await memberKey(app, keys.admin, 'acme', 'pia', 'publisher', ['view']);
  keys.stranger = await newOrg(db, 'globex', 'stranger');
}, 60_000);

afterAll(async () => {
  await app?.close();
  await governance?.close();
  await registry?.close();
  if (bus) {
    const jsm = await jetstreamManager(bus.nc);
    await jsm.streams.delete(eventStreamName(prefix)).catch(() => undefined);
    await bus.close();
  }
  await redis?.cleanup();
  await db?.drop();
  await dropDatabases(PG_URL, [`arbiter_test_reg_${id}`, `arbiter_test_gov_${id}`]);
});

type Who = Member | 'nobody';
const headers = (who: Who, extra: Record<string, string> = {}) => (who === 'nobody' ? extra : { ...withKey(keys[who]), ...extra });
const call = (method: 'GET' | 'POST' | 'PUT', url: string, who: Who, payload?: unknown, extra: Record<string, string> = {}) =>
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
const setGovernance = async (on: boolean) => ok(await call('PUT', '/org/settings', 'admin', { governanceApproval: on }), 200);
const createPolicy = async (who: Who = 'editor') =>
  ok(await call('POST', '/policy', who, { name: 'p', rule: RULE }), 201) as { policyId: string; baseId: string };

describe('governance off', () => {
  it('PUT with status published publishes directly (201), as before', async () => {
    await setGovernance(false);
    const d = await createPolicy('publisher');
    expect(ok(await call('PUT', `/policy/${d.policyId}`, 'publisher', { status: 'published' }), 201)).toMatchObject({ version: 1 });
  });
});

describe('governance on', () => {
  beforeAll(() => setGovernance(true));

  it('submit → approve → publish; record bodies and versions show the review state', async () => {
    const d = await createPolicy();
    const submitted = ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published', description: 'v1' }), 202);
    expect(submitted).toMatchObject({
      policyId: d.policyId,
      baseId: d.baseId,
      state: 'pending_approval',
      requestedBy: 'eddie',
      stale: false,
    });
    expect(Object.keys(submitted).sort()).toEqual(
      [
        'baseId',
        'checks',
        'comment',
        'decidedAt',
        'decidedBy',
        'policyId',
        'requestId',
        'requestedAt',
        'requestedBy',
        'stale',
        'state',
      ].sort(),
    );
    const record = ok(await call('GET', `/policy/${d.policyId}`, 'viewer'), 200);
    expect(record).toMatchObject({
      description: 'v1',
      status: 'draft',
      review: { state: 'pending_approval', requestId: submitted.requestId, stale: false },
    });
    const versions = ok(await call('GET', `/policy/${d.policyId}/versions`, 'viewer'), 200) as { items: Array<Record<string, unknown>> };
    expect(versions.items[0]).toMatchObject({ review: { state: 'pending_approval' } });

    // an empty body with content-type application/json is accepted on the body-less POSTs
    const approved = ok(
      await call('POST', `/policy/${d.policyId}/review/approve`, 'publisher', undefined, { 'content-type': 'application/json' }),
      200,
    );
    expect(approved).toMatchObject({ state: 'approved', decidedBy: 'pat', requestId: submitted.requestId });
    const published = ok(
      await call('POST', `/policy/${d.policyId}/review/publish`, 'publisher2', { requestId: submitted.requestId as string }),
      201,
    );
    expect(published).toMatchObject({
      policyId: d.policyId,
      status: 'published',
      version: 1,
      publishedBy: 'quinn',
      review: { state: 'published' },
    });
    expect(ok(await call('GET', `/policy/${d.policyId}/review`, 'viewer'), 200)).toMatchObject({ state: 'published' });
    const twice = problem(await call('POST', `/policy/${d.policyId}/review/publish`, 'publisher2'));
    expect(twice).toMatchObject({ status: 409, code: 'conflict', contentType: expect.stringMatching(/^application\/problem\+json/) });
  });

  it('reject → edit → resubmit → approve → publish', async () => {
    const d = await createPolicy();
    ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' }), 202);
    const rejected = ok(
      await call('POST', `/policy/${d.policyId}/review/reject`, 'publisher', { comment: 'use 21' }, { 'content-type': 'application/json' }),
      200,
    );
    expect(rejected).toMatchObject({ state: 'rejected', comment: 'use 21' });
    expect(problem(await call('POST', `/policy/${d.policyId}/review/publish`, 'publisher')).code).toBe('not_approved');
    ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'draft', rule: RULE.replace('18', '21') }), 200);
    expect(ok(await call('GET', `/policy/${d.policyId}/review`, 'editor'), 200)).toMatchObject({ state: 'draft', stale: true });
    const again = ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' }), 202);
    expect(again.requestId).not.toBe(rejected.requestId);
    ok(await call('POST', `/policy/${d.policyId}/review/approve`, 'publisher', { requestId: again.requestId as string }), 200);
    expect(ok(await call('POST', `/policy/${d.policyId}/review/publish`, 'publisher', {}), 201)).toMatchObject({
      rule: RULE.replace('18', '21'),
    });
  });

  it('an edit after approval makes the review stale: publish answers 409 review_stale', async () => {
    const d = await createPolicy();
    ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' }), 202);
    ok(await call('POST', `/policy/${d.policyId}/review/approve`, 'publisher'), 200);
    ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'draft', name: 'renamed' }), 200);
    expect(ok(await call('GET', `/policy/${d.policyId}`, 'viewer'), 200)).toMatchObject({ review: { state: 'draft', stale: true } });
    expect(problem(await call('POST', `/policy/${d.policyId}/review/publish`, 'publisher2'))).toMatchObject({
      status: 409,
      code: 'review_stale',
    });
  });

  it('separation of duties: the requester may not approve, reject or publish (403 separation_of_duties)', async () => {
    const d = await createPolicy('publisher');
    ok(await call('PUT', `/policy/${d.policyId}`, 'publisher', { status: 'published' }), 202);
    for (const verb of ['approve', 'reject', 'publish']) {
      expect(problem(await call('POST', `/policy/${d.policyId}/review/${verb}`, 'publisher'))).toMatchObject({
        status: 403,
        code: 'separation_of_duties',
      });
    }
    ok(await call('POST', `/policy/${d.policyId}/review/approve`, 'admin'), 200);
  });

  it('bodies: empty with any content type, JSON objects; other media types 415, bad JSON 400, unknown fields 400', async () => {
    const d = await createPolicy();
    ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' }), 202);
    const url = `/policy/${d.policyId}/review/reject`;
    const raw = (payload: string, contentType: string) =>
      app.inject({ method: 'POST', url, headers: { ...withKey(keys.publisher), 'content-type': contentType }, payload });
    expect(problem(await raw('hello', 'text/plain')).status).toBe(415);
    expect(problem(await raw('{"comment":', 'application/json'))).toMatchObject({ status: 400, code: 'bad_request' });
    expect(problem(await raw('{"verdict":"no"}', 'application/json'))).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem(await raw('{"requestId":"nope"}', 'application/json'))).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem(await raw(JSON.stringify({ comment: 'x'.repeat(2001) }), 'application/json')).status).toBe(400);
    expect(ok(await raw('', 'text/plain'), 200)).toMatchObject({ state: 'rejected' });
  });

  it('flows have the same endpoints', async () => {
    const definition = { start: 'r', nodes: { r: { type: 'return', value: true } } };
    const f = ok(await call('POST', '/flow', 'editor', { name: 'f', definition }), 201) as { flowId: string };
    expect(ok(await call('PUT', `/flow/${f.flowId}`, 'editor', { status: 'published' }), 202)).toMatchObject({
      flowId: f.flowId,
      state: 'pending_approval',
    });
    ok(await call('POST', `/flow/${f.flowId}/review/approve`, 'publisher'), 200);
    expect(ok(await call('POST', `/flow/${f.flowId}/review/publish`, 'publisher'), 201)).toMatchObject({ flowId: f.flowId, version: 1 });
    expect(ok(await call('GET', `/flow/${f.flowId}/review`, 'viewer'), 200)).toMatchObject({ flowId: f.flowId, state: 'published' });
  });

  it('permission matrix of the review endpoints for every role, another org and no credentials', async () => {
    const d = await createPolicy();
    ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' }), 202);
    const base = `/policy/${d.policyId}/review`;
    const status = async (method: 'GET' | 'POST', url: string, who: Who) => (await call(method, url, who)).statusCode;
    const matrix: Array<[Who, number, number]> = [
      // who, GET review, POST approve/reject/publish (refused before any state change)
      ['nobody', 401, 401],
      ['stranger', 404, 404],
      ['viewer', 200, 403],
      ['auditor', 200, 403],
      ['editor', 200, 403],
      ['publisherViewKey', 200, 403],
    ];
    for (const [who, get, post] of matrix) {
      expect(await status('GET', base, who), `${who} GET`).toBe(get);
      for (const verb of ['approve', 'reject', 'publish'])
        expect(await status('POST', `${base}/${verb}`, who), `${who} ${verb}`).toBe(post);
    }
    // publisher and admin may act: publish before approval is a state conflict, approval succeeds
    for (const who of ['publisher', 'admin'] as const) {
      expect(await status('GET', base, who)).toBe(200);
      expect(await status('POST', `${base}/publish`, who)).toBe(409);
    }
    expect(await status('POST', `${base}/approve`, 'admin')).toBe(200);
    // submitting: editor and up; viewers and auditors are refused, another org sees nothing
    const other = await createPolicy();
    for (const [who, expected] of [
      ['viewer', 403],
      ['auditor', 403],
      ['stranger', 404],
      ['nobody', 401],
    ] as const) {
      expect((await call('PUT', `/policy/${other.policyId}`, who, { status: 'published' })).statusCode, who).toBe(expected);
    }
    // unknown and malformed ids
    for (const recordId of [UNKNOWN, 'not-an-id']) {
      expect(problem(await call('GET', `/policy/${recordId}/review`, 'admin')).status).toBe(404);
      expect(problem(await call('POST', `/policy/${recordId}/review/approve`, 'admin')).status).toBe(404);
    }
  });

  it('governance toggled mid-review: pending reviews stay readable, PUT publishes directly while off, and goes to review again when on', async () => {
    const d = await createPolicy();
    const pending = ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' }), 202);
    await setGovernance(false);
    try {
      expect(ok(await call('GET', `/policy/${d.policyId}/review`, 'viewer'), 200)).toMatchObject({
        state: 'pending_approval',
        requestId: pending.requestId,
      });
      // the review endpoints keep working while governance is off
      ok(await call('POST', `/policy/${d.policyId}/review/approve`, 'publisher'), 200);
      // but a publisher's PUT publishes at once, the approved review notwithstanding
      expect(ok(await call('PUT', `/policy/${d.policyId}`, 'publisher', { status: 'published' }), 201)).toMatchObject({ version: 1 });
    } finally {
      await setGovernance(true);
    }
    const draft = ok(await call('GET', `/policy/${d.policyId}/draft`, 'editor'), 201) as { policyId: string };
    expect(ok(await call('PUT', `/policy/${draft.policyId}`, 'editor', { status: 'published' }), 202)).toMatchObject({
      state: 'pending_approval',
    });
    expect(problem(await call('PUT', `/policy/${draft.policyId}`, 'publisher', { status: 'published' }))).toMatchObject({
      status: 409,
      code: 'conflict',
    });
  });

  it('the governance service down: review endpoints and governed PUTs answer 503, the rest of the API works, and it recovers', async () => {
    const d = await createPolicy();
    await governance!.close();
    governance = undefined;
    try {
      expect(problem(await call('GET', `/policy/${d.policyId}/review`, 'viewer'))).toMatchObject({
        status: 503,
        code: 'dependency_unavailable',
      });
      expect(problem(await call('POST', `/policy/${d.policyId}/review/approve`, 'publisher')).status).toBe(503);
      expect(problem(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' })).status).toBe(503);
      const record = ok(await call('GET', `/policy/${d.policyId}`, 'viewer'), 200);
      expect(record).not.toHaveProperty('review');
      ok(await call('GET', `/policy/${d.policyId}/versions`, 'viewer'), 200);
      ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'draft', description: 'edited while down' }), 200);
      ok(await call('GET', '/policies', 'editor'), 200);
      ok(await call('POST', '/policy', 'editor', { name: 'q', rule: RULE }), 201);
    } finally {
      governance = await startGovernance(inProcessKit('governance', governanceConfig, { logger }));
    }
    expect(ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' }), 202)).toMatchObject({
      state: 'pending_approval',
    });
    expect(ok(await call('GET', `/policy/${d.policyId}`, 'viewer'), 200)).toMatchObject({ review: { state: 'pending_approval' } });
  });
});

describe('checks at submit and the review inbox', () => {
  const inboxKeys = {} as Record<'admin' | 'editor' | 'publisher' | 'viewer', string>;
  const as = (who: keyof typeof inboxKeys, method: 'GET' | 'PUT' | 'POST', url: string, payload?: Record<string, unknown>) =>
    app.inject({ method, url, headers: withKey(inboxKeys[who]), ...(payload ? { payload } : {}) });
  beforeAll(async () => {
    inboxKeys.admin = await newOrg(db, 'inboxco', 'ivy');
    inboxKeys.editor = await memberKey(app, inboxKeys.admin, 'inboxco', 'ed', 'editor', ['view', 'edit']);
    inboxKeys.publisher = await memberKey(app, inboxKeys.admin, 'inboxco', 'paula', 'publisher', ['view', 'edit', 'publish']);
    inboxKeys.viewer = await memberKey(app, inboxKeys.admin, 'inboxco', 'val', 'viewer', ['view']);
    ok(await as('admin', 'PUT', '/org/settings', { governanceApproval: true }), 200);
  });

  it('a governed PUT publish of a draft whose saved test fails answers 422 cannot_publish and submits nothing', async () => {
    const tests = [{ name: 'child is adult?', data: { applicant: { age: 10 } }, expect: true }];
    const d = ok(await as('editor', 'POST', '/policy', { name: 'failing test', rule: RULE, tests }), 201) as { policyId: string };
    const refused = await as('editor', 'PUT', `/policy/${d.policyId}`, { status: 'published', description: 'kept' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ code: 'cannot_publish', errors: [expect.objectContaining({ code: 'test_failed' })] });
    // the given fields were saved as a draft edit first; no request was made
    expect(ok(await as('viewer', 'GET', `/policy/${d.policyId}`), 200)).toMatchObject({
      description: 'kept',
      review: { state: 'draft', requestId: null },
    });
    expect(ok(await as('publisher', 'GET', `/policy/${d.policyId}/review`), 200)).toMatchObject({ state: 'draft', checks: null });
    expect(ok(await as('publisher', 'GET', '/reviews'), 200)).toEqual({ items: [], nextCursor: null });
    // fixed and submitted: the reviewer sees that the checks passed, and when
    ok(await as('editor', 'PUT', `/policy/${d.policyId}`, { status: 'draft', tests: [{ ...tests[0], expect: false }] }), 200);
    const submitted = ok(await as('editor', 'PUT', `/policy/${d.policyId}`, { status: 'published' }), 202);
    expect(submitted).toMatchObject({ state: 'pending_approval', checks: { passed: true, checkedAt: expect.any(String) } });
    expect(ok(await as('publisher', 'GET', `/policy/${d.policyId}/review`), 200)).toMatchObject({ checks: submitted.checks });

    const listed = ok(await as('publisher', 'GET', '/reviews?state=pending_approval'), 200) as { items: Array<Record<string, unknown>> };
    expect(listed).toEqual({
      items: [
        expect.objectContaining({
          kind: 'policy',
          recordId: d.policyId,
          name: 'failing test',
          state: 'pending_approval',
          requestedBy: 'ed',
          requestedAt: submitted.requestedAt,
          checks: submitted.checks,
        }),
      ],
      nextCursor: null,
    });
    ok(await as('publisher', 'POST', `/policy/${d.policyId}/review/approve`), 200);
    expect(ok(await as('admin', 'GET', '/reviews'), 200)).toEqual({ items: [], nextCursor: null });
  });

  it('GET /reviews: publishers and admins only, own org only, limit and cursor like every list', async () => {
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const d = ok(await as('editor', 'POST', '/policy', { name, rule: RULE }), 201) as { policyId: string };
      ok(await as('editor', 'PUT', `/policy/${d.policyId}`, { status: 'published' }), 202);
      ids.push(d.policyId);
    }
    const first = ok(await as('publisher', 'GET', '/reviews?limit=2'), 200) as { items: Array<{ recordId: string }>; nextCursor: string };
    expect(first.items.map((i) => i.recordId)).toEqual(ids.slice(0, 2));
    const second = ok(await as('publisher', 'GET', `/reviews?limit=2&cursor=${first.nextCursor}`), 200) as typeof first;
    expect(second).toEqual({ items: [expect.objectContaining({ recordId: ids[2] })], nextCursor: null });
    for (const who of ['editor', 'viewer'] as const)
      expect(problem(await as(who, 'GET', '/reviews'))).toMatchObject({ status: 403, code: 'forbidden' });
    expect((await call('GET', '/reviews', 'nobody')).statusCode).toBe(401);
    // another org sees its own (empty) inbox
    expect(ok(await call('GET', '/reviews', 'stranger'), 200)).toEqual({ items: [], nextCursor: null });
    for (const q of ['state=approved', 'limit=0', 'limit=201', 'cursor=%21%21']) {
      expect(problem(await as('publisher', 'GET', `/reviews?${q}`)).status, q).toBe(400);
    }
  });
});

describe('ids: every /policy/{id}… and /flow/{id}… route takes a record id or a base id', () => {
  const k = {} as Record<'admin' | 'editor' | 'publisher', string>;
  const as = (who: keyof typeof k, method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    app.inject({ method, url, headers: withKey(k[who]), ...(payload ? { payload } : {}) });
  beforeAll(async () => {
    k.admin = await newOrg(db, 'idsco', 'ida');
    k.editor = await memberKey(app, k.admin, 'idsco', 'ivo', 'editor', ['view', 'edit']);
    k.publisher = await memberKey(app, k.admin, 'idsco', 'ina', 'publisher', ['view', 'edit', 'publish']);
    ok(await as('admin', 'PUT', '/org/settings', { governanceApproval: true }), 200);
  });

  for (const noun of ['policy', 'flow'] as const) {
    for (const form of ['record id', 'base id'] as const) {
      it(`${noun}, by ${form}: get, edit, submit, review, approve, publish, versions, draft, reject, delete, restore`, async () => {
        const idKey = noun === 'policy' ? 'policyId' : 'flowId';
        const content = noun === 'policy' ? { rule: RULE } : { definition: { start: 'r', nodes: { r: { type: 'return', value: true } } } };
        const created = ok(await as('editor', 'POST', `/${noun}`, { name: `${noun} by ${form}`, ...content }), 201);
        const draftId = created[idKey] as string;
        const id = form === 'record id' ? draftId : (created.baseId as string);
        const at = (suffix = '') => `/${noun}/${id}${suffix}`;
        // never published: the base id means its draft everywhere
        expect(ok(await as('editor', 'GET', at()), 200)[idKey]).toBe(draftId);
        expect(ok(await as('editor', 'PUT', at(), { status: 'draft', description: 'edited' }), 200)).toMatchObject({
          [idKey]: draftId,
          description: 'edited',
        });
        expect(ok(await as('editor', 'PUT', at(), { status: 'published' }), 202)).toMatchObject({
          [idKey]: draftId,
          state: 'pending_approval',
        });
        expect(ok(await as('publisher', 'GET', at('/review')), 200)).toMatchObject({ [idKey]: draftId, state: 'pending_approval' });
        expect(ok(await as('publisher', 'POST', at('/review/approve')), 200)).toMatchObject({ [idKey]: draftId, state: 'approved' });
        expect(ok(await as('publisher', 'POST', at('/review/publish')), 201)).toMatchObject({ [idKey]: draftId, version: 1 });
        const versions = ok(await as('editor', 'GET', at('/versions')), 200) as { items: Array<Record<string, unknown>> };
        expect(versions.items.map((r) => r[idKey])).toEqual([draftId]);
        // published: GET by base id is the latest version; /draft opens a draft from it
        expect(ok(await as('editor', 'GET', at()), 200)).toMatchObject({ [idKey]: draftId, version: 1 });
        const next = ok(await as('editor', 'GET', at('/draft')), 201);
        expect(next).toMatchObject({ status: 'draft', basedOnVersion: 1 });
        expect(ok(await as('editor', 'GET', at('/draft')), 200)[idKey]).toBe(next[idKey]);
        // review routes mean the base's draft, from a base id and from a version id alike
        expect(ok(await as('publisher', 'GET', at('/review')), 200)).toMatchObject({ [idKey]: next[idKey], state: 'draft' });
        expect(problem(await as('publisher', 'POST', at('/review/reject')))).toMatchObject({ status: 409, code: 'not_approved' });
        if (form === 'base id') {
          // a PUT by base id edits the base's draft
          expect(ok(await as('editor', 'PUT', at(), { status: 'draft', description: 'second' }), 200)).toMatchObject({
            [idKey]: next[idKey],
          });
        } else {
          expect(problem(await as('editor', 'PUT', at(), { status: 'draft', description: 'second' }))).toMatchObject({
            status: 409,
            code: 'version_immutable',
          });
        }
        expect((await as('admin', 'DELETE', at())).statusCode).toBe(204);
        expect(problem(await as('editor', 'GET', at('/versions'))).status).toBe(404);
        expect(ok(await as('admin', 'POST', at('/restore')), 200)).toMatchObject({ [idKey]: draftId, version: 1 });
        expect(ok(await as('editor', 'GET', at('/versions')), 200).items).toHaveLength(2);
      });
    }
  }
});

describe('text PostgreSQL cannot store, on every route', () => {
  beforeAll(() => setGovernance(true));
  const raw = (method: 'POST' | 'PUT', url: string, who: Member, payload: string) =>
    app.inject({ method, url, headers: { ...withKey(keys[who]), 'content-type': 'application/json' }, payload });

  it('refuses U+0000 and an unpaired surrogate in a review comment with 400 and changes nothing (was 500)', async () => {
    const d = await createPolicy();
    ok(await call('PUT', `/policy/${d.policyId}`, 'editor', { status: 'published' }), 202);
    for (const verb of ['reject', 'approve']) {
      for (const [comment, reason] of [
        ['a\\u0000b', 'nul_character'],
        ['x\\ud800', 'unpaired_surrogate'],
        ['\\udc00', 'unpaired_surrogate'],
      ] as const) {
        const res = await raw('POST', `/policy/${d.policyId}/review/${verb}`, 'publisher', `{"comment":"${comment}"}`);
        expect(problem(res), `${verb} ${comment}`).toMatchObject({ status: 400, code: 'validation_failed' });
        expect(res.json().errors, `${verb} ${comment}`).toEqual([expect.objectContaining({ code: reason, path: 'body.comment' })]);
      }
    }
    expect(ok(await call('GET', `/policy/${d.policyId}/review`, 'viewer'), 200)).toMatchObject({ state: 'pending_approval' });
    // a well-formed pair written as escapes is text like any other
    const fine = await raw('POST', `/policy/${d.policyId}/review/reject`, 'publisher', '{"comment":"ok \\ud83d\\ude00"}');
    expect(ok(fine, 200)).toMatchObject({ state: 'rejected', comment: 'ok 😀' });
  });

  it('refuses an unpaired surrogate in a policy, flow or group name with 400 (was 500: PostgreSQL refused the event)', async () => {
    const definition = JSON.stringify({ start: 'r', nodes: { r: { type: 'return', value: true } } });
    for (const [url, body] of [
      ['/policy', `{"name":"p\\ud800","rule":${JSON.stringify(RULE)}}`],
      ['/flow', `{"name":"\\udfff f","definition":${definition}}`],
      ['/group', '{"name":"g\\ud800"}'],
    ] as const) {
      const res = await raw('POST', url, 'editor', body);
      expect(problem(res), url).toMatchObject({ status: 400, code: 'validation_failed' });
      expect(res.json().errors, url).toEqual([{ code: 'unpaired_surrogate', message: expect.any(String), path: 'body.name' }]);
    }
    const d = await createPolicy();
    const rename = await raw('PUT', `/policy/${d.policyId}`, 'editor', '{"status":"draft","name":"\\ud800"}');
    expect(problem(rename)).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(ok(await call('GET', `/policy/${d.policyId}`, 'viewer'), 200)).toMatchObject({ name: 'p' });
  });
});

describe('POST /import into a governed org', () => {
  it('refuses published versions with 409 saying why, and imports them once governance is off', async () => {
    await setGovernance(false);
    const d = await createPolicy('publisher');
    ok(await call('PUT', `/policy/${d.policyId}`, 'publisher', { status: 'published' }), 201);
    const bundle = ok(await call('GET', '/export', 'admin'), 200) as { policies: Array<{ baseId: string }> };
    const one = { ...bundle, policies: bundle.policies.filter((b) => b.baseId === d.baseId), flows: [], groups: [] };
    const globex = (on: boolean) => call('PUT', '/org/settings', 'stranger', { governanceApproval: on });
    ok(await globex(true), 200);
    const refused = await call('POST', '/import', 'stranger', one);
    expect(problem(refused)).toMatchObject({ status: 409, code: 'conflict' });
    expect(refused.json().errors).toEqual([
      expect.objectContaining({
        code: 'import_conflict',
        message: expect.stringContaining('publishes through review only'),
        path: d.baseId,
      }),
    ]);
    const plan = ok(await call('POST', '/import?dryRun=true', 'stranger', one), 200) as { conflicts: number };
    expect(plan.conflicts).toBe(1);
    ok(await globex(false), 200);
    expect(ok(await call('POST', '/import', 'stranger', one), 200)).toMatchObject({ created: 1, conflicts: 0 });
  });
});

describe('impact reports: examples for the readers of decisions only', () => {
  /** A kept report of `draft` whose examples hold recorded inputs (an IBAN and a name). */
  const keptReport = (draft: { policyId: string; baseId: string; contentHash: string }) => ({
    impactId: '0190a0b0-0000-7000-8000-0000000000b1',
    policyId: draft.policyId,
    baseId: draft.baseId,
    contentHash: draft.contentHash,
    at: '2026-11-01T00:00:00.000Z',
    replayed: 3,
    unchanged: 1,
    changed: 2,
    errors: 0,
    unreplayable: 0,
    transitions: { 'true→false': 2 },
    outcomes: { adult: 2 },
    examples: [0, 1].map((i) => ({
      decisionId: `0190a0b0-0000-7000-8000-00000000000${i}`,
      at: '2026-11-01T00:00:00.000Z',
      before: { result: true, errorCode: null, outcomes: { adult: true } },
      after: { result: false, errorCode: null, outcomes: { adult: false } },
      input: { applicant: { name: `Erika Mustermann ${i}`, iban: 'DE89370400440532013000', age: 17 } },
    })),
    examplesTruncated: false,
  });
  const counts = { replayed: 3, unchanged: 1, changed: 2, errors: 0, transitions: { 'true→false': 2 }, outcomes: { adult: 2 } };

  it('GET review: counts for every member, examples only for admins and auditors; another org and an unknown id 404, no credentials 401', async () => {
    const draft = (await createPolicy()) as { policyId: string; baseId: string; contentHash: string };
    await governance!.db('governance_impact_reports').insert({
      org_id: 'acme',
      record_id: draft.policyId,
      content_hash: draft.contentHash,
      report: JSON.stringify(keptReport(draft)),
    });
    const url = `/policy/${draft.policyId}/review`;
    for (const who of ['admin', 'auditor'] as const) {
      const impact = ok(await call('GET', url, who), 200).impact as Record<string, unknown>;
      expect(impact, who).toMatchObject(counts);
      expect(impact.examples, who).toHaveLength(2);
      expect(JSON.stringify(impact), who).toContain('DE89370400440532013000');
    }
    for (const who of ['viewer', 'editor', 'publisher', 'publisherViewKey'] as const) {
      const impact = ok(await call('GET', url, who), 200).impact as Record<string, unknown>;
      expect(impact, who).toMatchObject(counts);
      expect(impact, who).not.toHaveProperty('examples');
      expect(impact, who).not.toHaveProperty('examplesTruncated');
      expect(JSON.stringify(impact), who).not.toContain('DE89370400440532013000');
      expect(JSON.stringify(impact), who).not.toContain('Mustermann');
    }
    expect(problem(await call('GET', url, 'stranger'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await call('GET', `/policy/${UNKNOWN}/review`, 'viewer'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(problem(await call('GET', url, 'nobody'))).toMatchObject({ status: 401 });
  });

  it('POST impact: the analysis answer has the counts for every caller, the examples only for an admin', async () => {
    // The audit service's history: no decision recorded yet (an empty page).
    const history = bus.nc.subscribe(bus.subject(DecisionSubject.history), {
      callback: (_err, msg) => {
        msg.respond(encodeFrame({ nextCursor: null }, [], { entries: '[]' }));
      },
    });
    try {
      const draft = await createPolicy();
      const url = `/policy/${draft.policyId}/impact`;
      const admin = ok(await call('POST', url, 'admin', {}), 200);
      expect(admin).toMatchObject({ policyId: draft.policyId, replayed: 0, changed: 0, examples: [], examplesTruncated: false });
      for (const who of ['editor', 'publisher'] as const) {
        const report = ok(await call('POST', url, who, {}), 200);
        expect(report, who).toMatchObject({ policyId: draft.policyId, replayed: 0, changed: 0, transitions: {} });
        expect(report, who).not.toHaveProperty('examples');
      }
      expect(problem(await call('POST', url, 'viewer', {}))).toMatchObject({ status: 403, code: 'forbidden' });
      expect(problem(await call('POST', url, 'stranger', {}))).toMatchObject({ status: 404, code: 'not_found' });
      expect(problem(await call('POST', `/policy/${UNKNOWN}/impact`, 'admin', {}))).toMatchObject({ status: 404, code: 'not_found' });
      expect(problem(await call('POST', url, 'nobody', {}))).toMatchObject({ status: 401 });
    } finally {
      history.unsubscribe();
    }
  });

  it('POST impact without a body, or with an empty one whatever its content type, is the analysis of `{}`; a bad body is still refused', async () => {
    const history = bus.nc.subscribe(bus.subject(DecisionSubject.history), {
      callback: (_err, msg) => {
        msg.respond(encodeFrame({ nextCursor: null }, [], { entries: '[]' }));
      },
    });
    try {
      const draft = await createPolicy();
      const definition = { start: 'r', nodes: { r: { type: 'return', value: true } } };
      const f = ok(await call('POST', '/flow', 'editor', { name: 'f', definition }), 201) as { flowId: string };
      for (const url of [`/policy/${draft.policyId}/impact`, `/flow/${f.flowId}/impact`]) {
        const post = (payload?: string, extra: Record<string, string> = {}) =>
          app.inject({ method: 'POST', url, headers: headers('editor', extra), ...(payload !== undefined ? { payload } : {}) });
        expect((await post()).statusCode, `${url} no body`).toBe(200);
        expect((await post(undefined, { 'content-type': 'application/json' })).statusCode, `${url} no body, JSON type`).toBe(200);
        expect((await post('', { 'content-type': 'application/json' })).statusCode, `${url} empty JSON body`).toBe(200);
        expect((await post('', { 'content-type': 'text/plain' })).statusCode, `${url} empty text body`).toBe(200);
        expect(ok(await post('{}', { 'content-type': 'application/json' }), 200)).toMatchObject({ replayed: 0, changed: 0 });
        expect(problem(await post('{"bogus":1}', { 'content-type': 'application/json' }))).toMatchObject({ status: 400 });
        expect(problem(await post('x', { 'content-type': 'text/plain' }))).toMatchObject({ status: 415 });
      }
    } finally {
      history.unsubscribe();
    }
  });

  it('OpenAPI says the examples are optional and who gets them', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, verb] of [
      ['/policy/{policyId}/impact', 'post'],
      ['/flow/{flowId}/impact', 'post'],
    ] as const) {
      const schema = doc.paths[path][verb].responses['200'].content['application/json'].schema;
      expect(schema.required, path).not.toContain('examples');
      expect(schema.required, path).toContain('changed');
      expect(schema.properties.examples.description, path).toMatch(/`audit` right/);
    }
    const review = doc.paths['/policy/{policyId}/review'].get.responses['200'].content['application/json'].schema;
    expect(JSON.stringify(review.properties.impact)).toMatch(/`audit` right/);
  });
});

describe('OpenAPI', () => {
  it('documents every review route with its body, answers and problem responses', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect((await new Validator().validate(doc)).errors ?? []).toEqual([]);
    for (const [noun, id] of [
      ['policy', 'policyId'],
      ['flow', 'flowId'],
    ]) {
      const path = `/${noun}/{${id}}/review`;
      expect(Object.keys(doc.paths[path])).toEqual(['get']);
      expect(doc.paths[path].get.responses['200'].content['application/json'].schema.properties).toHaveProperty(id);
      for (const verb of ['approve', 'reject', 'publish']) {
        const op = doc.paths[`${path}/${verb}`].post;
        expect(op.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '404', '409', '503']));
        expect(op.responses['409'].content).toHaveProperty(['application/problem+json']);
      }
      expect(Object.keys(doc.paths[`${path}/publish`].post.responses)).toEqual(expect.arrayContaining(['201', '422']));
      expect(doc.paths[`/${noun}/{${id}}`].put.responses['202'].content['application/json'].schema.properties).toHaveProperty('state');
      expect(Object.keys(doc.paths[`/${noun}/{${id}}`].put.responses)).toContain('422');
    }
    const inbox = doc.paths['/reviews'].get;
    expect(inbox.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['cursor', 'limit', 'state']);
    expect(Object.keys(inbox.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '503']));
    const item = inbox.responses['200'].content['application/json'].schema.properties.items.items;
    expect(Object.keys(item.properties)).toEqual(
      expect.arrayContaining(['kind', 'recordId', 'name', 'requestedBy', 'requestedAt', 'checks']),
    );
  });
});
