/** What the console marks of a run's reasons: the deciding conditions in the rule editor, a table's deciding rows and cells. */
import type { Reasons } from '@arbiter/contracts';
import { evaluate } from '@arbiter/rule-lang';
import { describe, expect, it } from 'vitest';
import { reasonDecorations } from '../src/editor/rule-extensions.js';
import { nodeSentences, reasonMarks, tableReasonMarks } from '../src/lib/reasons.js';

const RULE = `A **driver** gets a licence if
  the __age__ of the **driver** is at least 17
  and the **driver** passes the eyesight test.
A **driver** passes the eyesight test if the __vision score__ of the **driver** is greater than 0.5.`;

describe('reasonMarks', () => {
  it('marks every deciding condition, under references too, held or not, at its place and text', () => {
    const reasons = evaluate(RULE, { driver: { age: 18, visionScore: 0.3 } }, { reasons: true }).reasons as Reasons;
    const marks = reasonMarks(reasons);
    expect(marks).toEqual([{ line: 4, column: 42, text: 'the __vision score__ of the **driver** is greater than 0.5', holds: false }]);
    const ok = reasonMarks(evaluate(RULE, { driver: { age: 18, visionScore: 0.8 } }, { reasons: true }).reasons as Reasons);
    expect(ok.map((m) => [m.line, m.holds])).toEqual([
      [2, true],
      [4, true],
    ]);
    // Each mark covers its text in the rule.
    const set = reasonDecorations(RULE, ok);
    const covered: string[] = [];
    set.between(0, RULE.length, (from, to, d) => {
      covered.push(`${RULE.slice(from, to)} ${d.spec.class as string}`);
    });
    expect(covered).toEqual([
      'the __age__ of the **driver** is at least 17 cm-reason cm-reason-true',
      'the __vision score__ of the **driver** is greater than 0.5 cm-reason cm-reason-true',
    ]);
  });

  it('marks missing data as not holding, and nothing without reasons', () => {
    const marks = reasonMarks(evaluate(RULE, { driver: {} }, { reasons: true }).reasons as Reasons);
    expect(marks.length).toBeGreaterThan(0);
    expect(marks.every((m) => !m.holds)).toBe(true);
    expect(reasonMarks(undefined)).toEqual([]);
  });
});

describe('tableReasonMarks and nodeSentences', () => {
  it("reads a table node's deciding rows and cells (from 1 in reasons, from 0 in the grid)", () => {
    const reasons: Reasons = {
      result: true,
      sentence: 'row 2 matched: >= 18 (20)',
      because: [
        {
          kind: 'table',
          rule: 'tier',
          text: 'row 2',
          holds: true,
          row: 2,
          line: 2,
          column: 1,
          because: [{ kind: 'condition', rule: 'tier', text: '>= 18', holds: true, path: 'age', value: 20, line: 2, column: 1 }],
        },
      ],
    };
    const marks = tableReasonMarks(reasons);
    expect([...marks.rows]).toEqual([[1, true]]);
    expect([...marks.cells]).toEqual([['1:0', true]]);
    expect(nodeSentences([{ nodeId: 'a' }, { nodeId: 'tier', reasons }])).toEqual([{ nodeId: 'tier', sentence: reasons.sentence }]);
  });
});
