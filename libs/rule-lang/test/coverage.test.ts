/** Coverage of a policy by its runs: conditions both ways, quantifiers holding and failing, references followed, missing data apart. */

import { describe, expect, it } from 'vitest';
import { compile, PolicyCoverage } from '../src/index.js';

const POLICY = `A **o** is fine if any of o.items satisfies (its.p == 1 and its.q > 2) and $more.
more: if the __total__ of the **o** is at least 10 -> more.`;

function covered(cases: unknown[]) {
  const coverage = new PolicyCoverage(compile(POLICY), POLICY);
  const results = cases.map((data) => coverage.run(data));
  return { results, report: coverage.report() };
}

describe('policy coverage', () => {
  it('counts each condition both ways, and says where the uncovered ones are', () => {
    const { results, report } = covered([{ o: { items: [{ p: 1, q: 3 }], total: 20 } }]);
    expect(results[0]).toMatchObject({ result: true });
    expect(report.summary).toEqual({
      conditions: { total: 3, covered: 0 },
      quantifiers: { total: 1, covered: 0 },
      references: { total: 1, covered: 1 },
      percent: 60,
    });
    expect(report.text).toBe('conditions 0/3 both ways, quantifiers 0/1 both ways, references 1/1 followed, 60 %');
    expect(report.uncovered.map((u) => [u.kind, u.text, u.line, u.column, u.seen])).toEqual([
      ['quantifier', 'any of o.items satisfies (its.p == 1 and its.q > 2)', 1, 20, { true: 1, false: 0, missing: 0 }],
      ['condition', 'its.p == 1', 1, 46, { true: 1, false: 0, missing: 0 }],
      ['condition', 'its.q > 2', 1, 61, { true: 1, false: 0, missing: 0 }],
      ['condition', 'the __total__ of the **o** is at least 10', 2, 10, { true: 1, false: 0, missing: 0 }],
    ]);
  });

  it('reaches 100 % with a case for each way, and gives the same answers as a plain run', () => {
    const cases = [{ o: { items: [{ p: 1, q: 3 }], total: 20 } }, { o: { items: [{ p: 2, q: 1 }], total: 5 } }];
    const { results, report } = covered(cases);
    expect(report.summary.percent).toBe(100);
    expect(report.uncovered).toEqual([]);
    const policy = compile(POLICY);
    expect(results).toEqual(cases.map((data) => policy.evaluate(data)));
  });

  it('counts a run stopped by missing data apart: it covers neither way', () => {
    const { results, report } = covered([{ o: { items: [] } }]);
    expect(results[0]).toMatchObject({ errorCode: 'missing_property' });
    const total = report.uncovered.find((u) => u.text.startsWith('the __total__'));
    expect(total?.seen).toEqual({ true: 0, false: 0, missing: 1 });
    // An empty array: the quantifier fails, its body is never evaluated.
    expect(report.uncovered.find((u) => u.kind === 'quantifier')?.seen).toEqual({ true: 0, false: 1, missing: 0 });
    expect(report.uncovered.find((u) => u.text === 'its.p == 1')?.seen).toEqual({ true: 0, false: 0, missing: 0 });
  });

  it('says 0 runs and 0 % for a policy never run', () => {
    const coverage = new PolicyCoverage(compile('A **x** is ok if the __a__ of the **x** is at least 1.'), '');
    expect(coverage.report()).toMatchObject({ runs: 0, summary: { percent: 0 } });
  });
});
