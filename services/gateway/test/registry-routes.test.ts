/** The stored policy, flow and group routes against a stand-in registry (the real one is in test/e2e/registry.test.ts). */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ArbiterError, type ErrorCode, type FlowRecord, type Group, type PolicyRecord, type TestRunReport } from '@arbiter/contracts';
import type { RegistryClient } from '../src/clients/registry-client.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { memberKey, newOrg, problem, signToken, startGateway, withKey, withToken } from './support/gateway.js';

const ID = '0190a0b0-0000-7000-8000-000000000001';
const BASE = '0190a0b0-0000-7000-8000-000000000002';
const at = '2025-01-01T00:00:00.000Z';
const meta = {
  baseId: BASE,
  name: 'p',
  description: '',
  schema: null,
  version: null,
  basedOnVersion: null,
  createdAt: at,
  createdBy: 'admin',
  updatedAt: at,
  updatedBy: 'admin',
  publishedAt: null,
  publishedBy: null,
};
const draft: PolicyRecord = { policyId: ID, ...meta, status: 'draft', rule: 'A **x** passes if the __a__ of the **x** is 1.', tests: [] };
const version: PolicyRecord = { ...draft, status: 'published', version: 1, publishedAt: at, publishedBy: 'admin' };
const flow: FlowRecord = {
  flowId: ID,
  ...meta,
  status: 'draft',
  definition: { start: 'r', nodes: { r: { type: 'return', value: true } } },
  tests: [],
};
const testReport: TestRunReport = {
  passed: 1,
  failed: 0,
  results: [{ name: 't', ok: true, expected: true, actual: true }],
  coverage: { summary: { rows: { total: 1, covered: 1 }, edges: { total: 0, covered: 0 }, percent: 100 }, uncovered: [] },
};
const group: Group = { groupId: ID, name: 'g', description: '', createdBy: 'admin', createdAt: at, updatedAt: at };

const CHECKS = {
  checks: [{ check: 'contradiction' as const, severity: 'warning' as const, message: 'm', line: 1, column: 4, text: 'x.n < 3' }],
  checksComplete: true,
};

const TABLE_CHECKS = {
  checks: [
    {
      check: 'gap' as const,
      severity: 'warning' as const,
      message: 'table `t`: no rule matches some inputs',
      path: 'nodes.t.rules',
      rules: [],
      example: { a: { n: 1 } },
    },
  ],
  checksComplete: true,
};

/** A registry stand-in: records each call and answers fixed records, or fails with `failWith`. */
class StubRegistry implements RegistryClient {
  readonly calls: Array<{ op: string; args: unknown[] }> = [];
  failWith: ArbiterError | undefined;
  current: PolicyRecord = draft;
  draftCreated = true;

  private act<T>(op: string, args: unknown[], out: T): Promise<T> {
    this.calls.push({ op, args: args.slice(1) });
    return this.failWith ? Promise.reject(this.failWith) : Promise.resolve(out);
  }

