/** Decision-table cells: parsed by the language's grammar with the column's value as the implicit left side. */

import { describe, expect, it } from 'vitest';
import { checkCell, checkColumnPath, compileCellTable, CellTableError, StepBudget } from '../src/index.js';

describe('checkCell', () => {
  it.each([
    '>= 18',
    'is at least 18',
    'is not greater than 5',
    '!= "x"',
    'is in ["NL", "BE"]',
    'is not in ["NL", "BE"]',
    'contains "glass"',
    'does not contain "glass"',
    'has the format "email"',
    'does not match pattern "^[A-Z]{2}$"',
    'is within 30 days',
    'is older than 18 years',
    'is later than date(2024-01-31)',
    'is empty',
    'is not a valid uuid',
    '>= 18 if present',
    '<= applicant.limit',
    '<= the __limit__ of the **applicant**',
    '"gold"',
    '10',
    '-2.5',
    'true',
    '2024-01-31',
    '["NL", "BE"]',
    '>= 18 # adults only',
    '-',
    '',
    '  -  ',
  ])('`%s` parses', (cell) => {
    expect(checkCell(cell)).toBeNull();
  });

  it.each([
    ['>=', { detail: '`>=` needs a value or a path after it', line: 1, column: 3, offset: 2, length: 0 }],
    ['is in "NL"', { detail: '`is in` needs a list or a path, not a string', line: 1, column: 7, offset: 6, length: 4 }],
    [
      'is gold',
      {
        detail: 'unexpected word `gold`: string values must be quoted, e.g. "gold"',
        line: 1,
        column: 4,
        offset: 3,
        length: 4,
        help: 'write "gold"',
      },
    ],
    ['has the format "postcode"', { line: 1, column: 16, offset: 15 }],
    ['is later than 2023-02-29', { detail: '`2023-02-29` is not a real calendar date', column: 15 }],
    ['matches pattern "(?=x)"', { column: 17 }],
    ['is within 1.5 years', { column: 11 }],
    ['is in its.x', { detail: '`its` can only be used inside the parentheses of `any` or `all`', column: 7 }],
    ['>= 1 and <= 5', { detail: 'unexpected `<=`', column: 10 }],
    ['>= 1 -> a. if cell.value >= 2', { column: 1, offset: 0 }],
    ['>= 1 and cell.value <= 5', { column: 1, offset: 0 }],
    ['"unterminated', { detail: 'unterminated string: add the closing `"` on the same line', column: 1 }],
  ])('`%s` is refused at its position', (cell, want) => {
    expect(checkCell(cell)).toMatchObject(want);
  });

  it('positions on later lines keep their columns', () => {
    expect(checkCell('is in\n  "NL"')).toMatchObject({ line: 2, column: 3 });
  });
});

describe('checkColumnPath', () => {
  it.each(['applicant.age', 'the __age__ of the **applicant**', '__date of birth__ of the **applicant**', '  order.total  '])(
    '`%s` parses',
    (p) => {
      expect(checkColumnPath(p)).toBeNull();
    },
  );
  it.each(['', 'age', 'a.b >= 3', 'its.x', '__age__'])('`%s` is refused', (p) => {
    expect(checkColumnPath(p)).not.toBeNull();
  });
});

describe('compileCellTable', () => {
  it('lists every cell and column that does not parse, by row and column', () => {
    try {
      compileCellTable(
        ['a.b', 'c'],
        [
          ['>= 1', 'is in 5'],
          ['is x', '-'],
        ],
      );
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CellTableError);
      expect((err as CellTableError).problems.map((p) => [p.row, p.column])).toEqual([
        [null, 1],
        [0, 1],
        [1, 0],
      ]);
    }
  });

  it('evaluates rows with the language semantics, tracing each evaluated cell', () => {
    const t = compileCellTable(
      ['applicant.age', 'applicant.country'],
      [
        ['>= 18', '["NL", "BE"]'],
        ['-', '-'],
      ],
    );
    const budget = new StepBudget(100);
    const run = t.begin({ applicant: { age: '21', country: 'nl' } }, { stepBudget: budget, trace: true });
    expect([run.matches(0), run.matches(1)]).toEqual([true, true]);
    run.end();
    expect(budget.used).toBe(2);
    expect(run.cells.map((c) => c.line)).toEqual([
      '$.applicant.age = "21": is greater than or equal to 18 -> true',
      '$.applicant.country = "nl": is in ["NL","BE"] -> true',
    ]);
  });

  it('an absent value is the language error, and later rows answer false', () => {
    const t = compileCellTable(['applicant.age'], [['>= 18'], ['-']]);
    const run = t.begin({ applicant: {} }, { stepBudget: new StepBudget(100) });
    expect(run.matches(0)).toBe(false);
    expect(run.error).toEqual({ code: 'missing_property', message: 'Missing property: applicant.age' });
    expect(run.matches(1)).toBe(false);
  });

  it('the size of compared values counts against the budget', () => {
    const t = compileCellTable(['x.list'], [['contains 3']]);
    const budget = new StepBudget(10);
    const run = t.begin({ x: { list: Array.from({ length: 20 }, (_, i) => i) } }, { stepBudget: budget });
    expect(run.matches(0)).toBe(false);
    expect(run.error?.code).toBe('budget_exceeded');
  });
});

describe('repeated cells', () => {
  it('answer from the memo within an evaluation, with the same result and the same steps as evaluating each', () => {
    const t = compileCellTable(
      ['x.v', 'x.w'],
      [
        ['"a"', '>= 2'],
        ['"a"', '>= 3'],
        ['"b"', '-'],
        ['"a"', '>= 2'],
      ],
    );
    for (const trace of [false, true]) {
      const budget = new StepBudget(100);
      const run = t.begin({ x: { v: 'A', w: 2 } }, { stepBudget: budget, trace });
      expect([0, 1, 2, 3].map((r) => run.matches(r))).toEqual([true, false, false, true]);
      run.end();
      expect(budget.used).toBe(7);
    }
  });
});
