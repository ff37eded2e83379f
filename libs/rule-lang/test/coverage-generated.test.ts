/**
 * The generated coverage evaluator (src/compile/codegen.ts, `generateCoveredEvaluator`) against the
 * coverage closures it replaces (`counted` in src/compile/conditions.ts): for every policy and data,
 * the same result and the very same counters — true, false and stopped by missing data for each
 * condition — including missing data inside groups, quantifiers and referenced rules, any/all over
 * empty arrays and non-arrays, `if present`, and runs stopped by the step budget. Policies come
 * from the metamorphic fuzzer's generator (support/metamorphic, as `npm run fuzz` uses it) and
 * from the corpus.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PolicyEvaluators } from '../src/evaluate/evaluate.js';
import { StepBudget, compile, type CompiledPolicy, type EvaluateOptions } from '../src/index.js';
import { compilable, compileWithoutCodegen, same, variants } from './support/evaluators.js';
import { caseArb } from './support/metamorphic/run.js';
import { renderData, renderPolicy } from './support/metamorphic/render.js';

const SEED = Number(process.env.RULE_FUZZ_SEED ?? 20261202);
const RUNS = Number(process.env.RULE_COVERAGE_RUNS ?? 300);

const evaluatorsOf = (p: CompiledPolicy): PolicyEvaluators => (p as unknown as { evaluators: PolicyEvaluators }).evaluators;
const coverageGenerated = (p: CompiledPolicy): boolean => evaluatorsOf(p).covered() !== null;

type Options = Omit<EvaluateOptions, 'trace' | 'traceTree'>;

/**
 * Runs every datum through both policies' coverage (each with its own counters, accumulated over
 * all the data, and each datum also with a few step budgets); expects the same results and counters.
 * Returns how many runs ended in missing data and in the budget, so callers can see both happened.
 */
function agree(
  generated: CompiledPolicy,
  closures: CompiledPolicy,
  data: readonly unknown[],
  now: number,
): { missing: number; budget: number } {
  expect(coverageGenerated(generated)).toBe(true);
  expect(coverageGenerated(closures)).toBe(false);
  const a = new Uint32Array(generated.conditions.length * 3);
  const b = new Uint32Array(closures.conditions.length * 3);
  let missing = 0;
  let budget = 0;
  const run = (datum: unknown, options: Options): void => {
    const x = generated.evaluateCovered(datum, a, options);
    const y = closures.evaluateCovered(datum, b, options);
    same(x, y);
    expect(Array.from(a)).toEqual(Array.from(b));
    if (x.errorCode === 'budget_exceeded') budget++;
    else if (x.errorCode !== undefined) missing++;
  };
  for (const datum of data) {
    run(datum, { now });
    for (const steps of [0, 1, 2, 3, 5, 8]) run(datum, { now, stepBudget: steps });
    // A shared budget, partly used, and its `used` written back the same.
    const sa = new StepBudget(6);
    const sb = new StepBudget(6);
    sa.used = sb.used = 2;
    same(generated.evaluateCovered(datum, a, { now, stepBudget: sa }), closures.evaluateCovered(datum, b, { now, stepBudget: sb }));
    expect(sa.used).toBe(sb.used);
    expect(Array.from(a)).toEqual(Array.from(b));
  }
  return { missing, budget };
}

describe('generated coverage counts exactly as the coverage closures', () => {
  it(`on ${RUNS} generated policies and data (the fuzzer's generator), with data variants and budgets`, () => {
    let missing = 0;
    let budget = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        const text = renderPolicy(c.policy, c.style);
        const data = renderData(c.data, c.style);
        const seen = agree(compile(text), compileWithoutCodegen(text), variants(data).slice(0, 12), c.now);
        missing += seen.missing;
        budget += seen.budget;
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The generator reaches both kinds of stopped run.
    expect(missing).toBeGreaterThan(0);
    expect(budget).toBeGreaterThan(0);
  }, 120_000);

  it('on every corpus policy with its data and variants', () => {
    for (const c of compilable) {
      const now = Date.parse(c.now ?? '2025-06-15T12:00:00Z');
      agree(compile(c.rule), compileWithoutCodegen(c.rule), variants(c.data ?? {}).slice(0, 10), now);
    }
  }, 120_000);

  const NOW = Date.parse('2025-06-15T12:00:00Z');
  const counters = (text: string, data: readonly unknown[], options: Options = {}): number[] => {
    const generated = compile(text);
    const closures = compileWithoutCodegen(text);
    agree(generated, closures, data, NOW);
    const counts = new Uint32Array(generated.conditions.length * 3);
    for (const d of data) generated.evaluateCovered(d, counts, { now: NOW, ...options });
    return Array.from(counts);
  };

  it('counts missing data once for every enclosing condition it passes, across a rule reference and a quantifier', () => {
    const text = `A **o** is ok if (any of o.items satisfies (its.p == 1 and $deep)) or o.a == 1.
deep: if o.b.c == 2 -> deep.`;
    // Conditions in order: the group, the any/all, its.p == 1, $deep, o.a == 1, o.b.c == 2.
    expect(counters(text, [{ o: { items: [{ p: 1 }], a: 1 } }])).toEqual([0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1]);
  });

  it('counts an any/all over an empty array, over a non-array and skipped by `if present`', () => {
    const text = 'A **o** is ok if any of o.items satisfies (its.p == 1) if present.';
    expect(counters(text, [{ o: { items: [] } }, { o: { items: 3 } }, { o: {} }, { o: { items: [{ p: 1 }, { p: 2 }] } }])).toEqual([
      2, 2, 0, 1, 1, 0,
    ]);
  });

  it('counts nothing for the condition whose step exceeded the budget', () => {
    const text = 'A **o** is ok if o.a == 1 and o.b == 2.';
    expect(counters(text, [{ o: { a: 1, b: 2 } }], { stepBudget: 1 })).toEqual([1, 0, 0, 0, 0, 0]);
  });
});
