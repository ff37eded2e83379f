/**
 * The untraced scan of a decision table (`CompiledCellTable.scan`) tests the common cell forms
 * inline (cells/fast-cells.ts). Differential tests: each specialised form, and a few generic ones,
 * answers over a spread of values exactly what the rule language answers for the same comparison
 * as a policy, and what the cell's generic closure (`begin`/`matches`, with and without a trace)
 * answers: the same match, the same engine error, the same steps.
 */

import { describe, expect, it } from 'vitest';
import { specialiseCell } from '../src/cells/fast-cells.js';
import { parseCell } from '../src/cells/parse-cell.js';
import { compile, compileCellTable, StepBudget } from '../src/index.js';

/** Cells whose specialised form the scan tests inline; `rule` is the comparison a policy writes when the cell implies its operator. */
const SPECIALISED: { cell: string; rule?: string }[] = [
  { cell: '>= 18' },
  { cell: '> 18' },
  { cell: '< 18' },
  { cell: '<= 18' },
  { cell: 'is at least 18' },
  { cell: 'is not greater than 18' },
  { cell: 'is not less than or equal to -2.5' },
  { cell: '>= "18"' },
  { cell: '< "-0.5"' },
  { cell: '== 18' },
  { cell: '18', rule: 'is 18' },
  { cell: '"18"', rule: 'is "18"' },
  { cell: 'is not 0' },
  { cell: '"NL"', rule: 'is "NL"' },
  { cell: 'is "nl"' },
  { cell: '!= "NL"' },
  { cell: 'is "İstanbul"' },
  { cell: 'is "Straße"' },
  { cell: 'is in ["NL", "BE"]' },
  { cell: '["NL", "be"]', rule: 'is in ["NL", "be"]' },
  { cell: 'is not in ["NL", "BE"]' },
  { cell: 'is in [1, 2.5, "3", "x", "X"]' },
  { cell: 'is not in [0, "retail"]' },
  { cell: 'is in []' },
  { cell: '>= 18 if present' },
  { cell: 'is in ["NL"] if present' },
  { cell: 'is not in ["NL"] if present' },
  { cell: '!= "retail" if present' },
];

/** Cells that stay generic (dates, booleans, date-like and boolean-like texts, other operators): the scan runs their closure. */
const GENERIC: { cell: string; rule?: string }[] = [
  { cell: 'is in ["2024-01-01", "NL"]' },
  { cell: 'is in ["true", "NL"]' },
  { cell: 'is "TRUE"' },
  { cell: 'is true' },
  { cell: '>= "2024-01-01"' },
  { cell: 'is later than date(2024-01-31)' },
  { cell: 'is exactly 18' },
  { cell: 'contains "l"' },
  { cell: 'is empty' },
  { cell: 'matches pattern "^[A-Z]{2}$"' },
  { cell: 'is within 30 days' },
];

const ABSENT = Symbol('absent');
const VALUES: unknown[] = [
  ABSENT,
  null,
  true,
  false,
  0,
  -0,
  18,
  17.999,
  18.5,
  -2.5,
  -5,
  1,
  2.5,
  3,
  '18',
  '18.0',
  '018',
  ' 18',
  '18a',
  '-0.5',
  '-2.5',
  '1e3',
  '3',
  '2.50',
  '',
  'NL',
  'nl',
  'Nl',
  'BE',
  'be',
  'x',
  'X',
  'retail',
  'RETAIL',
  'true',
  'TRUE',
  'false',
  'İstanbul',
  'i̇stanbul',
  'STRASSE',
  'straße',
  'STRAẞE',
  '2024-01-01',
  '2024-01-01T10:00:00Z',
  '2024-02-15',
  'l'.repeat(200),
  [],
  ['NL'],
  [18],
  {},
  { value: 18 },
];

const NOW = Date.UTC(2024, 1, 1, 12);

const dataOf = (v: unknown) => (v === ABSENT ? { cell: {} } : { cell: { value: v } });
const show = (v: unknown) => (v === ABSENT ? '(absent)' : JSON.stringify(v));

interface Answer {
  match: boolean;
  error: string | null;
  steps: number;
}

/** The cell through the table: the scan, and the generic closure with and without a trace. */
function tableAnswers(cell: string, v: unknown): { scan: Answer; plain: Answer; traced: Answer } {
  const table = compileCellTable(['cell.value'], [[cell]]);
  const scanBudget = new StepBudget(1000);
  const scanned = table.scan(dataOf(v), { stepBudget: scanBudget, now: NOW }, false);
  const closure = (trace: boolean): Answer => {
    const budget = new StepBudget(1000);
    const run = table.begin(dataOf(v), { stepBudget: budget, now: NOW, trace });
    const match = run.matches(0);
    run.end();
    return { match, error: run.error?.code ?? null, steps: budget.used };
  };
  return {
    scan: { match: scanned.matched.length === 1, error: scanned.error?.code ?? null, steps: scanBudget.used },
    plain: closure(false),
    traced: closure(true),
  };
}

