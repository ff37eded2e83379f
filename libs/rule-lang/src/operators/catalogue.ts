/**
 * The operator catalogue (LANGUAGE.md §7.1, §12.3): one entry per operator holds everything the
 * language knows about it — its written forms and their negations, its operand kind, whether a
 * measure may precede it, whether it reads the clock, and its semantics. Everything else derives
 * from this list (operators/index.ts): the checker's form map, `list_operators`, the trace words,
 * the console's highlighting and completion, and the tables of docs/LANGUAGE.md
 * (`npm run operators:doc -w @arbiter/rule-lang`). Adding an operator: CONTRIBUTING.md.
 *
 * The order of the rows is the order of §7.1 and of `list_operators`.
 */

import {
  containsTest,
  emptyTest,
  equalToTest,
  exactlyTest,
  formatTest,
  inTest,
  laterEarlierTest,
  orderingTest,
  patternTest,
  periodTest,
  validFormatTest,
  type TestMaker,
} from './semantics.js';

/** What may follow an operator. `value` = string, number, boolean or date literal. */
export type OperandKind = 'valueOrPath' | 'valueListOrPath' | 'listOrPath' | 'none' | 'string' | 'period';

/** One operator of the language. */
export interface OperatorEntry {
  /** The canonical name: what `explain_rule` reports and `list_operators` lists. */
  readonly name: string;
  /**
   * The accepted forms as `list_operators` shows them, operand placeholders (`<n>`, `"<pattern>"`)
   * included. The first one, without its placeholders, words the operator in a trace line.
   */
  readonly forms: readonly string[];
  /**
   * The negative forms (§7.4), placeholders included. `listedAs`: the negation is listed as an
   * operator of its own under that name (its row is placed by a `{ negationOf }` row).
   */
  readonly negation: { readonly forms: readonly string[]; readonly listedAs?: string };
  readonly operand: OperandKind;
  /** May follow `length of` / `number of` (§5.6). */
  readonly measurable: boolean;
  /** Compares with today: a policy using it reads the clock once per evaluation. */
  readonly clock?: boolean;
  /** The positive test of a comparison (semantics.ts); negation is applied by the caller. */
  readonly test: TestMaker;
}

/** A measure (§5.6), listed for discoverability. */
export interface MeasureEntry {
  readonly name: string;
  readonly forms: readonly string[];
  readonly measure: 'length' | 'number';
}

/** Where the listed negation of an operator stands in the list. */
export interface NegationRow {
  readonly negationOf: string;
}

export type CatalogueRow = OperatorEntry | MeasureEntry | NegationRow;