  readonly policies: RegistryClient['policies'] = {
    create: (...a) => this.act('policies.create', a, draft),
    update: (...a) =>
      this.act(
        'policies.update',
        a,
        a[2].status === 'draft' ? { outcome: 'updated' as const, record: draft } : { outcome: 'published' as const, record: version },
      ),
    get: (...a) => this.act('policies.get', a, this.current),
    versions: (...a) => this.act('policies.versions', a, { items: [draft, version], nextCursor: null }),
    draft: (...a) => this.act('policies.draft', a, { created: this.draftCreated, record: draft }),
    list: (...a) => this.act('policies.list', a, { items: [], nextCursor: null }),
    remove: (...a) => this.act('policies.remove', a, undefined),
    restore: (...a) => this.act('policies.restore', a, version),
    listDeleted: (...a) => this.act('policies.listDeleted', a, { items: [], nextCursor: null }),
    testRun: (...a) => this.act('policies.testRun', a, testReport),
    rollback: (...a) => this.act('policies.rollback', a, version),
    cancelSchedule: (...a) => this.act('policies.cancelSchedule', a, version),
  };
  readonly flows: RegistryClient['flows'] = {
    create: (...a) => this.act('flows.create', a, flow),
    update: (...a) => this.act('flows.update', a, { outcome: 'updated' as const, record: flow }),
    get: (...a) => this.act('flows.get', a, flow),
    versions: (...a) => this.act('flows.versions', a, { items: [flow], nextCursor: null }),
    draft: (...a) => this.act('flows.draft', a, { created: false, record: flow }),
    list: (...a) => this.act('flows.list', a, { items: [], nextCursor: null }),
    remove: (...a) => this.act('flows.remove', a, undefined),
    restore: (...a) => this.act('flows.restore', a, flow),
    listDeleted: (...a) => this.act('flows.listDeleted', a, { items: [], nextCursor: null }),
    testRun: (...a) => this.act('flows.testRun', a, testReport),
    rollback: (...a) => this.act('flows.rollback', a, flow),
    cancelSchedule: (...a) => this.act('flows.cancelSchedule', a, flow),
  };
  /** Static checks: answered without recording a call (they ride along with saves and `/validate`). */
  checksFail = false;
  checksRun = 0;
  flowChecks: RegistryClient['flowChecks'] = () =>
    ++this.checksRun && this.checksFail
      ? Promise.reject(new ArbiterError('timeout', 'registry did not answer'))
      : Promise.resolve(TABLE_CHECKS);
  policyChecks: RegistryClient['policyChecks'] = () =>
    ++this.checksRun && this.checksFail ? Promise.reject(new ArbiterError('timeout', 'registry did not answer')) : Promise.resolve(CHECKS);
  exportPage: RegistryClient['exportPage'] = (...a) => this.act('exportPage', a, { items: [], nextCursor: null });
  importBundle: RegistryClient['importBundle'] = (...a) =>
    this.act('importBundle', a, { dryRun: true, created: 0, unchanged: 0, conflicts: 0, items: [] });
  rollout: RegistryClient['rollout'] = (...a) => this.act('rollout', a, { baseId: BASE, kind: a[1], rollout: null });
  readonly groups: RegistryClient['groups'] = {
    create: (...a) => this.act('groups.create', a, group),
    get: (...a) => this.act('groups.get', a, group),
    update: (...a) => this.act('groups.update', a, group),
    remove: (...a) => this.act('groups.remove', a, undefined),
    list: (...a) => this.act('groups.list', a, { items: [group], nextCursor: null }),
    addMember: (...a) =>
      this.act('groups.addMember', a, { groupId: ID, memberId: BASE, memberType: 'policy' as const, addedBy: 'admin', addedAt: at }),
    removeMember: (...a) => this.act('groups.removeMember', a, undefined),
    policies: (...a) => this.act('groups.policies', a, { items: [], nextCursor: null }),
    flows: (...a) => this.act('groups.flows', a, { items: [], nextCursor: null }),
  };
}

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;
let viewerKey: string;
let editorKey: string;
const registry = new StubRegistry();

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { registry });
  adminKey = await newOrg(db, 'acme');
  viewerKey = await memberKey(app, adminKey, 'acme', 'vic', 'viewer', ['view']);
  editorKey = await memberKey(app, adminKey, 'acme', 'eddie', 'editor', ['view', 'edit']);
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

beforeEach(() => {
  registry.calls.length = 0;
  registry.failWith = undefined;
  registry.current = draft;
  registry.draftCreated = true;
  registry.checksFail = false;
  registry.checksRun = 0;
});

const setGovernance = async (on: boolean) =>
  expect(
    (await app.inject({ method: 'PUT', url: '/org/settings', headers: withKey(adminKey), payload: { governanceApproval: on } })).statusCode,
  ).toBe(200);

