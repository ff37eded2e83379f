import { ArbiterError, isArbiterError, type FlowTableNode, type RunResponse } from '@arbiter/contracts';
import type { TableRun } from '@arbiter/flow';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rolloutChoosesNew } from '@arbiter/run';
import { choosesNew } from '../src/workers/rollout-choice.js';
import { WorkerPool } from '../src/workers/worker-pool.js';
import { ruleHash } from '@arbiter/run/caches';
import { tableSource } from '@arbiter/run/caches';
import type { PolicySource } from '../src/workers/tasks.js';
import { ADULT_RULE, rejection, runawayData, runawayRule } from './helpers.js';

const encoder = new TextEncoder();

/** One evaluation as a job of one item, its answer as an object; rejects with the item's error. */
async function runOne(
  pool: WorkerPool,
  source: PolicySource,
  data: Record<string, unknown>,
  trace: boolean,
  budgetUsed = 0,
): Promise<{ response: RunResponse; cache: 'compile' | 'hit'; hash: string; threadId: number; steps: number }> {
  const out = await pool.runJob({
    principal: undefined,
    source,
    trace,
    reply: { kind: 'value' },
    items: [encoder.encode(JSON.stringify(data))],
    budgetUsed,
  });
  const answer = out.answers[0];
  if (answer instanceof ArbiterError) throw answer;
  return {
    response: answer.value as RunResponse,
    cache: out.compiles > 0 ? 'compile' : 'hit',
    hash: out.hash,
    threadId: answer.threadId,
    steps: answer.steps,
  };
}

const run = (pool: WorkerPool, rule: string, data: Record<string, unknown> = { user: { age: 30 } }, trace = true) =>
  runOne(pool, { kind: 'text', rule }, data, trace);

describe('WorkerPool trace limit', () => {
  const pool = new WorkerPool({ size: 1, taskTimeoutMs: 5000, cacheSize: 10, maxTraceBytes: 300 });
  beforeAll(() => pool.warmUp(), 60_000);
  afterAll(() => pool.close());

  it("cuts a table node's trace to maxTraceBytes as it does a policy's, keeping its last line", async () => {
    // Only the last rule matches: the 39 before it each add their trace lines, well past 300 bytes.
    const node: FlowTableNode = {
      type: 'table',
      hitPolicy: 'first',
      inputs: [{ name: 'n', path: 'x.n' }],
      outputs: [{ name: 'out' }],
      rules: Array.from({ length: 40 }, (_, i) => ({ when: [i < 39 ? '< 0' : '-'], then: { out: i } })),
    };
    const item = encoder.encode(JSON.stringify({ x: { n: 1 } }));
    const out = await pool.runJob({
      principal: undefined,
      source: tableSource('t', node),
      trace: true,
      reply: { kind: 'value' },
      items: [item],
    });
    const answer = out.answers[0];
    if (answer instanceof ArbiterError) throw answer;
    const run = answer.value as TableRun;
    if (!run.ok) throw new Error(run.problem);
    const { trace, result } = run.outcome;
    expect(result).toEqual({ out: 39 });
    expect(trace.at(-1)).toBe('result: {"out":39}');
    expect(trace.at(-2)).toMatch(/^… trace cut: \d+ more lines \(a trace is limited to 300 bytes\)$/);
    expect(Buffer.byteLength(trace.slice(0, -2).join('\n'), 'utf8')).toBeLessThanOrEqual(300);
    expect(trace.length).toBeGreaterThan(2);
  });
});

