/**
 * The generated reasons evaluator (src/compile/codegen-reasons.ts) against the reasons closures
 * (src/reasons/compile-reasons.ts) it replaces: the very same answer — result, outcomes, error and
 * code, the reasons' entries (every key, in order) and sentence — and the same steps taken from a
 * shared budget, on the corpus (with data variants that remove and retype values, so every failure
 * falls back and every kind of entry is built), on the metamorphic fuzzer's policies and data, and
 * in focused cases (JSON keys found among candidates, `its` paths in nested any/all, budgets).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PolicyEvaluators } from '../src/evaluate/evaluate.js';
import { compile, StepBudget, type CompiledPolicy, type EvaluateOptions, type EvaluationResult } from '../src/index.js';
import { compilable, compileWithoutCodegen, same, variants } from './support/evaluators.js';
import { caseArb } from './support/metamorphic/run.js';
import { renderData, renderPolicy } from './support/metamorphic/render.js';

const NOW = Date.UTC(2025, 5, 15, 12);

const evaluatorsOf = (p: CompiledPolicy): PolicyEvaluators => (p as unknown as { evaluators: PolicyEvaluators }).evaluators;

/** The policy compiled twice: reasons on generated code, and on the closures only. */
function both(text: string): { generated: CompiledPolicy; closures: CompiledPolicy } {
  const generated = compile(text);
  const closures = compile(text);
  (evaluatorsOf(closures) as { generatedReasons: PolicyEvaluators['generatedReasons'] }).generatedReasons = () => null;
  expect(evaluatorsOf(generated).generatedReasons()).not.toBeNull();
  return { generated, closures };
}

/** Both answers with reasons, and alongside a trace, with their own budget and a shared one. */
function agree(generated: CompiledPolicy, closures: CompiledPolicy, data: unknown, now: number = NOW): EvaluationResult {
  const options: EvaluateOptions[] = [
    { reasons: true, now },
    { reasons: true, trace: true, now },
    { reasons: true, now, stepBudget: 3 },
  ];
  let first: EvaluationResult | undefined;
  for (const o of options) {
    const a = generated.evaluate(data, o);
    same(a, closures.evaluate(data, o));
    first ??= a;
  }
  // A shared budget: the same steps taken, whether the run finished, failed or ran out.
  for (const limit of [1_000, 4]) {
    const sa = new StepBudget(limit);
    const sb = new StepBudget(limit);
    same(generated.evaluate(data, { reasons: true, now, stepBudget: sa }), closures.evaluate(data, { reasons: true, now, stepBudget: sb }));
    expect(sa.used).toBe(sb.used);
  }
  return first!;
}

describe('generated reasons agree with the closures on the corpus', () => {
  it.each(compilable.map((c, i) => [i, c.note, c] as const))('#%i %s', (_i, _note, c) => {
    const { generated, closures } = both(c.rule);
    const now = Date.parse(c.now ?? '2025-06-15T12:00:00Z');
    for (const data of variants(c.data ?? {})) agree(generated, closures, data, now);
  });
});

describe('generated reasons agree with the closures on the metamorphic fuzzer', () => {
  it('on generated policies, writings and data', () => {
    let cases = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        const text = renderPolicy(c.policy, c.style);
        const { generated, closures } = both(text);
        agree(generated, closures, renderData(c.data, c.style), c.now);
        agree(generated, closures, renderData(c.data, c.alt), c.now);
        cases++;
      }),
      { seed: 20261202, numRuns: 150 },
    );
    expect(cases).toBeGreaterThanOrEqual(150);
  }, 120_000);
});

describe('focused cases', () => {
  const text = [
    'A **applicant** is eligible',
    '  if any of the __past offences__ of the **applicant** satisfies',
    '    (all of its __fine items__ satisfies (its __unit price__ is at least 3 or its.kind == "x"))',
    '  or the __date of birth__ of the **applicant** is earlier than 2000-01-01 if present',
    '  or the number of __past offences__ of the **applicant** is greater than 5.',
  ].join('\n');

  it('names the JSON keys found among the candidates, and each element of nested any/all', () => {
    const { generated, closures } = both(text);
    const data = {
      applicant: {
        past_offences: [
          { fineItems: [{ unit_price: 1, kind: 'y' }] },
          {
            fine_items: [
              { unitPrice: 4, kind: 'y' },
              { unit_price: 5, kind: 'z' },
            ],
          },
        ],
        dateOfBirth: null,
      },
    };
    const r = agree(generated, closures, data);
    expect(r.result).toBe(true);
    expect(r.reasons!.because[0]).toMatchObject({ kind: 'any', path: 'applicant.past_offences', element: 1 });
    expect(r.reasons!.because[0].because![0]).toMatchObject({ kind: 'all', path: 'applicant.past_offences[1].fine_items', count: 2 });
    const failing = { applicant: { pastOffences: [{ fineItems: [{ unitPrice: 1, kind: 'y' }] }], date_of_birth: '2001-02-03' } };
    expect(agree(generated, closures, failing).reasons!.sentence).toMatch(
      /^eligible is false because none of the 1 element of past offences/,
    );
    // Missing data: the closures write the failure entry.
    expect(agree(generated, closures, { applicant: { pastOffences: [{}] } }).errorCode).toBe('missing_property');
  });

  it('writes the path as written when an optional lookup stops, and a long path with a candidate key deep down', () => {
    const steps = Array.from({ length: 18 }, (_, i) => `s${i}`);
    const long = `if ${steps.join('.')}.the_key == 1 and x.some_value is empty if present -> ok.`;
    const { generated, closures } = both(long);
    let deep: Record<string, unknown> = { theKey: 1 };
    for (const s of [...steps].reverse().slice(0, -1)) deep = { [s]: deep };
    agree(generated, closures, { [steps[0]]: deep, x: {} });
    agree(generated, closures, { [steps[0]]: deep, x: { someValue: [] } });
    agree(generated, closures, { [steps[0]]: deep });
  });

  it('writes every kind of value in the sentence as the closures do', () => {
    const { generated, closures } = both('if x.a == "b" or x.a > 100000 or x.a contains "q" or x.a is empty -> ok.');
    const values = [
      -0,
      0.1 + 0.2,
      1e21,
      -1e-7,
      2 ** 53,
      'say "hi"',
      'a\\b',
      '\ud800',
      'a😀b',
      'x'.repeat(300),
      '',
      true,
      null,
      [1, 'a'],
      { k: 1 },
    ];
    for (const a of values) agree(generated, closures, { x: { a } });
  });

  it('uses the closures where code generation is unavailable', () => {
    const p = compileWithoutCodegen(text);
    expect(evaluatorsOf(p).generatedReasons()).toBeNull();
    expect(p.evaluate({ applicant: { pastOffences: [] } }, { reasons: true, now: NOW }).reasons!.sentence).toBe(
      'eligible is true because the date of birth of the applicant is absent, and the condition is optional',
    );
  });
});