describe('static checks in the answers of policy and flow saves', () => {
  it("carries the checks on a create (201), a draft save (200) and a publish (201); a flow's save its tables' checks; reads none", async () => {
    const created = await app.inject({ method: 'POST', url: '/policy', headers: withKey(adminKey), payload: { name: 'p', rule: 'x' } });
    expect([created.statusCode, created.json()]).toEqual([201, { ...draft, ...CHECKS }]);
    const saved = await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'draft' } });
    expect([saved.statusCode, saved.json()]).toEqual([200, { ...draft, ...CHECKS }]);
    const published = await app.inject({
      method: 'PUT',
      url: `/policy/${ID}`,
      headers: withKey(adminKey),
      payload: { status: 'published' },
    });
    expect([published.statusCode, published.json()]).toEqual([201, { ...version, ...CHECKS }]);
    const read = await app.inject({ method: 'GET', url: `/policy/${ID}`, headers: withKey(adminKey) });
    expect(read.json()).not.toHaveProperty('checks');
    const flowSaved = await app.inject({
      method: 'POST',
      url: '/flow',
      headers: withKey(adminKey),
      payload: { name: 'f', definition: flow.definition },
    });
    expect([flowSaved.statusCode, flowSaved.json()]).toEqual([201, { ...flow, ...TABLE_CHECKS }]);
    const flowRead = await app.inject({ method: 'GET', url: `/flow/${ID}`, headers: withKey(adminKey) });
    expect(flowRead.json()).not.toHaveProperty('checks');
  });

  it('saves all the same when the checks do not answer: none listed, checksComplete false', async () => {
    registry.checksFail = true;
    const created = await app.inject({ method: 'POST', url: '/policy', headers: withKey(adminKey), payload: { name: 'p', rule: 'x' } });
    expect([created.statusCode, created.json()]).toEqual([201, { ...draft, checks: [], checksComplete: false }]);
    const flowSaved = await app.inject({ method: 'PUT', url: `/flow/${ID}`, headers: withKey(adminKey), payload: { status: 'draft' } });
    expect([flowSaved.statusCode, flowSaved.json()]).toEqual([200, { ...flow, checks: [], checksComplete: false }]);
  });

  it('runs no checks for a refused save', async () => {
    const viewer = await app.inject({ method: 'POST', url: '/policy', headers: withKey(viewerKey), payload: { name: 'p', rule: 'x' } });
    expect(viewer.statusCode).toBe(403);
    registry.failWith = new ArbiterError('not_found', 'policy not found');
    const missing = await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'draft' } });
    expect([missing.statusCode, problem(missing).code]).toEqual([404, 'not_found']);
    expect(registry.checksRun).toBe(0);
  });
});

describe('POST /validate with the registry', () => {
  it('answers the static checks beside valid and error; without an answer from the registry, none and checksComplete false', async () => {
    const res = await app.inject({ method: 'POST', url: '/validate', headers: withKey(viewerKey), payload: { rule: 'a' } });
    expect([res.statusCode, res.json()]).toEqual([200, { valid: true, error: null, ...CHECKS }]);
    registry.checksFail = true;
    const down = await app.inject({ method: 'POST', url: '/validate', headers: withKey(viewerKey), payload: { rule: 'a' } });
    expect([down.statusCode, down.json()]).toEqual([200, { valid: true, error: null, checks: [], checksComplete: false }]);
  });

  it('runs no checks without credentials or for a malformed body', async () => {
    expect((await app.inject({ method: 'POST', url: '/validate', payload: { rule: 'a' } })).statusCode).toBe(401);
    const bad = await app.inject({ method: 'POST', url: '/validate', headers: withKey(viewerKey), payload: { rule: 1 } });
    expect([bad.statusCode, problem(bad).code]).toEqual([400, 'validation_failed']);
    expect(registry.checksRun).toBe(0);
  });
});