describe('WorkerPool with the rule engine', () => {
  const pool = new WorkerPool({ size: 1, taskTimeoutMs: 5000, cacheSize: 10 });
  // As the service does before it answers: loading the engine is not what these tests time.
  beforeAll(() => pool.warmUp(), 60_000);
  afterAll(() => pool.close());

  it('evaluates in a worker thread and compiles a repeated rule once', async () => {
    const first = await run(pool, ADULT_RULE);
    const second = await run(pool, ADULT_RULE, { user: { age: 12 } });
    expect(first.response).toMatchObject({ result: true, outcomes: { adult: true } });
    expect(second.response).toMatchObject({ result: false, outcomes: { adult: false } });
    expect([first.cache, second.cache]).toEqual(['compile', 'hit']);
    expect(first.hash).toBe(ruleHash(ADULT_RULE));
    expect(second.threadId).toBe(first.threadId);
    expect(first.threadId).toBeGreaterThan(0);
  });

  it('caches a parse error too, answering it as a result', async () => {
    const bad = 'A **user** is adult if.';
    const first = await run(pool, bad);
    const second = await run(pool, bad);
    expect([first.cache, second.cache]).toEqual(['compile', 'hit']);
    expect(second.response).toEqual(first.response);
    expect(first.response.result).toBe(false);
    expect(first.response.errorCode).toBe('parse_error');
    expect(first.response.error).toMatch(/^Parse error: line 1, column \d+: /);
    expect(first.response.trace).toEqual([first.response.error]);
  });

  it('builds no trace when asked not to', async () => {
    const out = await run(pool, ADULT_RULE, { user: { age: 30 } }, false);
    expect(out.response).toEqual({ result: true, outcomes: { adult: true }, trace: [] });
  });

  it('validates, explains and lists operators in the worker', async () => {
    expect(await pool.validate(undefined, ADULT_RULE)).toEqual({ valid: true, error: null });
    expect((await pool.validate(undefined, 'nonsense')).valid).toBe(false);
    const explained = await pool.explain(undefined, ADULT_RULE);
    expect(explained).toMatchObject({ rule_count: 1, error: null, rules: [{ selector: 'user', outcome: 'adult' }] });
    const operators = await pool.operators();
    expect(operators.length).toBeGreaterThan(0);
    expect(operators.map((o) => o.operator)).toContain('is greater than');
  });

  it("chooses each item's rollout version in the worker exactly as @arbiter/run does on its data", async () => {
    const rollout = { id: 'r', percent: 30, by: 'applicant.id', recordId: 'n', version: 2, previousRecordId: 'p', previousVersion: 1 };
    const items = Array.from({ length: 500 }, (_, i) => ({ applicant: { id: `customer-${i}`, pad: 'x'.repeat(i % 50) } }));
    const choices = await pool.rolloutChoices(
      undefined,
      rollout,
      items.map((d) => encoder.encode(JSON.stringify(d))),
    );
    expect(choices).toEqual(items.map((d) => rolloutChoosesNew(rollout, d)));
    expect(choices).toEqual(items.map((d) => choosesNew(rollout, encoder.encode(JSON.stringify(d)))));
    const share = choices.filter(Boolean).length / choices.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.4);
    expect(await pool.rolloutChoices(undefined, { ...rollout, percent: 100 }, [encoder.encode('not json'), encoder.encode('{}')])).toEqual([
      true,
      true,
    ]);
    expect(await pool.rolloutChoices(undefined, { ...rollout, percent: 0 }, [encoder.encode('not json')])).toEqual([false]);
  });
});

describe('WorkerPool with several workers', () => {
  const pool = new WorkerPool({ size: 2, taskTimeoutMs: 5000, cacheSize: 10, perCallerMax: 100 });
  beforeAll(() => pool.warmUp(), 60_000);
  afterAll(() => pool.close());

  it('compiles a rule at most once per worker', async () => {
    const rule = 'A **user** is senior if the __age__ of the **user** is at least 65.';
    const outcomes = await Promise.all(Array.from({ length: 24 }, () => run(pool, rule)));
    const byThread = new Map<number, string[]>();
    for (const o of outcomes) byThread.set(o.threadId, [...(byThread.get(o.threadId) ?? []), o.cache]);
    expect(byThread.size).toBeLessThanOrEqual(2);
    for (const uses of byThread.values()) {
      expect(uses.filter((u) => u === 'compile')).toHaveLength(1);
    }
  });
});

describe('WorkerPool step budget', () => {
  const pool = new WorkerPool({ size: 1, taskTimeoutMs: 5000, cacheSize: 10, stepBudget: 100_000, traceStepBudget: 1000 });
  beforeAll(() => pool.warmUp(), 60_000);
  afterAll(() => pool.close());

  it('stops a runaway evaluation with budget_exceeded (200-style result), the worker unharmed', async () => {
    const warm = await run(pool, ADULT_RULE);
    const out = await run(pool, runawayRule(), runawayData, false);
    expect(out.response).toEqual({
      result: false,
      outcomes: {},
      trace: [],
      error: 'Budget exceeded: the evaluation needs more than 100000 steps',
      errorCode: 'budget_exceeded',
    });
    expect(out.steps).toBe(100_000);
    expect(out.threadId).toBe(warm.threadId);
    const traced = await run(pool, runawayRule(), runawayData, true);
    expect(traced.response.error).toBe('Budget exceeded: the evaluation needs more than 1000 steps');
    expect(traced.response.trace.at(-1)).toBe(`error: ${traced.response.error}`);
    expect((await run(pool, ADULT_RULE)).threadId).toBe(warm.threadId);
  });

  it('runs a stored policy within what a shared budget has left, advancing it', async () => {
    const source: PolicySource = { kind: 'stored', hash: ruleHash(ADULT_RULE), rule: ADULT_RULE, schema: null };
    const first = await runOne(pool, source, { user: { age: 30 } }, false, 99_999);
    expect(first.response.result).toBe(true);
    expect(first.steps).toBe(100_000);
    const out = await runOne(pool, source, { user: { age: 30 } }, false, first.steps);
    expect(out.response.errorCode).toBe('budget_exceeded');
    expect(out.steps).toBe(100_000);
  });
});

