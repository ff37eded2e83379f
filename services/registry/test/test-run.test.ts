import { FlowRecord, PolicyRecord, PolicyUpdateReply, PublishCheckReply, RegistrySubject as S, TestRunReport } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ADULT_RULE, as, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const viewer = as('viewer');
const publisher = as('publisher');
const admin = as('admin');

const adultTests = [
  { name: 'adult', data: { applicant: { age: 30 } }, expect: true },
  { name: 'wrong', data: { applicant: { age: 30 } }, expect: false },
];

describe('saved tests run with coverage', () => {
  it('runs a policy draft: each test against its expectation, and the conditions covered', async () => {
    const draft = await env.call(S.policyCreate, { principal: publisher, name: 'p', rule: ADULT_RULE, tests: adultTests }, PolicyRecord);
    const report = await env.call(S.policyTestRun, { principal: viewer, baseId: draft.baseId }, TestRunReport);
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

  it('runs a version by number, and the draft by default', async () => {
    const tests = [
      { name: 'adult', data: { applicant: { age: 30 } }, expect: true },
      { name: 'minor', data: { applicant: { age: 3 } }, expect: false },
    ];
    const draft = await env.call(S.policyCreate, { principal: publisher, name: 'p', rule: ADULT_RULE, tests }, PolicyRecord);
    await env.call(S.policyUpdate, { principal: publisher, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply);
    await env.call(S.policyDraft, { principal: publisher, policyId: draft.baseId }, z.unknown());
    await env.call(S.policyUpdate, { principal: publisher, policyId: draft.baseId, status: 'draft', tests: [tests[0]] }, PolicyUpdateReply);
    const v1 = await env.call(S.policyTestRun, { principal: viewer, baseId: draft.baseId, version: 1 }, TestRunReport);
    expect([v1.passed, v1.coverage.summary.percent]).toEqual([2, 100]);
    const current = await env.call(S.policyTestRun, { principal: viewer, baseId: draft.baseId }, TestRunReport);
    expect([current.passed, current.coverage.summary.percent]).toEqual([1, 50]);
    expect((await env.fail(S.policyTestRun, { principal: viewer, baseId: draft.baseId, version: 2 })).code).toBe('not_found');
  });

  it('fails every test of a rule that does not parse, covering nothing', async () => {
    const draft = await env.call(S.policyCreate, { principal: publisher, name: 'p', rule: 'not a rule', tests: adultTests }, PolicyRecord);
    const report = await env.call(S.policyTestRun, { principal: viewer, baseId: draft.baseId }, TestRunReport);
    expect(report.passed).toBe(0);
    expect(report.failed).toBe(2);
    expect(report.results[0].error).toMatch(/^Parse error: line 1/);
    expect(report.coverage).toEqual({ summary: { percent: 0 }, uncovered: [] });
  });

  it('runs a flow draft: its table rows matched and edges taken', async () => {
    const adult = await env.call(S.policyCreate, { principal: publisher, name: 'adult', rule: ADULT_RULE }, PolicyRecord);
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
    const tests = [{ name: 'rich', data: { applicant: { age: 30, income: 5000 } }, expect: { tier: 'gold' } }];
    const flow = await env.call(S.flowCreate, { principal: publisher, name: 'f', definition, tests }, FlowRecord);
    const report = await env.call(S.flowTestRun, { principal: viewer, baseId: flow.baseId }, TestRunReport);
    expect(report).toEqual({
      passed: 1,
      failed: 0,
      results: [{ name: 'rich', ok: true, expected: { tier: 'gold' }, actual: { tier: 'gold' } }],
      coverage: {
        summary: { rows: { total: 2, covered: 1 }, edges: { total: 2, covered: 1 }, percent: 50 },
        uncovered: [
          { kind: 'row', nodeId: 'tier', row: 2, text: '-' },
          { kind: 'edge', from: 'adult', to: 'no', text: 'adult → no (onFalse)' },
        ],
      },
    });
  });

  it('answers 404 for another org, an unknown id and a deleted base', async () => {
    const draft = await env.call(S.policyCreate, { principal: publisher, name: 'p', rule: ADULT_RULE, tests: adultTests }, PolicyRecord);
    expect((await env.fail(S.policyTestRun, { principal: as('viewer', { orgId: 'other-org' }), baseId: draft.baseId })).code).toBe(
      'not_found',
    );
    expect((await env.fail(S.policyTestRun, { principal: viewer, baseId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a99' })).code).toBe('not_found');
    expect((await env.fail(S.flowTestRun, { principal: viewer, baseId: draft.baseId })).code).toBe('not_found');
    await env.call(S.policyDelete, { principal: admin, policyId: draft.baseId }, z.unknown());
    expect((await env.fail(S.policyTestRun, { principal: viewer, baseId: draft.baseId })).code).toBe('not_found');
  });
});

describe('the minCoverage gate', () => {
  const oneWay = [{ name: 'adult', data: { applicant: { age: 30 } }, expect: true }];
  const bothWays = [...oneWay, { name: 'minor', data: { applicant: { age: 3 } }, expect: false }];

  it('refuses a publish whose saved tests cover less, naming the percent, the minimum and the uncovered parts; nothing changes', async () => {
    const draft = await env.call(S.policyCreate, { principal: publisher, name: 'p', rule: ADULT_RULE, tests: oneWay }, PolicyRecord);
    const err = await env.fail(S.policyUpdate, { principal: publisher, policyId: draft.policyId, status: 'published', minCoverage: 80 });
    expect(err.code).toBe('coverage_below_minimum');
    expect(err.message).toBe(
      `policy \`${draft.policyId}\` cannot be published: its saved tests cover 50 %, below the org's minimum of 80 %; 1 part not fully covered`,
    );
    expect(err.errors).toEqual([
      {
        code: 'uncovered_condition',
        message: 'line 1, column 30: the __age__ of the **applicant** is at least 18 (seen true only)',
        path: 'rule',
      },
    ]);
    expect((await env.call(S.policyGet, { principal: viewer, policyId: draft.policyId }, PolicyRecord)).status).toBe('draft');
    // The edits of a refused publish roll back with it.
    const edited = await env.fail(S.policyUpdate, {
      principal: publisher,
      policyId: draft.policyId,
      status: 'published',
      description: 'edited',
      minCoverage: 51,
    });
    expect(edited.code).toBe('coverage_below_minimum');
    expect((await env.call(S.policyGet, { principal: viewer, policyId: draft.policyId }, PolicyRecord)).description).toBe('');
    // Enough coverage, or no minimum, publishes.
    const published = await env.call(
      S.policyUpdate,
      { principal: publisher, policyId: draft.policyId, status: 'published', tests: bothWays, minCoverage: 100 },
      PolicyUpdateReply,
    );
    expect(published.outcome).toBe('published');
    const other = await env.call(S.policyCreate, { principal: publisher, name: 'p', rule: ADULT_RULE, tests: oneWay }, PolicyRecord);
    const free = await env.call(
      S.policyUpdate,
      { principal: publisher, policyId: other.policyId, status: 'published', minCoverage: 0 },
      PolicyUpdateReply,
    );
    expect(free.outcome).toBe('published');
  });

  it('reports failing checks as cannot_publish before counting coverage', async () => {
    const failing = [{ name: 'wrong', data: { applicant: { age: 30 } }, expect: false }];
    const draft = await env.call(S.policyCreate, { principal: publisher, name: 'p', rule: ADULT_RULE, tests: failing }, PolicyRecord);
    const err = await env.fail(S.policyUpdate, { principal: publisher, policyId: draft.policyId, status: 'published', minCoverage: 90 });
    expect(err.code).toBe('cannot_publish');
  });

  it('lists the first five uncovered parts of a flow, by node', async () => {
    const rules = Array.from({ length: 7 }, (_, i) => ({ when: [`is ${i}`], then: { n: i } }));
    const definition = {
      start: 't',
      nodes: { t: { type: 'table', hitPolicy: 'first', inputs: [{ name: 'x', path: 'item.x' }], outputs: [{ name: 'n' }], rules } },
    };
    const tests = [{ name: 'zero', data: { item: { x: 0 } }, expect: { n: 0 } }];
    const flow = await env.call(S.flowCreate, { principal: publisher, name: 'f', definition, tests }, FlowRecord);
    const err = await env.fail(S.flowUpdate, { principal: publisher, flowId: flow.flowId, status: 'published', minCoverage: 50 });
    expect(err.code).toBe('coverage_below_minimum');
    expect(err.message).toMatch(/cover 14\.2 %, below the org's minimum of 50 %; 6 parts not fully covered \(the first 5 listed\)$/);
    expect(err.errors).toHaveLength(5);
    expect(err.errors![0]).toEqual({
      code: 'uncovered_row',
      message: 'node `t`, rule 2: x is 1 (never matched)',
      path: 'definition.nodes.t',
    });
  });

  it('applies the minimum to the publish check of a submission for review', async () => {
    const draft = await env.call(S.policyCreate, { principal: publisher, name: 'p', rule: ADULT_RULE, tests: oneWay }, PolicyRecord);
    const err = await env.fail(S.policyPublishCheck, { principal: publisher, recordId: draft.policyId, minCoverage: 60 });
    expect(err.code).toBe('coverage_below_minimum');
    expect(err.message).toMatch(/cannot be submitted for review: its saved tests cover 50 %, below the org's minimum of 60 %/);
    const passed = await env.call(
      S.policyPublishCheck,
      { principal: publisher, recordId: draft.policyId, minCoverage: 50 },
      PublishCheckReply,
    );
    expect(passed.problems).toEqual([]);
  });
});