describe('status codes', () => {
  it.each([
    ['POST', '/policy', { name: 'p', rule: 'x' }, 201, 'policies.create'],
    ['PUT', `/policy/${ID}`, { status: 'draft', rule: 'y' }, 200, 'policies.update'],
    ['PUT', `/policy/${ID}`, { status: 'published' }, 201, 'policies.update'],
    ['GET', `/policy/${ID}`, undefined, 200, 'policies.get'],
    ['GET', `/policy/${ID}/versions`, undefined, 200, 'policies.versions'],
    ['GET', `/policy/${ID}/draft`, undefined, 201, 'policies.draft'],
    ['GET', '/policies', undefined, 200, 'policies.list'],
    ['DELETE', `/policy/${ID}`, undefined, 204, 'policies.remove'],
    ['POST', '/flow', { name: 'f', definition: flow.definition }, 201, 'flows.create'],
    ['GET', `/flow/${ID}/draft`, undefined, 200, 'flows.draft'],
    ['DELETE', `/flow/${ID}`, undefined, 204, 'flows.remove'],
    ['POST', '/group', { name: 'g' }, 201, 'groups.create'],
    ['GET', `/group/${ID}`, undefined, 200, 'groups.get'],
    ['PUT', `/group/${ID}`, { description: 'd' }, 200, 'groups.update'],
    ['DELETE', `/group/${ID}`, undefined, 204, 'groups.remove'],
    ['GET', '/groups?q=g', undefined, 200, 'groups.list'],
    ['POST', `/group/${ID}/member`, { memberId: BASE, memberType: 'policy' }, 201, 'groups.addMember'],
    ['DELETE', `/group/${ID}/member/${BASE}`, undefined, 204, 'groups.removeMember'],
    ['GET', `/group/${ID}/policies`, undefined, 200, 'groups.policies'],
    ['GET', `/group/${ID}/flows`, undefined, 200, 'groups.flows'],
  ] as const)('%s %s → %i', async (method, url, payload, status, op) => {
    const res = await app.inject({ method, url, headers: withKey(adminKey), ...(payload ? { payload } : {}) });
    expect(res.statusCode, res.body).toBe(status);
    expect(registry.calls.map((c) => c.op)).toEqual([op]);
    if (status === 204) expect(res.body).toBe('');
  });

  it('forwards the path ids, the body and the list query with its defaults', async () => {
    await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'draft', name: 'n' } });
    await app.inject({
      method: 'GET',
      url: `/policies?q=abc&limit=7&status=draft&createdBy=eve&group=${BASE}&sort=-updatedAt&all=true`,
      headers: withKey(adminKey),
    });
    await app.inject({ method: 'GET', url: `/policy/${ID}/versions`, headers: withKey(adminKey) });
    await app.inject({ method: 'DELETE', url: `/group/${ID}/member/${BASE}`, headers: withKey(adminKey) });
    // a base id goes to the registry as it is: it answers the base's current record
    await app.inject({ method: 'GET', url: `/flow/${BASE}`, headers: withKey(adminKey) });
    expect(registry.calls.map((c) => c.args.slice(0, -1))).toEqual([
      [ID, { status: 'draft', name: 'n' }],
      [{ q: 'abc', limit: 7, status: 'draft', createdBy: 'eve', group: BASE, sort: '-updatedAt', all: true }],
      [ID, { limit: 50 }],
      [ID, BASE],
      [BASE],
    ]);
    expect(registry.calls[0].args.at(-1)).toEqual({ requestId: expect.any(String) });
  });

  it('answers 400 for bad list parameters, before asking the registry; unknown ones are ignored', async () => {
    for (const query of ['unknown=1&sort=id', 'sort=id', 'status=deleted', 'group=x', 'all=yes', 'createdBy=']) {
      for (const list of ['/policies', '/flows']) {
        const res = await app.inject({ method: 'GET', url: `${list}?${query}`, headers: withKey(adminKey) });
        expect([res.statusCode, problem(res).code], `${list}?${query}`).toEqual([400, 'validation_failed']);
      }
    }
    expect(registry.calls).toEqual([]);
  });

  it('accepts a bearer token as well as an API key', async () => {
    const token = await signToken({ sub: 'admin', org: 'acme' });
    expect((await app.inject({ method: 'GET', url: '/policies', headers: withToken(token) })).statusCode).toBe(200);
  });
});

describe('saved test runs', () => {
  it('runs the draft or a version for a viewer, passing the base id and the version on', async () => {
    for (const noun of ['policy', 'flow'] as const) {
      const res = await app.inject({ method: 'POST', url: `/${noun}/${BASE}/tests/run`, headers: withKey(viewerKey) });
      expect([res.statusCode, res.json()]).toEqual([200, testReport]);
      await app.inject({ method: 'POST', url: `/${noun}/${BASE}/tests/run?version=3`, headers: withKey(viewerKey) });
    }
    expect(registry.calls.map((c) => [c.op, ...c.args.slice(0, -1)])).toEqual([
      ['policies.testRun', BASE, {}],
      ['policies.testRun', BASE, { version: 3 }],
      ['flows.testRun', BASE, {}],
      ['flows.testRun', BASE, { version: 3 }],
    ]);
  });

  it('answers 400 for a bad version, 401 without credentials and 403 to a key without `view`, before asking the registry', async () => {
    for (const query of ['version=0', 'version=x', 'version=1.5', 'version=-1']) {
      const res = await app.inject({ method: 'POST', url: `/policy/${BASE}/tests/run?${query}`, headers: withKey(viewerKey) });
      expect([res.statusCode, problem(res).code], query).toEqual([400, 'validation_failed']);
    }
    expect(problem(await app.inject({ method: 'POST', url: `/flow/${BASE}/tests/run` })).status).toBe(401);
    const editOnly = await memberKey(app, adminKey, 'acme', 'edna', 'editor', ['edit']);
    expect(problem(await app.inject({ method: 'POST', url: `/flow/${BASE}/tests/run`, headers: withKey(editOnly) })).code).toBe(
      'forbidden',
    );
    expect(registry.calls).toEqual([]);
  });

  it.each([
    ['not_found', 404],
    ['timeout', 504],
  ] as Array<[ErrorCode, number]>)('passes the registry error %s on as %i', async (code, status) => {
    registry.failWith = new ArbiterError(code, `registry says ${code}`);
    const res = await app.inject({ method: 'POST', url: `/policy/${BASE}/tests/run`, headers: withKey(viewerKey) });
    expect([res.statusCode, problem(res).code]).toEqual([status, code]);
  });
});

