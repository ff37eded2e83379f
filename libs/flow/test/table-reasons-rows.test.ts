/**
 * A table node's reasons without a trace come from an untraced scan plus a traced run of the rows
 * they show (src/table/reasons.ts `reasonRows`); with a trace, from the traced run of every row.
 * Both must give the very same reasons (same JSON), and reasons alone must take exactly the steps
 * of an evaluation without them — on random tables of every hit policy and random data, missing
 * values (the fallback to the traced run) and an exhausted budget included.
 */

import type { FlowTableNode } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { compileTable, evaluateTable } from '../src/index.js';

const CELLS = [
  ['-', '>= 18', '< 40', '> 30', '65', 'is in [16, 40, 70]', '>= 18 if present'],
  ['-', '"NL"', 'is in ["NL", "BE"]', 'is not in ["US"]', 'is empty', '"DE" if present'],
  ['-', '>= 500', '< 700', 'is in [300, 800]', '> 1 if present'],
];
const POLICIES = ['first', 'unique', 'any', 'rule order', 'collect'] as const;
const VALUES: unknown[][] = [
  [16, 40, 70, null, '40', undefined],
  ['NL', 'BE', 'US', null, 3, undefined],
  [300, 650, 800, null, undefined],
];

/** A small deterministic PRNG (mulberry32): every run checks the same cases. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('table reasons without a trace agree with the traced run', () => {
  it('on random tables of every hit policy and random data', () => {
    const rnd = prng(20261202);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    let runs = 0;
    for (let n = 0; n < 400; n++) {
      const node: FlowTableNode = {
        type: 'table',
        hitPolicy: pick(POLICIES),
        inputs: [
          { name: 'age', path: 'applicant.age' },
          { name: 'country', path: 'applicant.country' },
          { name: 'score', path: 'applicant.score' },
        ],
        outputs: [{ name: 'tier' }],
        rules: Array.from({ length: 1 + Math.floor(rnd() * 30) }, () => ({
          when: CELLS.map((c) => pick(c)),
          then: { tier: pick(['a', 'b']) },
        })),
      };
      const compiled = compileTable('t', node);
      if (!compiled.ok) throw new Error(JSON.stringify(compiled));
      const applicant: Record<string, unknown> = {};
      ['age', 'country', 'score'].forEach((k, i) => {
        const v = pick(VALUES[i]);
        if (v !== undefined) applicant[k] = v;
      });
      const data = rnd() < 0.1 ? {} : { applicant };
      for (const limit of [1_000_000, 3]) {
        const plainBudget = { limit, used: 0 };
        const plain = evaluateTable('t', compiled.table, data, plainBudget, { trace: false });
        const budget = { limit, used: 0 };
        const alone = evaluateTable('t', compiled.table, data, budget, { trace: false, reasons: true });
        const traced = evaluateTable('t', compiled.table, data, { limit, used: 0 }, { trace: true, reasons: true });
        expect(JSON.stringify(alone.reasons)).toBe(JSON.stringify(traced.reasons));
        expect(alone.reasons).toStrictEqual(traced.reasons);
        // Nothing else changes, the steps taken included.
        const { reasons: _reasons, ...rest } = alone;
        expect(rest).toStrictEqual(plain);
        expect(budget.used).toBe(plainBudget.used);
        runs++;
      }
    }
    expect(runs).toBe(800);
  });
});
