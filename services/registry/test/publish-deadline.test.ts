import { FlowRecord, FlowUpdateReply, PolicyRecord, PolicyUpdateReply, RegistrySubject as S, TestRunReport } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADULT_RULE, as, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  // The step budget out of reach: these tests are about the deadline, the last resort.
  env = await startTestEnv({ EXEC_STEP_BUDGET: String(Number.MAX_SAFE_INTEGER), REGISTRY_CHECK_TIMEOUT_MS: String(DEADLINE_MS) });
});
afterAll(async () => {
  await env?.close();
});

const publisher = as('publisher');

/**
 * The deadline per saved test. The quick checks these tests make after a slow one must finish within
 * it on a machine busy with other suites (CI runs two at once on two cores): 1 s proved too tight
 * there, while the slow rule needs minutes, far past it either way.
 */
const DEADLINE_MS = 4000;

/** Three quantifiers nested over the same array: 2,000 items make 8·10⁹ comparisons (minutes). */
const CUBIC_RULE =
  'An **order** is suspicious if any of the __items__ of the **order** where (any of the __items__ of the **order** where ' +
  '(any of the __items__ of the **order** where (its __price__ is greater than 1000000))).';
const BIG_ORDER = { order: { items: Array.from({ length: 2000 }, (_, i) => ({ price: i })) } };
const SLOW_TEST = { name: 'slow', data: BIG_ORDER, expect: false };
const TIMED_OUT = {
  code: 'test_failed',
  message: `the checks did not finish within ${2 * DEADLINE_MS} ms (${DEADLINE_MS} ms per saved test, and as much for the rule): a saved test runs too long`,
  path: 'tests',
};

const createPolicy = (rule: string, tests: unknown[] = []) =>
  env.call(S.policyCreate, { principal: publisher, name: 'p', rule, tests }, PolicyRecord);
const publishPolicy = (policyId: string) =>
  env.call(S.policyUpdate, { principal: publisher, policyId, status: 'published' }, PolicyUpdateReply);

describe('publish checks run in a worker with a deadline (the evaluation time-out)', () => {
  it('a policy whose saved test runs too long is refused (422), and the registry answers other requests meanwhile', async () => {
    const slow = await createPolicy(CUBIC_RULE, [SLOW_TEST]);
    const other = await createPolicy(ADULT_RULE);
    const publishing = env.fail(S.policyUpdate, { principal: publisher, policyId: slow.policyId, status: 'published' });
    // the check holds a worker thread, not the registry's event loop
    expect((await env.call(S.policyGet, { principal: publisher, policyId: other.policyId }, PolicyRecord)).status).toBe('draft');
    const err = await publishing;
    expect([err.code, err.status]).toEqual(['cannot_publish', 422]);
    expect(err.errors).toEqual([TIMED_OUT]);
    expect((await env.call(S.policyGet, { principal: publisher, policyId: slow.policyId }, PolicyRecord)).status).toBe('draft');
  });

  it('the next publish gets a fresh worker and passes', async () => {
    const ok = await createPolicy(ADULT_RULE, [{ name: 'adult', data: { applicant: { age: 30 } }, expect: true }]);
    expect((await publishPolicy(ok.policyId)).record.version).toBe(1);
  });

  it('a flow whose saved test runs too long is refused (422)', async () => {
    const cubic = (await publishPolicy((await createPolicy(CUBIC_RULE)).policyId)).record;
    const definition = {
      start: 'check',
      nodes: {
        check: { type: 'policy', baseId: cubic.baseId, onTrue: 'yes', onFalse: 'no' },
        yes: { type: 'return', value: true },
        no: { type: 'return', value: false },
      },
    };
    const draft = await env.call(S.flowCreate, { principal: publisher, name: 'f', definition, tests: [SLOW_TEST] }, FlowRecord);
    const err = await env.fail(S.flowUpdate, { principal: publisher, flowId: draft.flowId, status: 'published' });
    expect([err.code, err.status]).toEqual(['cannot_publish', 422]);
    expect(err.errors).toEqual([TIMED_OUT]);
    const quick = await env.call(
      S.flowCreate,
      {
        principal: publisher,
        name: 'g',
        definition,
        tests: [{ name: 'small', data: { order: { items: [{ price: 1 }] } }, expect: false }],
      },
      FlowRecord,
    );
    expect(
      (await env.call(S.flowUpdate, { principal: publisher, flowId: quick.flowId, status: 'published' }, FlowUpdateReply)).record.version,
    ).toBe(1);
  });
});

describe('publish checks run saved tests within the step budget (EXEC_STEP_BUDGET, as a run would)', () => {
  let budgeted: TestEnv;
  beforeAll(async () => {
    budgeted = await startTestEnv({ EXEC_STEP_BUDGET: '100000' });
  });
  afterAll(async () => {
    await budgeted?.close();
  });

  it('a saved test that needs more steps fails at once with the budget message (422), not at the deadline', async () => {
    const slow = await budgeted.call(
      S.policyCreate,
      { principal: publisher, name: 'p', rule: CUBIC_RULE, tests: [SLOW_TEST] },
      PolicyRecord,
    );
    const err = await budgeted.fail(S.policyUpdate, { principal: publisher, policyId: slow.policyId, status: 'published' });
    expect([err.code, err.status]).toEqual(['cannot_publish', 422]);
    expect(err.errors).toEqual([
      { code: 'test_failed', message: 'test `slow`: Budget exceeded: the evaluation needs more than 100000 steps', path: 'tests.0' },
    ]);
  });
});

describe('saved-test runs share the workers and the deadline', () => {
  it('a test run past the deadline answers 504 timeout, the registry serving meanwhile, and the next run gets a fresh worker', async () => {
    const slow = await createPolicy(CUBIC_RULE, [SLOW_TEST]);
    const running = env.fail(S.policyTestRun, { principal: publisher, baseId: slow.baseId });
    expect((await env.call(S.policyGet, { principal: publisher, policyId: slow.policyId }, PolicyRecord)).status).toBe('draft');
    const err = await running;
    expect([err.code, err.status]).toEqual(['timeout', 504]);
    expect(err.message).toBe(
      `the saved tests did not finish within ${2 * DEADLINE_MS} ms (${DEADLINE_MS} ms per saved test, and as much for the rule): a saved test runs too long`,
    );
    const quick = await createPolicy(ADULT_RULE, [{ name: 'adult', data: { applicant: { age: 30 } }, expect: true }]);
    expect((await env.call(S.policyTestRun, { principal: publisher, baseId: quick.baseId }, TestRunReport)).passed).toBe(1);
  });
});