describe('the minCoverage setting', () => {
  const setMinCoverage = async (minCoverage: number) =>
    expect(
      (
        await app.inject({
          method: 'PUT',
          url: '/org/settings',
          headers: withKey(adminKey),
          payload: { governanceApproval: false, minCoverage },
        })
      ).statusCode,
    ).toBe(200);

  it('goes with a publish to the registry when above 0, never with a draft edit nor at 0', async () => {
    await setMinCoverage(70);
    try {
      await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'published' } });
      await app.inject({ method: 'PUT', url: `/flow/${ID}`, headers: withKey(adminKey), payload: { status: 'published' } });
      await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'draft', name: 'n' } });
      await setMinCoverage(0);
      await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'published' } });
    } finally {
      await setMinCoverage(0);
    }
    expect(registry.calls.map((c) => [c.op, c.args[1]])).toEqual([
      ['policies.update', { status: 'published', minCoverage: 70 }],
      ['flows.update', { status: 'published', minCoverage: 70 }],
      ['policies.update', { status: 'draft', name: 'n' }],
      ['policies.update', { status: 'published' }],
    ]);
  });

  it('passes the registry refusal coverage_below_minimum on as 422 with its reasons', async () => {
    const reasons = [{ code: 'uncovered_condition', message: 'line 1, column 1: x (seen true only)', path: 'rule' }];
    registry.failWith = new ArbiterError('coverage_below_minimum', 'its saved tests cover 50 %, below the minimum of 80 %', reasons);
    const res = await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'published' } });
    expect([res.statusCode, res.json()]).toEqual([
      422,
      expect.objectContaining({ code: 'coverage_below_minimum', title: 'Coverage below the minimum', errors: reasons }),
    ]);
  });
});

describe('refusals', () => {
  it('answers 401 without credentials, before asking the registry', async () => {
    for (const [method, url] of [
      ['GET', '/policies'],
      ['POST', '/group'],
      ['DELETE', `/flow/${ID}`],
    ] as const) {
      expect(problem(await app.inject({ method, url, ...(method === 'POST' ? { payload: { name: 'g' } } : {}) })).status).toBe(401);
    }
    expect(registry.calls).toEqual([]);
  });

  it('answers 403 to a viewer creating, drafting or deleting, and to an editor deleting, before asking the registry', async () => {
    for (const [key, method, url] of [
      [viewerKey, 'POST', '/policy'],
      [viewerKey, 'GET', `/policy/${ID}/draft`],
      [viewerKey, 'POST', '/group'],
      [viewerKey, 'DELETE', `/group/${ID}`],
      [editorKey, 'DELETE', `/policy/${ID}`],
    ] as const) {
      expect(problem(await app.inject({ method, url, headers: withKey(key) })).code, `${method} ${url}`).toBe('forbidden');
    }
    expect(registry.calls).toEqual([]);
  });

  it('answers 400 for unknown fields, a bad status, an oversized page and a too long id', async () => {
    const cases = [
      ['POST', '/policy', { name: 'p', rule: 'x', owner: 'me' }],
      ['PUT', `/policy/${ID}`, { status: 'approved' }],
      ['PUT', `/policy/${ID}`, { rule: 'x' }],
      ['POST', `/group/${ID}/member`, { memberId: BASE, memberType: 'rule' }],
      ['PUT', `/group/${ID}`, {}],
      ['GET', '/policies?limit=201', undefined],
      ['GET', `/policy/${'x'.repeat(101)}`, undefined],
    ] as const;
    for (const [method, url, payload] of cases) {
      const res = await app.inject({ method, url, headers: withKey(adminKey), ...(payload ? { payload } : {}) });
      expect(problem(res).status, `${method} ${url} ${JSON.stringify(payload)}`).toBe(400);
    }
    expect(registry.calls).toEqual([]);
  });

  it.each([
    ['not_found', 404],
    ['forbidden', 403],
    ['version_immutable', 409],
    ['cannot_publish', 422],
    ['dependency_unavailable', 503],
    ['timeout', 504],
  ] as Array<[ErrorCode, number]>)('passes the registry error %s on as %i with its reasons', async (code, status) => {
    registry.failWith = new ArbiterError(
      code,
      `registry says ${code}`,
      code === 'cannot_publish' ? [{ code: 'test_failed', message: 'test `t` failed' }] : undefined,
    );
    const res = await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'published' } });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ code, detail: `registry says ${code}` });
    if (code === 'cannot_publish') expect(res.json().errors).toEqual([{ code: 'test_failed', message: 'test `t` failed' }]);
  });
});

