/**
 * End-to-end: the saved tests of a policy or flow run over HTTP with their coverage
 * (`POST /policy/{baseId}/tests/run`, `POST /flow/{baseId}/tests/run`: docs/api.md#saved-tests-and-coverage),
 * for any member of the org, with the draft or a version; and their unhappy paths. The org setting
 * `minCoverage` (docs/api.md#a-minimum-coverage-to-publish): a publish, and in a governed org a
 * submission for review, below it is refused with 422 `coverage_below_minimum`; at 0 nothing changes.
 */

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Arbiter } from '@arbiter/sdk';
import { call, memberKey, startStack, type Stack } from './harness.js';

let stack: Stack;
let viewerKey: string;
let otherOrgKey: string;

const AGE_RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
const ADULT_ONLY = [{ name: 'adult', data: { applicant: { age: 30 } }, expect: true }];
const BOTH_WAYS = [...ADULT_ONLY, { name: 'minor', data: { applicant: { age: 3 } }, expect: false }];

async function ok(status: number, method: string, url: string, body?: unknown, key = stack.adminKey): Promise<any> {
  const res = await call(stack, method, url, { key, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** A policy draft with `tests`; published once first when `publish` (then edited to `tests` as a new draft). */
async function policy(tests: unknown[], publish?: unknown[]): Promise<string> {
  const created = await ok(201, 'POST', '/policy', { name: 'adult', rule: AGE_RULE, tests: publish ?? tests });
  if (publish !== undefined) {
    await ok(201, 'PUT', `/policy/${created.policyId}`, { status: 'published' });
    await ok(201, 'GET', `/policy/${created.baseId}/draft`);
    await ok(200, 'PUT', `/policy/${created.baseId}`, { status: 'draft', tests });
  }
  return created.baseId as string;
}

beforeAll(async () => {
  stack = await startStack({ services: ['registry', 'governance', 'gateway'] });
  viewerKey = await memberKey(stack, 'vera', 'viewer', ['view']);
  const created = stack.admin(['create-org', 'globex', '--admin', 'gus']);
  expect(created.status, created.stderr).toBe(0);
  otherOrgKey = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('POST /policy/{baseId}/tests/run and /flow/{baseId}/tests/run', () => {
  it('runs the saved tests of a policy draft for a viewer: results, and the conditions left uncovered', async () => {
    const baseId = await policy([...ADULT_ONLY, { name: 'wrong', data: { applicant: { age: 30 } }, expect: false }]);
    const report = await ok(200, 'POST', `/policy/${baseId}/tests/run`, undefined, viewerKey);
    expect(report).toEqual({
      passed: 1,
      failed: 1,
      results: [
        { name: 'adult', ok: true, expected: true, actual: true },
        { name: 'wrong', ok: false, expected: false, actual: true },
      ],
      coverage: {
        summary: {
          conditions: { total: 1, covered: 0 },
          quantifiers: { total: 0, covered: 0 },
          references: { total: 0, covered: 0 },
          percent: 50,
        },
        uncovered: [
          {
            kind: 'condition',
            text: 'the __age__ of the **applicant** is at least 18',
            line: 1,
            column: 30,
            seen: { true: 2, false: 0, missing: 0 },
          },
        ],
      },
    });
  });

  it('runs a version with `?version=N` and the draft without', async () => {
    const baseId = await policy(ADULT_ONLY, BOTH_WAYS);
    const v1 = await ok(200, 'POST', `/policy/${baseId}/tests/run?version=1`, undefined, viewerKey);
    expect([v1.passed, v1.failed, v1.coverage.summary.percent, v1.coverage.uncovered]).toEqual([2, 0, 100, []]);
    const draft = await ok(200, 'POST', `/policy/${baseId}/tests/run`, undefined, viewerKey);
    expect([draft.passed, draft.coverage.summary.percent]).toEqual([1, 50]);
  });

  it('runs a flow: the table rows matched and the edges taken', async () => {
    const adult = await ok(201, 'POST', '/policy', { name: 'adult', rule: AGE_RULE });
    const definition = {
      start: 'adult',
      nodes: {
        adult: { type: 'policy', baseId: adult.baseId, onTrue: 'tier', onFalse: 'no' },
        tier: {
          type: 'table',
          hitPolicy: 'first',
          inputs: [{ name: 'income', path: 'applicant.income' }],
          outputs: [{ name: 'tier' }],
          rules: [
            { when: ['> 1000'], then: { tier: 'gold' } },
            { when: ['-'], then: { tier: 'basic' } },
          ],
        },
        no: { type: 'return', value: false },
      },
    };
    const tests = [
      { name: 'rich', data: { applicant: { age: 30, income: 5000 } }, expect: { tier: 'gold' } },
      { name: 'minor', data: { applicant: { age: 3, income: 5000 } }, expect: true },
    ];
    const flow = await ok(201, 'POST', '/flow', { name: 'tiers', definition, tests });
    const report = await ok(200, 'POST', `/flow/${flow.baseId}/tests/run`, undefined, viewerKey);
    expect(report).toEqual({
      passed: 1,
      failed: 1,
      results: [
        { name: 'rich', ok: true, expected: { tier: 'gold' }, actual: { tier: 'gold' } },
        { name: 'minor', ok: false, expected: true, actual: false },
      ],
      coverage: {
        summary: { rows: { total: 2, covered: 1 }, edges: { total: 2, covered: 2 }, percent: 75 },
        uncovered: [{ kind: 'row', nodeId: 'tier', row: 2, text: '-' }],
      },
    });
  });

  it('answers 401 without credentials, 404 for another org, an unknown id, a deleted base and a missing version, 400 for a bad version', async () => {
    const baseId = await policy(ADULT_ONLY);
    expect((await call(stack, 'POST', `/policy/${baseId}/tests/run`)).status).toBe(401);
    const refusals: Array<[string, string, number, string]> = [
      [`/policy/${baseId}/tests/run`, otherOrgKey, 404, 'not_found'],
      [`/policy/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a99/tests/run`, viewerKey, 404, 'not_found'],
      [`/flow/${baseId}/tests/run`, viewerKey, 404, 'not_found'],
      [`/policy/${baseId}/tests/run?version=7`, viewerKey, 404, 'not_found'],
      [`/policy/${baseId}/tests/run?version=0`, viewerKey, 400, 'validation_failed'],
      [`/policy/${baseId}/tests/run?version=one`, viewerKey, 400, 'validation_failed'],
    ];
    for (const [url, key, status, code] of refusals) {
      const res = await call(stack, 'POST', url, { key });
      expect([res.status, res.body.code], url).toEqual([status, code]);
    }
    // A malformed body is refused before anything runs.
    const bad = await call(stack, 'POST', `/policy/${baseId}/tests/run`, {
      key: viewerKey,
      rawBody: '{"version":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    await ok(204, 'DELETE', `/policy/${baseId}`);
    const deleted = await call(stack, 'POST', `/policy/${baseId}/tests/run`, { key: viewerKey });
    expect([deleted.status, deleted.body.code]).toEqual([404, 'not_found']);
  });

  it('runs through the SDK: policies.runTests and flows.runTests, with a version', async () => {
    const baseId = await policy(ADULT_ONLY, BOTH_WAYS);
    const arbiter = new Arbiter({ baseUrl: stack.baseUrl, apiKey: viewerKey });
    const draft = await arbiter.policies.runTests(baseId);
    expect([draft.passed, draft.failed, draft.coverage.summary.percent]).toEqual([1, 0, 50]);
    const v1 = await arbiter.policies.runTests(baseId, { version: 1 });
    expect([v1.passed, v1.coverage.summary.percent]).toEqual([2, 100]);
    await expect(arbiter.flows.runTests(baseId)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('answers 403 to a key without the `view` scope', async () => {
    const baseId = await policy(ADULT_ONLY);
    const editOnly = await memberKey(stack, 'edda', 'editor', ['edit']);
    const res = await call(stack, 'POST', `/policy/${baseId}/tests/run`, { key: editOnly });
    expect([res.status, res.body.code]).toEqual([403, 'forbidden']);
  });
});

describe('the minCoverage org setting', () => {
  const settings = (body: unknown) => ok(200, 'PUT', '/org/settings', body);
  afterEach(async () => {
    await settings({ governanceApproval: false, minCoverage: 0 });
  });

  it('refuses a publish whose saved tests cover less, with the percent, the minimum and the uncovered parts; nothing is published', async () => {
    expect(await settings({ governanceApproval: false, minCoverage: 80 })).toEqual({ governanceApproval: false, minCoverage: 80 });
    const baseId = await policy(ADULT_ONLY);
    const res = await call(stack, 'PUT', `/policy/${baseId}`, { key: stack.adminKey, body: { status: 'published' } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'coverage_below_minimum',
      title: 'Coverage below the minimum',
      errors: [
        {
          code: 'uncovered_condition',
          message: 'line 1, column 30: the __age__ of the **applicant** is at least 18 (seen true only)',
          path: 'rule',
        },
      ],
    });
    expect(res.body.detail).toMatch(/cannot be published: its saved tests cover 50 %, below the org's minimum of 80 %/);
    expect((await ok(200, 'GET', `/policy/${baseId}`)).status).toBe('draft');
    // Tests that reach the other side publish it.
    const published = await ok(201, 'PUT', `/policy/${baseId}`, { status: 'published', tests: BOTH_WAYS });
    expect(published.version).toBe(1);
  });

  it('at 0 (the default) changes nothing: a poorly covered draft publishes, and is submitted in a governed org', async () => {
    expect(await ok(200, 'GET', '/org/settings')).toEqual({ governanceApproval: false, minCoverage: 0 });
    const baseId = await policy(ADULT_ONLY);
    expect((await ok(201, 'PUT', `/policy/${baseId}`, { status: 'published' })).version).toBe(1);
    await settings({ governanceApproval: true });
    const governed = await policy(ADULT_ONLY);
    expect((await ok(202, 'PUT', `/policy/${governed}`, { status: 'published' })).state).toBe('pending_approval');
  });

  it('in a governed org refuses the submission for review below the minimum; nothing is submitted', async () => {
    await settings({ governanceApproval: true, minCoverage: 60 });
    const editorKey = await memberKey(stack, 'ed', 'editor', ['view', 'edit']);
    const flowTests = [{ name: 'only', data: { item: { x: 0 } }, expect: { n: 0 } }];
    const definition = {
      start: 't',
      nodes: {
        t: {
          type: 'table',
          hitPolicy: 'first',
          inputs: [{ name: 'x', path: 'item.x' }],
          outputs: [{ name: 'n' }],
          rules: [
            { when: ['is 0'], then: { n: 0 } },
            { when: ['-'], then: { n: 1 } },
          ],
        },
      },
    };
    const flow = await ok(201, 'POST', '/flow', { name: 'f', definition, tests: flowTests }, editorKey);
    const res = await call(stack, 'PUT', `/flow/${flow.flowId}`, { key: editorKey, body: { status: 'published' } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'coverage_below_minimum',
      errors: [{ code: 'uncovered_row', message: 'node `t`, rule 2: - (never matched)', path: 'definition.nodes.t' }],
    });
    expect(res.body.detail).toMatch(/cannot be submitted for review: its saved tests cover 50 %, below the org's minimum of 60 %/);
    expect((await ok(200, 'GET', `/flow/${flow.flowId}/review`, undefined, editorKey)).state).toBe('draft');
    // With a test reaching the second row the draft is submitted.
    const covered = [...flowTests, { name: 'other', data: { item: { x: 5 } }, expect: { n: 1 } }];
    const summary = await ok(202, 'PUT', `/flow/${flow.flowId}`, { status: 'published', tests: covered }, editorKey);
    expect(summary.state).toBe('pending_approval');
  });

  it('answers 400 for a minCoverage out of bounds or not an integer, and keeps the setting', async () => {
    await settings({ governanceApproval: false, minCoverage: 30 });
    for (const minCoverage of [-1, 101, 12.5, 'high']) {
      const res = await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: false, minCoverage } });
      expect([res.status, res.body.code], JSON.stringify(minCoverage)).toEqual([400, 'validation_failed']);
    }
    const viewer = await call(stack, 'PUT', '/org/settings', { key: viewerKey, body: { governanceApproval: false, minCoverage: 10 } });
    expect(viewer.status).toBe(403);
    expect(await ok(200, 'GET', '/org/settings')).toEqual({ governanceApproval: false, minCoverage: 30 });
  });
});