export const CATALOGUE = [
  {
    name: 'is greater than',
    forms: ['is greater than', '>'],
    negation: { forms: ['is not greater than'] },
    operand: 'valueOrPath',
    measurable: true,
    test: orderingTest('gt'),
  },
  {
    name: 'is greater than or equal to',
    forms: ['is greater than or equal to', 'is at least', '>='],
    negation: { forms: ['is not greater than or equal to', 'is not at least'] },
    operand: 'valueOrPath',
    measurable: true,
    test: orderingTest('gte'),
  },
  {
    name: 'is less than',
    forms: ['is less than', '<'],
    negation: { forms: ['is not less than'] },
    operand: 'valueOrPath',
    measurable: true,
    test: orderingTest('lt'),
  },
  {
    name: 'is no more than',
    forms: ['is no more than', 'is less than or equal to', '<='],
    negation: { forms: ['is not less than or equal to'] },
    operand: 'valueOrPath',
    measurable: true,
    test: orderingTest('lte'),
  },
  {
    name: 'is equal to',
    forms: ['is equal to', 'is', 'equals', '==', 'is the same as'],
    negation: { forms: ['is not equal to', 'is not', 'does not equal', 'is not the same as', '!='], listedAs: 'is not equal to' },
    operand: 'valueListOrPath',
    measurable: true,
    test: equalToTest,
  },
  {
    name: 'is exactly',
    forms: ['is exactly', 'is exactly equal to'],
    negation: { forms: ['is not exactly', 'is not exactly equal to'] },
    operand: 'valueListOrPath',
    measurable: true,
    test: exactlyTest,
  },
  { negationOf: 'is equal to' },
  {
    name: 'is in',
    forms: ['is in'],
    negation: { forms: ['is not in'], listedAs: 'is not in' },
    operand: 'listOrPath',
    measurable: false,
    test: inTest,
  },
  {
    name: 'contains',
    forms: ['contains'],
    negation: { forms: ['does not contain'] },
    operand: 'valueOrPath',
    measurable: false,
    test: containsTest,
  },
  {
    name: 'is a valid email',
    forms: ['is a valid email', 'is a valid email address'],
    negation: { forms: ['is not a valid email', 'is not a valid email address'] },
    operand: 'none',
    measurable: false,
    test: validFormatTest('email'),
  },
  {
    name: 'is a valid uuid',
    forms: ['is a valid uuid'],
    negation: { forms: ['is not a valid uuid'] },
    operand: 'none',
    measurable: false,
    test: validFormatTest('uuid'),
  },
  {
    name: 'is a valid date',
    forms: ['is a valid date'],
    negation: { forms: ['is not a valid date'] },
    operand: 'none',
    measurable: false,
    test: validFormatTest('date'),
  },
  {
    name: 'format check',
    forms: ['has the format "<format_name>"'],
    negation: { forms: ['does not have the format "<format_name>"'] },
    operand: 'string',
    measurable: false,
    test: formatTest,
  },
  {
    name: 'pattern',
    forms: ['matches pattern "<pattern>"'],
    negation: { forms: ['does not match pattern "<pattern>"'] },
    operand: 'string',
    measurable: false,
    test: patternTest,
  },
  {
    name: 'period',
    forms: ['is within <n> days', 'is within <n> <unit>'],
    negation: { forms: ['is not within <n> <unit>'] },
    operand: 'period',
    measurable: false,
    clock: true,
    test: periodTest('within'),
  },
  { negationOf: 'is in' },
  {
    name: 'is empty',
    forms: ['is empty'],
    negation: { forms: ['is not empty'], listedAs: 'is not empty' },
    operand: 'none',
    measurable: false,
    test: emptyTest,
  },
  { negationOf: 'is empty' },
  {
    name: 'is later than',
    forms: ['is later than'],
    negation: { forms: ['is not later than'] },
    operand: 'valueOrPath',
    measurable: false,
    test: laterEarlierTest('later'),
  },
  {
    name: 'is earlier than',
    forms: ['is earlier than'],
    negation: { forms: ['is not earlier than'] },
    operand: 'valueOrPath',
    measurable: false,
    test: laterEarlierTest('earlier'),
  },
  {
    name: 'is older than',
    forms: ['is older than <n> <unit>'],
    negation: { forms: ['is not older than <n> <unit>'] },
    operand: 'period',
    measurable: false,
    clock: true,
    test: periodTest('older'),
  },
  {
    name: 'is younger than',
    forms: ['is younger than <n> <unit>'],
    negation: { forms: ['is not younger than <n> <unit>'] },
    operand: 'period',
    measurable: false,
    clock: true,
    test: periodTest('younger'),
  },
  { name: 'length of', forms: ['the length of', 'length of'], measure: 'length' },
  { name: 'number of', forms: ['the number of', 'number of'], measure: 'number' },
] as const satisfies readonly CatalogueRow[];

type Row = (typeof CATALOGUE)[number];

/** The canonical name of an operator a comparison can use (not a listed negation, not a measure). */
export type CanonicalOperator = Extract<Row, { test: TestMaker }>['name'];

/** One entry of `list_operators` (LANGUAGE.md §12.3). */
export interface ListedOperator {
  operator: string;
  forms: string[];
}

/** A fresh copy of the operator list (`list_operators`, `GET /operators`), in catalogue order. */
export function listOperators(): ListedOperator[] {
  const rows: readonly CatalogueRow[] = CATALOGUE;
  return rows.map((row): ListedOperator => {
    if (!('negationOf' in row)) return { operator: row.name, forms: [...row.forms] };
    const of = rows.find((r): r is OperatorEntry => 'test' in r && r.name === row.negationOf);
    if (of?.negation.listedAs === undefined) throw new Error(`INVARIANT: the negation of \`${row.negationOf}\` is not listed`);
    return { operator: of.negation.listedAs, forms: [...of.negation.forms] };
  });
}