describe('governance approval on', () => {
  beforeAll(() => setGovernance(true));
  afterAll(() => setGovernance(false));

  it('refuses a publish with 409 not_approved and changes nothing (no update sent)', async () => {
    for (const key of [adminKey, editorKey]) {
      const res = await app.inject({
        method: 'PUT',
        url: `/policy/${ID}`,
        headers: withKey(key),
        payload: { status: 'published', name: 'edited too' },
      });
      expect(problem(res)).toMatchObject({ status: 409, code: 'not_approved' });
      expect(problem(res).detail).toBe(
        'org `acme` requires governance approval to publish, and the review workflow is not available in this version: nothing was published',
      );
    }
    expect(registry.calls.map((c) => c.op)).toEqual(['policies.get', 'policies.get']);
  });

  it('still answers 404 for an unknown id, 403 to a viewer and 409 version_immutable for a version', async () => {
    registry.failWith = new ArbiterError('not_found', 'policy `x` not found');
    expect(
      problem(await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'published' } }))
        .status,
    ).toBe(404);
    registry.failWith = undefined;
    expect(
      problem(await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(viewerKey), payload: { status: 'published' } }))
        .code,
    ).toBe('forbidden');
    registry.current = version;
    expect(
      problem(await app.inject({ method: 'PUT', url: `/policy/${ID}`, headers: withKey(adminKey), payload: { status: 'published' } })).code,
    ).toBe('version_immutable');
    expect(registry.calls.map((c) => c.op)).not.toContain('policies.update');
  });

  it('lets draft updates through', async () => {
    const res = await app.inject({
      method: 'PUT',
      url: `/flow/${ID}`,
      headers: withKey(adminKey),
      payload: { status: 'draft', name: 'n' },
    });
    expect(res.statusCode).toBe(200);
    expect(registry.calls.map((c) => c.op)).toEqual(['flows.update']);
  });
});

describe('OpenAPI', () => {
  it('documents every route with tags, security and problem responses, and stays valid', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    const expected: Record<string, string[]> = {
      '/policy': ['post'],
      '/policy/{policyId}': ['delete', 'get', 'put'],
      '/policy/{policyId}/versions': ['get'],
      '/policy/{policyId}/draft': ['get'],
      '/policies': ['get'],
      '/flow': ['post'],
      '/flow/{flowId}': ['delete', 'get', 'put'],
      '/flow/{flowId}/versions': ['get'],
      '/flow/{flowId}/draft': ['get'],
      '/flows': ['get'],
      '/group': ['post'],
      '/group/{groupId}': ['delete', 'get', 'put'],
      '/groups': ['get'],
      '/group/{groupId}/member': ['post'],
      '/group/{groupId}/member/{memberId}': ['delete'],
      '/group/{groupId}/policies': ['get'],
      '/group/{groupId}/flows': ['get'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(doc.paths[path] ?? {}).sort(), path).toEqual(methods);
      for (const m of methods) {
        const op = doc.paths[path][m];
        expect(op.summary, `${m} ${path}`).toEqual(expect.any(String));
        expect(op.tags, `${m} ${path}`).toHaveLength(1);
        expect(op.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
        expect(op.responses['401'].content).toHaveProperty(['application/problem+json']);
      }
    }
    expect(Object.keys(doc.paths['/policy/{policyId}'].put.responses).sort()).toEqual([
      '200',
      '201',
      '202',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '422',
      '429',
      '503',
      '504',
    ]);
    expect(doc.paths['/policy'].post.requestBody.content['application/json'].schema).toMatchObject({
      additionalProperties: false,
      required: ['name', 'rule'],
    });
  });
});
