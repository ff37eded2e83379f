/**
 * The step budget (src/evaluate/budget.ts, LANGUAGE.md §8.1): a runaway policy stops itself with
 * `budget_exceeded`; the count is deterministic and the same in every evaluator (generated, traced
 * generated, closures with and without the structured trace); ordinary policies are far inside
 * the default; a shared budget carries over between evaluations.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_STEP_BUDGET, DEFAULT_TRACED_STEP_BUDGET, StepBudget, compile, evaluate } from '../src/index.js';
import { compilable, compileWithoutCodegen, isGenerated, isTraceGenerated, same, variants } from './support/evaluators.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

const RUNAWAY = 'if any of o.items satisfies (any of o.items satisfies (its.p == 5)) -> ok.';
const items = (n: number) => Array.from({ length: n }, () => ({ p: 1 }));
const NOW = new Date('2025-06-15T12:00:00Z');

describe('a runaway policy', () => {
  it('stops with budget_exceeded in every mode, after exactly its budget of steps', () => {
    const policy = compile(RUNAWAY);
    // 30,000² inner comparisons if nothing stopped it; the budget allows a millionth of that.
    const data = { o: { items: items(30_000) } };
    for (const opts of [{}, { trace: true }, { traceTree: true }]) {
      const traced = 'trace' in opts || 'traceTree' in opts;
      const budget = new StepBudget(traced ? 20_000 : DEFAULT_STEP_BUDGET);
      const r = policy.evaluate(data, { ...opts, stepBudget: budget });
      expect(r.result).toBe(false);
      expect(r.outcomes).toEqual({});
      expect(r.errorCode).toBe('budget_exceeded');
      expect(r.error).toBe(`Budget exceeded: the evaluation needs more than ${budget.limit} steps`);
      expect(budget.used).toBe(budget.limit);
      if (traced) expect(r.trace.at(-1)).toBe(`error: ${r.error}`);
    }
  });

  it('uses the default budgets without an option, the traced one with a trace', () => {
    const policy = compile(RUNAWAY);
    const data = { o: { items: items(2_000) } };
    expect(policy.evaluate(data).error).toBe(`Budget exceeded: the evaluation needs more than ${DEFAULT_STEP_BUDGET} steps`);
    expect(policy.evaluate(data, { trace: true }).error).toBe(
      `Budget exceeded: the evaluation needs more than ${DEFAULT_TRACED_STEP_BUDGET} steps`,
    );
    expect(evaluate(RUNAWAY, data, { stepBudget: 10 }).errorCode).toBe('budget_exceeded');
  });

  it('is configurable: a larger budget lets the same evaluation finish', () => {
    const policy = compile(RUNAWAY);
    const data = { o: { items: items(100) } };
    // 100 × (100 comparisons + 100 inner elements) + 100 outer elements.
    const needed = 100 * 200 + 100;
    expect(policy.evaluate(data, { stepBudget: needed - 1 }).errorCode).toBe('budget_exceeded');
    const budget = new StepBudget(needed);
    expect(policy.evaluate(data, { stepBudget: budget })).toEqual({ result: false, outcomes: { ok: false }, trace: [] });
    expect(budget.used).toBe(needed);
  });

  it('charges the size of compared arrays, objects and long strings', () => {
    const policy = compile('if any of o.items satisfies (o.items contains its) -> ok.');
    const data = { o: { items: items(300) } };
    const budget = new StepBudget(10_000_000);
    policy.evaluate(data, { stepBudget: budget });
    // Each of the 300 elements: one comparison charging 1 + 300 (the array) + 1 (the element's one key), and the element's step.
    expect(budget.used).toBe(300 * (1 + 300 + 1) + 300);
    const strings = new StepBudget();
    compile('if x.s == "a" -> ok.').evaluate({ x: { s: 'a'.repeat(64 * 10) } }, { stepBudget: strings });
    expect(strings.used).toBe(1 + 10);
  });
});

describe('the count is the same in every evaluator', () => {
  const POLICY = `A **o** is fine if any of o.items satisfies (its.p == 1 and (its.q > 2 or its.r is empty)) and $more.
more: if all of o.items satisfies (its.p is in [1, 2]) and the number of o.items is at least 1 -> more.`;
  const data = {
    o: {
      items: [
        { p: 1, q: 3, r: 'x' },
        { p: 1, q: 0, r: [] },
        { p: 2, q: 1, r: 'y' },
      ],
    },
  };

  it('generated, traced generated, closures and the structured trace stop at the same step, with the same lines', () => {
    const generated = compile(POLICY);
    const closures = compileWithoutCodegen(POLICY);
    expect(isGenerated(generated) && isTraceGenerated(generated)).toBe(true);
    const full = new StepBudget(1000);
    expect(generated.evaluate(data, { now: NOW, stepBudget: full }).result).toBe(true);
    const total = full.used;
    expect(total).toBeGreaterThan(10);
    for (let limit = 0; limit <= total; limit++) {
      const results = [
        [generated, { trace: false }],
        [closures, { trace: false }],
      ].map(([p, o]) => {
        const b = new StepBudget(limit);
        const r = (p as typeof generated).evaluate(data, { ...(o as object), now: NOW, stepBudget: b });
        return { r, used: b.used };
      });
      same(results[0].r, results[1].r);
      expect(results[0].used).toBe(results[1].used);
      expect(results[0].r.errorCode).toBe(limit < total ? 'budget_exceeded' : undefined);
      const traced = [
        generated.evaluate(data, { trace: true, now: NOW, stepBudget: limit }),
        closures.evaluate(data, { trace: true, now: NOW, stepBudget: limit }),
      ];
      const { traceTree: _tree, ...tree } = generated.evaluate(data, { traceTree: true, now: NOW, stepBudget: limit });
      same(traced[0], traced[1]);
      same(traced[0], tree);
      expect(traced[0].errorCode).toBe(results[0].r.errorCode);
    }
  });

  it('shares one budget across evaluations', () => {
    const policy = compile(POLICY);
    const budget = new StepBudget(1000);
    policy.evaluate(data, { now: NOW, stepBudget: budget });
    const once = budget.used;
    policy.evaluate(data, { now: NOW, stepBudget: budget });
    expect(budget.used).toBe(2 * once);
    const small = new StepBudget(once + 1, once);
    expect(policy.evaluate(data, { now: NOW, stepBudget: small }).errorCode).toBe('budget_exceeded');
    expect(small.used).toBe(small.limit);
    expect(small.remaining).toBe(0);
  });

  it('refuses a budget that is not a non-negative integer', () => {
    expect(() => new StepBudget(-1)).toThrow(RangeError);
    expect(() => new StepBudget(1.5)).toThrow(RangeError);
    expect(() => new StepBudget(10, -1)).toThrow(RangeError);
    const policy = compile(POLICY);
    for (const opts of [{}, { trace: true }, { traceTree: true }]) {
      expect(() => policy.evaluate(data, { ...opts, stepBudget: -1 })).toThrow(RangeError);
      expect(() => policy.evaluate(data, { ...opts, stepBudget: 1.5 })).toThrow(RangeError);
    }
  });

  it('advances a plain {limit, used} budget; without one, every evaluation starts from the full default', () => {
    const policy = compile(POLICY);
    const plain = { limit: 1000, used: 7 };
    policy.evaluate(data, { now: NOW, stepBudget: plain });
    expect(plain.used).toBeGreaterThan(7);
    // Without a budget option each evaluation starts from the full default: the same answer twice.
    same(policy.evaluate(data, { now: NOW }), policy.evaluate(data, { now: NOW }));
    // JavaScript callers may pass null for the options.
    same(policy.evaluate(data, null as unknown as undefined), policy.evaluate(data));
  });
});

describe('ordinary policies are unaffected', () => {
  it('every corpus case (and its data variants) gives the same result with the default budget as without a limit, far inside it', () => {
    let most = 0;
    for (const c of compilable) {
      const policy = compile(c.rule);
      const now = new Date(c.now ?? '2025-06-15T12:00:00Z');
      for (const data of variants(c.data ?? {}).slice(0, 8)) {
        const budget = new StepBudget(Number.MAX_SAFE_INTEGER);
        const unlimited = policy.evaluate(data, { now, stepBudget: budget });
        same(policy.evaluate(data, { now }), unlimited);
        same(policy.evaluate(data, { now, trace: true }), policy.evaluate(data, { now, trace: true, stepBudget: Number.MAX_SAFE_INTEGER }));
        most = Math.max(most, budget.used);
      }
    }
    expect(most).toBeGreaterThan(0);
    expect(most * 100).toBeLessThan(DEFAULT_TRACED_STEP_BUDGET);
  }, 60_000);
});
