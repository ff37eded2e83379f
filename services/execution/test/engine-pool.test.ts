import { isArbiterError } from '@arbiter/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import { EnginePool } from '../src/engine-pool.js';
import { ruleHash } from '../src/policy-cache.js';
import { ADULT_RULE, rejection, runawayData, runawayRule } from './helpers.js';

const run = (pool: EnginePool, rule: string, data: Record<string, unknown> = { user: { age: 30 } }) =>
  pool.run({ rule, data, trace: true });

describe('EnginePool with the rule engine', () => {
  const pool = new EnginePool({ size: 1, taskTimeoutMs: 5000, cacheSize: 10 });
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
    const out = await pool.run({ rule: ADULT_RULE, data: { user: { age: 30 } }, trace: false });
    expect(out.response).toEqual({ result: true, outcomes: { adult: true }, trace: [] });
  });

  it('validates, explains and lists operators in the worker', async () => {
    expect(await pool.validate(ADULT_RULE)).toEqual({ valid: true, error: null });
    expect((await pool.validate('nonsense')).valid).toBe(false);
    const explained = await pool.explain(ADULT_RULE);
    expect(explained).toMatchObject({ rule_count: 1, error: null, rules: [{ selector: 'user', outcome: 'adult' }] });
    const operators = await pool.operators();
    expect(operators.length).toBeGreaterThan(0);
    expect(operators.map((o) => o.operator)).toContain('is greater than');
  });
});

describe('EnginePool with several workers', () => {
  const pool = new EnginePool({ size: 2, taskTimeoutMs: 5000, cacheSize: 10 });
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

// The deadline runs from submission, so it also covers booting the replacement worker: keep it at
// the production default rather than tight.
describe('EnginePool time-out', () => {
  const pool = new EnginePool({ size: 1, taskTimeoutMs: 1000, cacheSize: 10 });
  afterAll(() => pool.close());

  it('aborts a runaway evaluation with timeout, replacing the worker', async () => {
    const warm = await run(pool, ADULT_RULE);
    const err = await rejection(pool.run({ rule: runawayRule(), data: runawayData, trace: false }));
    expect([err.code, err.status, err.message]).toEqual(['timeout', 504, 'evaluation took longer than 1000 ms']);
    expect(err.cause).toBeInstanceOf(Error);
    const after = await run(pool, ADULT_RULE);
    expect(after.response.result).toBe(true);
    expect(after.threadId).not.toBe(warm.threadId);
    expect(after.cache).toBe('compile');
  });
});

describe('EnginePool plumbing (test-only worker)', () => {
  const workerFile = new URL('./fixtures/spin-worker.mjs', import.meta.url);

  it('times out a worker that never returns and keeps serving', async () => {
    const pool = new EnginePool({ size: 1, taskTimeoutMs: 1000, cacheSize: 1, workerFile });
    try {
      expect(isArbiterError(await rejection(pool.validate('spin')), 'timeout')).toBe(true);
      expect(await pool.validate('ok')).toEqual({ echoed: { op: 'validate', rule: 'ok' } });
    } finally {
      await pool.close();
    }
  });

  it('answers internal when the worker throws', async () => {
    const pool = new EnginePool({ size: 1, taskTimeoutMs: 5000, cacheSize: 1, workerFile });
    try {
      const err = await rejection(pool.validate('crash'));
      expect([err.code, err.message]).toEqual(['internal', 'evaluation failed: validate']);
      expect((err.cause as Error).message).toBe('worker crashed');
    } finally {
      await pool.close();
    }
  });

  it('refuses tasks once closed', async () => {
    const pool = new EnginePool({ size: 1, taskTimeoutMs: 5000, cacheSize: 1, workerFile });
    await pool.close();
    expect((await rejection(pool.validate('ok'))).code).toBe('dependency_unavailable');
  });
});
