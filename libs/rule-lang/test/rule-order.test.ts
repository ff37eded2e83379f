/**
 * The text order of rules affects nothing observable (LANGUAGE.md §3.5): not the result, not the
 * outcomes, not which error is reported, whichever evaluator runs; every rule is evaluated even
 * when it is referenced only inside an any/all that never ran it (§8).
 */

import { describe, expect, it } from 'vitest';
import { compile, type EvaluationResult } from '../src/index.js';
import { compileWithoutCodegen } from './support/evaluators.js';

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

/** What must not depend on the order: the result, the outcomes as a map, the error. */
const observable = (r: EvaluationResult) => ({
  result: r.result,
  outcomes: Object.fromEntries(Object.entries(r.outcomes).sort(([a], [b]) => (a < b ? -1 : 1))),
  error: r.error ?? null,
});

const POLICIES: Array<{ rules: string[]; data: unknown[] }> = [
  {
    rules: [
      'A **x** is ok if any of the __l__ of the **x** where (its > 1 and $a) and $c.',
      'a: if x.p > 1 -> aa.',
      'b: if x.q > 1 -> bb.',
      'c: if x.r > 1 or $b -> cc.',
    ],
    data: [
      { x: { l: [] } },
      { x: { l: [], q: 2 } },
      { x: { l: 'none', p: 2, q: 2, r: 0 } },
      { x: { l: [2], p: 0, q: 0, r: 5 } },
      { x: {} },
    ],
  },
  {
    // Two rules referenced only inside any/all that never ran them: each is evaluated right after its
    // any/all, so which error comes first is the conditions' order, never the rules'.
    rules: ['if any x.l where ($a) and any x.m where ($b) -> ok.', 'a: if x.p > 1 -> aa.', 'b: if x.q > 1 -> bb.'],
    data: [{ x: { l: [], m: [] } }, { x: { l: [], m: [], q: 2 } }, { x: { l: 1, m: null, p: 2, q: 0 } }],
  },
  {
    rules: [
      'if all x.l where (any its.m where ($deep)) if present and $side -> ok.',
      'deep: if x.d >= 1 -> deep one.',
      'side: if x.s is not empty and $deep -> side one.',
    ],
    data: [{ x: {} }, { x: { d: 1 } }, { x: { l: [{ m: [] }], d: 0, s: 'y' } }, { x: { l: [{ m: [1] }], d: 2 } }],
  },
];

describe('rule order', () => {
  it.each(POLICIES.map((p, i) => [i, p] as const))('policy %i answers the same in every order of its rules', (_i, { rules, data }) => {
    const orders = permutations(rules).map((r) => r.join('\n'));
    for (const d of data) {
      const answers = orders.flatMap((text) =>
        [compile(text), compileWithoutCodegen(text)].flatMap((p) => [
          observable(p.evaluate(d)),
          observable(p.evaluate(d, { trace: true })),
          observable(p.evaluate(d, { traceTree: true })),
        ]),
      );
      for (const a of answers) expect(a, JSON.stringify(d)).toEqual(answers[0]);
    }
  });
});