/** The same comparison as a rule-language policy. */
function policyAnswer(comparison: string, v: unknown): Answer {
  const policy = compile(`if cell.value ${comparison}\n-> cell.`);
  const budget = new StepBudget(1000);
  const out = policy.evaluate(dataOf(v), { stepBudget: budget, now: NOW });
  return { match: out.result, error: out.errorCode ?? null, steps: budget.used };
}

describe('specialised cells', () => {
  it.each(SPECIALISED)('`$cell` has a specialised form', ({ cell }) => {
    const parsed = parseCell(cell);
    if (!parsed.ok || parsed.cell.kind !== 'comparison') throw new Error(`${cell} does not parse as a comparison`);
    expect(specialiseCell(parsed.cell.condition)).not.toBeNull();
  });

  it.each(GENERIC)('`$cell` stays generic', ({ cell }) => {
    const parsed = parseCell(cell);
    if (!parsed.ok || parsed.cell.kind !== 'comparison') throw new Error(`${cell} does not parse as a comparison`);
    expect(specialiseCell(parsed.cell.condition)).toBeNull();
  });

  it.each([...SPECIALISED, ...GENERIC])(
    '`$cell` answers as the rule language and the generic cell do, on every value',
    ({ cell, rule }) => {
      for (const v of VALUES) {
        const { scan, plain, traced } = tableAnswers(cell, v);
        const policy = policyAnswer(rule ?? cell, v);
        const at = `${cell} on ${show(v)}`;
        expect(scan, `${at}: scan vs policy`).toEqual(policy);
        expect(plain, `${at}: closure vs policy`).toEqual(policy);
        expect(traced.match, `${at}: traced closure`).toBe(policy.match);
        expect(traced.error, `${at}: traced closure`).toBe(policy.error);
      }
    },
  );
});

describe('scan', () => {
  // Specialised and generic cells over three columns, repeated cells included (the memo of generic ones).
  const rows = [
    ['>= 18', 'is in ["NL", "BE"]', '"retail"'],
    ['< 18', '-', 'contains "ail"'],
    ['-', '!= "DE"', 'is in ["retail", "business"]'],
    ['>= 18', 'is in ["NL", "BE"]', 'contains "ail"'],
    ['is in [17, 30]', '"nl"', '-'],
    ['-', '-', '-'],
  ];
  const table = compileCellTable(['a.age', 'a.country', 'a.segment'], rows);
  const items = [
    { a: { age: 30, country: 'NL', segment: 'retail' } },
    { a: { age: '17', country: 'nl', segment: 'Retail' } },
    { a: { age: 17, country: 'DE', segment: 'business' } },
    { a: { age: null, country: 'be', segment: 'public' } },
    { a: { age: 40, country: 'FR', segment: 'x'.repeat(130) } },
    { a: { age: 40, segment: 'retail' } },
    { a: { country: 'NL', segment: 'retail' } },
  ];

  /** Every row through the closures, as the traced evaluation walks them. */
  function byClosures(data: unknown, limit: number, firstOnly: boolean) {
    const budget = new StepBudget(limit);
    const run = table.begin(data, { stepBudget: budget });
    const matched: number[] = [];
    for (let r = 0; r < table.rows; r++) {
      if (run.matches(r)) {
        matched.push(r);
        if (firstOnly) break;
      }
      if (run.error !== null) break;
    }
    run.end();
    return { matched, error: run.error, used: budget.used };
  }

  it('gives the rows, error and steps of the closures, under every budget up to what the evaluation needs', () => {
    for (const data of items) {
      for (const firstOnly of [false, true]) {
        const full = byClosures(data, 1000, firstOnly);
        for (let limit = 0; limit <= full.used + 1; limit++) {
          const budget = new StepBudget(limit);
          const scanned = table.scan(data, { stepBudget: budget }, firstOnly);
          expect({ ...scanned, used: budget.used }, `${JSON.stringify(data)}, limit ${limit}, firstOnly ${firstOnly}`).toEqual(
            byClosures(data, limit, firstOnly),
          );
        }
      }
    }
  });

  it('starts from the steps a shared budget has used already', () => {
    // Row 1's three cells take the last 3 steps; row 2's first cell is one too many.
    const budget = new StepBudget(100, 97);
    const scanned = table.scan(items[0], { stepBudget: budget }, false);
    expect(scanned.error).toEqual({ code: 'budget_exceeded', message: 'Budget exceeded: the evaluation needs more than 100 steps' });
    expect(scanned.matched).toEqual([0]);
    expect(budget.used).toBe(100);
  });
});