// The deadline runs from when a worker starts the task; the step budget is set out of reach here.
describe('WorkerPool time-out', () => {
  const pool = new WorkerPool({ size: 1, taskTimeoutMs: 1000, cacheSize: 10, stepBudget: Number.MAX_SAFE_INTEGER });
  beforeAll(() => pool.warmUp(), 60_000);
  afterAll(() => pool.close());

  it('aborts a runaway evaluation with timeout, replacing the worker', async () => {
    const warm = await run(pool, ADULT_RULE);
    const err = await rejection(run(pool, runawayRule(), runawayData, false));
    expect([err.code, err.status, err.message]).toEqual(['timeout', 504, 'evaluation took longer than 1000 ms']);
    expect(err.cause).toBeInstanceOf(Error);
    await eventually(() => expect(pool.readyThreads).toBeGreaterThanOrEqual(1), { intervalMs: 20 });
    const after = await run(pool, ADULT_RULE);
    expect(after.response.result).toBe(true);
    expect(after.threadId).not.toBe(warm.threadId);
    expect(after.cache).toBe('compile');
  });
});

describe('WorkerPool plumbing (test-only worker)', () => {
  const workerFile = new URL('./fixtures/spin-worker.mjs', import.meta.url);

  it('times out a worker that never returns and keeps serving', async () => {
    const pool = new WorkerPool({ size: 1, taskTimeoutMs: 1000, cacheSize: 1, workerFile });
    try {
      expect(isArbiterError(await rejection(pool.validate(undefined, 'spin')), 'timeout')).toBe(true);
      expect(await pool.validate(undefined, 'ok')).toEqual({ echoed: { op: 'validate', rule: 'ok' } });
    } finally {
      await pool.close();
    }
  });

  it('answers internal when the worker throws', async () => {
    const pool = new WorkerPool({ size: 1, taskTimeoutMs: 5000, cacheSize: 1, workerFile });
    try {
      const err = await rejection(pool.validate(undefined, 'crash'));
      expect([err.code, err.message]).toEqual(['internal', 'evaluation failed: validate']);
      expect((err.cause as Error).message).toBe('worker crashed');
    } finally {
      await pool.close();
    }
  });

  it('counts the deadline from when a worker starts a task: one queued behind a slow task does not time out', async () => {
    const pool = new WorkerPool({ size: 1, taskTimeoutMs: 1000, cacheSize: 1, workerFile, queueWaitMs: 5000 });
    try {
      // Three tasks of 600 ms each from three callers, submitted together on one thread: the last
      // starts after the other two (1200 ms of work), past the 1000 ms deadline had it counted from
      // submission. The pool's one thread runs them one after another, so none may time out.
      const tasks = [1, 2, 3].map((i) => pool.validate({ orgId: 'o', userId: `u${i}`, role: 'viewer' }, 'busy:600'));
      const results = await Promise.all(tasks);
      expect(results).toHaveLength(3);
    } finally {
      await pool.close();
    }
  });

  it('answers 503 to a task that waits longer than queueWaitMs for a thread, and 429 past the per-caller limit', async () => {
    const pool = new WorkerPool({ size: 1, taskTimeoutMs: 5000, cacheSize: 1, workerFile, queueWaitMs: 200, perCallerMax: 2 });
    try {
      const alice = { orgId: 'o', userId: 'alice', role: 'viewer' as const, apiKeyId: 'k1' };
      const slow = pool.validate(alice, 'busy:600');
      const waiting = rejection(pool.validate({ orgId: 'o', userId: 'bob', role: 'viewer' }, 'ok'));
      const queued = rejection(pool.validate(alice, 'ok'));
      const over = await rejection(pool.validate(alice, 'ok'));
      expect([over.code, over.status]).toEqual(['rate_limited', 429]);
      expect(over.message).toBe('too many evaluations in progress for this caller (at most 2 at a time)');
      const expired = await waiting;
      expect([expired.code, expired.status, expired.message]).toEqual([
        'dependency_unavailable',
        503,
        'no evaluation thread was free within 200 ms; try again shortly',
      ]);
      await slow;
      expect((await queued).code).toBe('dependency_unavailable');
      expect(pool.stats()).toEqual({ queued: 0, running: 0, callers: 0, persons: 0 });
      expect(await pool.validate(alice, 'ok')).toEqual({ echoed: { op: 'validate', rule: 'ok' } });
    } finally {
      await pool.close();
    }
  });

  it('refuses tasks once closed', async () => {
    const pool = new WorkerPool({ size: 1, taskTimeoutMs: 5000, cacheSize: 1, workerFile });
    await pool.close();
    expect((await rejection(pool.validate(undefined, 'ok'))).code).toBe('dependency_unavailable');
  });
});
