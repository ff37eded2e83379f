/**
 * Decision-table cells of the common forms, reduced to data the untraced scan (cell-table.ts)
 * tests inline against each column's value prepared once per evaluation: its number (§7.2) and
 * its lower-cased text. Each form answers exactly what the operator's test (operators/semantics.ts)
 * answers for every present value; anything else stays a generic cell.
 *
 * - ordering against a numeric literal (`>= 18`, `< "7.5"`): `toNumber(v) <op> n` (§7.3.1: the
 *   literal is numeric, so numbers are compared; a non-numeric value is NaN, false);
 * - equality with, and membership in a list of, numbers and *plain* strings (not numeric, not
 *   date-like, not boolean-like): §7.3.2 then reduces to "v's number equals a listed number" or
 *   "v is a string whose lower case equals a listed string's" (rules 3–6 can answer nothing else:
 *   a plain string is never numerically, day- or truth-equal to anything; a numeric literal
 *   equals exactly the values of the same number; arrays, objects, null and booleans equal none).
 */

import type { ComparisonCondition, Literal } from '../ast/types.js';
import { toDay } from '../values/dates.js';
import { booleanLike } from '../values/equality.js';
import { toNumber } from '../values/numbers.js';

/** Kinds of a specialised cell; GENERIC runs the cell's closure. */
export const GENERIC = 0;
export const NUM_GT = 1;
export const NUM_GTE = 2;
export const NUM_LT = 3;
export const NUM_LTE = 4;
/** v's number equals `num` (one numeric literal). */
export const NUM_EQ = 5;
/** v is a string whose lower case is `text` (one plain string literal). */
export const TEXT_EQ = 6;
/** v's number is in `numbers`, or v is a string whose lower case is in `texts`. */
export const IN_SET = 7;

export type FastKind = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/** A specialised cell: its kind and folded operand; `negated` flips the test, `optional` answers true on null. */
export interface FastCell {
  kind: FastKind;
  /** The number of an ordering or NUM_EQ. */
  num: number;
  /** TEXT_EQ's text and IN_SET's plain texts, as written (compared in lower case). */
  texts: readonly string[];
  /** IN_SET's numbers. */
  numbers: readonly number[];
  negated: boolean;
  optional: boolean;
}

const ORDER: Readonly<Record<string, FastKind>> = {
  'is greater than': NUM_GT,
  'is greater than or equal to': NUM_GTE,
  'is less than': NUM_LT,
  'is no more than': NUM_LTE,
};

/** A literal's number for equality (§7.3.2 rule 4), its plain text, or neither (null: not specialisable). */
function equalityKey(lit: Literal): { num: number } | { text: string } | null {
  if (lit.kind === 'number') return { num: lit.value };
  if (lit.kind !== 'string') return null;
  const n = toNumber(lit.value);
  if (n === n) return { num: n };
  if (!Number.isNaN(toDay(lit.value)) || booleanLike(lit.value) !== -1) return null;
  return { text: lit.value };
}

/** The specialised form of comparison cell `c`, or null when it stays generic. */
export function specialiseCell(c: ComparisonCondition): FastCell | null {
  if (c.measure !== null || c.right === null) return null;
  const base = { num: NaN, texts: [], numbers: [], negated: c.op.negated, optional: c.optional };
  const right = c.right;
  const name = c.op.name;
  const order = ORDER[name];
  if (order !== undefined) {
    if (right.kind !== 'literal') return null;
    const lit = right.literal;
    const n = lit.kind === 'number' ? lit.value : lit.kind === 'string' ? toNumber(lit.value) : NaN;
    return Number.isNaN(n) ? null : { ...base, kind: order, num: n };
  }
  if (name === 'is equal to' && right.kind === 'literal') {
    const key = equalityKey(right.literal);
    if (key === null) return null;
    return 'num' in key ? { ...base, kind: NUM_EQ, num: key.num } : { ...base, kind: TEXT_EQ, texts: [key.text] };
  }
  if (name === 'is in' && right.kind === 'list') {
    const numbers: number[] = [];
    const texts: string[] = [];
    for (const item of right.items) {
      const key = equalityKey(item);
      if (key === null) return null;
      if ('num' in key) numbers.push(key.num);
      else texts.push(key.text);
    }
    return { ...base, kind: IN_SET, numbers, texts };
  }
  return null;
}

/**
 * The texts and numbers the TEXT_EQ and IN_SET cells of one column name, each given a small id:
 * a value is looked up once per evaluation, and each cell tests its id. A text is found under its
 * lower case and as written (data usually matches the literal's case: no lower-casing then).
 */
export class ColumnIds {
  private readonly ids = new Map<string | number, number>();
  private size = 0;

  /** The id of a plain text (its lower case), or of a number; added when new. */
  add(key: string | number): number {
    const lower = typeof key === 'string' ? key.toLowerCase() : key;
    let id = this.ids.get(lower);
    if (id === undefined) {
      id = this.size++;
      this.ids.set(lower, id);
    }
    this.ids.set(key, id);
    return id;
  }

  get count(): number {
    return this.size;
  }

  /** The id of string `v` (equal in lower case to a listed text), or -1. */
  ofText(v: string): number {
    const id = this.ids.get(v);
    if (id !== undefined) return id;
    return this.ids.get(v.toLowerCase()) ?? -1;
  }

  /** The id of number `n` (NaN: none), or -1. */
  ofNumber(n: number): number {
    return n === n ? (this.ids.get(n) ?? -1) : -1;
  }
}
