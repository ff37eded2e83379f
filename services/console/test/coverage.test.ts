import { describe, expect, it } from 'vitest';
import type { UncoveredCondition, UncoveredItem } from '@arbiter/contracts';
import { coverageSummaryText, uncoveredConditionText, uncoveredConditions, uncoveredItemText, uncoveredRows } from '../src/lib/coverage.js';
import { coverageDiagnostics } from '../src/editor/rule-extensions.js';

const RULE =
  'A **applicant** is adult if the __age__ of the **applicant** is at least 18\n  and the __country__ of the **applicant** is "NL".';
const condition = (over: Partial<UncoveredCondition> = {}): UncoveredCondition => ({
  kind: 'condition',
  text: 'the __age__ of the **applicant** is at least 18',
  line: 1,
  column: 29,
  seen: { true: 2, false: 0, missing: 0 },
  ...over,
});

describe('coverageSummaryText', () => {
  it('says the counted kinds and the percent, leaving out kinds with nothing to count', () => {
    expect(
      coverageSummaryText({
        conditions: { total: 4, covered: 3 },
        quantifiers: { total: 0, covered: 0 },
        references: { total: 1, covered: 1 },
        percent: 80,
      }),
    ).toBe('conditions 3/4 both ways, references 1/1 followed, 80 %');
    expect(coverageSummaryText({ rows: { total: 10, covered: 9 }, edges: { total: 4, covered: 4 }, percent: 85 })).toBe(
      'rows 9/10, edges 4/4, 85 %',
    );
    expect(coverageSummaryText({ percent: 100 })).toBe('100 %');
  });
});

describe('uncoveredConditionText', () => {
  it('says which way a condition was never seen', () => {
    expect(uncoveredConditionText(condition())).toBe('Not covered: the saved tests saw this condition true (2 times) but never false.');
    expect(uncoveredConditionText(condition({ seen: { true: 0, false: 1, missing: 3 } }))).toBe(
      'Not covered: the saved tests saw this condition false (once) but never true (data missing 3 times).',
    );
  });
  it('says holding and failing for a quantifier, never evaluated, and never followed', () => {
    expect(uncoveredConditionText(condition({ kind: 'quantifier', seen: { true: 0, false: 2, missing: 0 } }))).toBe(
      'Not covered: the saved tests saw this quantifier failing (2 times) but never holding.',
    );
    expect(uncoveredConditionText(condition({ seen: { true: 0, false: 0, missing: 0 } }))).toBe(
      'Not covered: no saved test evaluated this condition.',
    );
    expect(uncoveredConditionText(condition({ kind: 'reference' }))).toBe('Not covered: no saved test followed this reference.');
  });
});

describe('the uncovered list', () => {
  const items: UncoveredItem[] = [
    condition(),
    { kind: 'row', nodeId: 'tier', row: 2, text: 'age >= 18' },
    { kind: 'row', nodeId: 'other', row: 1, text: '-' },
    { kind: 'edge', from: 'tier', to: 'no', text: 'tier → no (default)' },
  ];
  it('says each item in a line', () => {
    expect(items.map(uncoveredItemText)).toEqual([
      'Line 1, column 29: the __age__ of the **applicant** is at least 18 — the saved tests saw this condition true (2 times) but never false.',
      'Table tier, rule 2: age >= 18 — no test matched it',
      'Table other, rule 1: - — no test matched it',
      'Edge tier → no (default) — never taken',
    ]);
  });
  it('picks the conditions for the rule editor and a table’s rows (from 0) for its grid', () => {
    expect(uncoveredConditions(items)).toEqual([items[0]]);
    expect([...uncoveredRows(items, 'tier')]).toEqual([[1, 'Not covered: no saved test matched rule 2 (age >= 18)']]);
    expect(uncoveredRows(items, 'nowhere').size).toBe(0);
  });
});

describe('coverageDiagnostics', () => {
  it('underlines each uncovered condition over its text, in the coverage style, with which way it was never seen', () => {
    const second = condition({
      text: 'the __country__ of the **applicant** is "NL"',
      line: 2,
      column: 7,
      seen: { true: 0, false: 1, missing: 0 },
    });
    const [a, b, ...rest] = coverageDiagnostics(RULE, [condition(), second]);
    expect(rest).toEqual([]);
    expect(RULE.slice(a!.from, a!.to)).toBe('the __age__ of the **applicant** is at least 18');
    expect(RULE.slice(b!.from, b!.to)).toBe('the __country__ of the **applicant** is "NL"');
    expect(a).toMatchObject({ severity: 'info', markClass: 'cm-uncovered', source: 'coverage' });
    expect(a!.message).toContain('never false');
    expect(b!.message).toContain('never true');
  });
  it('stays inside the text when the place is past its end', () => {
    const [d] = coverageDiagnostics('short', [condition({ line: 1, column: 3 })]);
    expect([d!.from, d!.to]).toEqual([2, 5]);
  });
});
