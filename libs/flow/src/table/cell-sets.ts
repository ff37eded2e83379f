/**
 * What a table's cells mean as sets of values, for the static checks (`checks.ts`). Each input path
 * is one dimension (two inputs on the same path, a range written as `>= 25` and `<= 60`, share it).
 * A dimension's values are cut into pieces at every constant its cells name, so that every cell
 * holds on a whole piece or not at all: numbers and dates are ordered (points and the open
 * stretches between them), strings and booleans are the listed values plus "any other value". A
 * path whose cells name values of several kinds (numbers and strings, say) has the pieces of each
 * kind side by side: a value has one kind, a comparison never holds on a value of another kind,
 * and its negation always does. A cell the checks cannot reason about (patterns, formats,
 * containment, emptiness, periods relative to today, path operands) is opaque: the checks then
 * assume whatever keeps them from reporting something that may not hold.
 */

import type { FlowTableNode } from '@arbiter/contracts';
import { dayFromDateText, keyFamily, parseCell, parseColumnPath, type ParsedCell } from '@arbiter/rule-lang';

/** Sorted, disjoint, inclusive ranges of piece indices, flattened: `[lo0, hi0, lo1, hi1, …]`. */
export type PieceSet = readonly number[];

type Kind = 'number' | 'date' | 'string' | 'boolean';

/** A cell's meaning over present values; `test` is constant on every piece. */
interface KnownCell {
  /** The constants the cell names (numbers, days, lower-cased strings, booleans as 0/1), with their kinds. */
  constants: LiteralValue[];
  /** Whether the cell holds on the value `v` of kind `kind`. */
  test: (kind: Kind, v: number | string) => boolean;
}

/** One input path of the table and the pieces its values are cut into. */
export interface Dimension {
  /** The path as the first input on it writes it: root-first key names. */
  steps: string[];
  /** The inputs (0-based) on this path. */
  inputs: number[];
  /** The kinds of value its cells name, in the order its pieces are laid out. */
  kinds: Kind[];
  /** Per piece: a value in it, as the data would hold it. */
  examples: unknown[];
}

/** A rule's region in one dimension: the pieces it may match; `opaque` when an opaque cell narrows it to an unknown part of them. */
export interface RowSet {
  pieces: PieceSet;
  opaque: boolean;
}

export interface TableSpace {
  dimensions: Dimension[];
  /** Per rule, per dimension. */
  rows: RowSet[][];
}

const NUMERIC_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;
const DATE_LIKE = /^\d{4}-\d{2}-\d{2}(T|t|$)/;

const ORDERING: Record<string, (a: number, b: number) => boolean> = {
  'is greater than': (a, b) => a > b,
  'is greater than or equal to': (a, b) => a >= b,
  'is less than': (a, b) => a < b,
  'is no more than': (a, b) => a <= b,
  'is later than': (a, b) => a > b,
  'is earlier than': (a, b) => a < b,
};

/** A string literal that loose equality reads as a number, a date or a boolean: left to the opaque cells. */
function plainString(s: string): boolean {
  return !NUMERIC_TEXT.test(s) && !DATE_LIKE.test(s) && !/^(true|false)$/i.test(s);
}

type LiteralValue = { kind: Kind; value: number | string };

function literalValue(lit: { kind: string; value?: unknown; text?: string }): LiteralValue | null {
  switch (lit.kind) {
    case 'number':
      return { kind: 'number', value: lit.value as number };
    case 'date': {
      const day = dayFromDateText(lit.text!);
      return Number.isNaN(day) ? null : { kind: 'date', value: day };
    }
    case 'string':
      return plainString(lit.value as string) ? { kind: 'string', value: (lit.value as string).toLowerCase() } : null;
    case 'boolean':
      return { kind: 'boolean', value: lit.value ? 1 : 0 };
    default:
      return null;
  }
}

/** The cell's meaning, or null when it is opaque (or `any`, handled by the caller). */
function knownCell(cell: ParsedCell): KnownCell | null {
  if (cell.kind !== 'comparison') return null;
  const { op, right } = cell.condition;
  if (right === null) return null;
  // The comparison holds only on a value of a kind it names; its negation everywhere else.
  const cellOf = (constants: LiteralValue[], holds: (kind: Kind, v: number | string) => boolean): KnownCell => ({
    constants,
    test: op.negated ? (kind, v) => !holds(kind, v) : holds,
  });
  const order = ORDERING[op.name];
  if (order !== undefined) {
    if (right.kind !== 'literal') return null;
    const lit = literalValue(right.literal);
    if (lit === null || (lit.kind !== 'number' && lit.kind !== 'date')) return null;
    if ((op.name === 'is later than' || op.name === 'is earlier than') && lit.kind !== 'date') return null;
    const c = lit.value as number;
    return cellOf([lit], (kind, v) => kind === lit.kind && order(v as number, c));
  }
  if (op.name === 'is equal to' || (op.name === 'is exactly' && right.kind === 'literal' && right.literal.kind === 'number')) {
    if (right.kind !== 'literal') return null;
    const lit = literalValue(right.literal);
    if (lit === null) return null;
    return cellOf([lit], (kind, v) => kind === lit.kind && v === lit.value);
  }
  if (op.name === 'is in') {
    if (right.kind !== 'list' || right.items.length === 0) return null;
    const values = right.items.map(literalValue);
    if (values.some((v) => v === null)) return null;
    const set = new Set((values as LiteralValue[]).map((v) => `${v.kind}:${v.value}`));
    return cellOf(values as LiteralValue[], (kind, v) => set.has(`${kind}:${v}`));
  }
  return null;
}

/** A value in the open stretch (a, b) of kind `kind` (either end may be infinite), or undefined when it holds none. */
function between(kind: 'number' | 'date', a: number, b: number): number | undefined {
  if (a === -Infinity && b === Infinity) return 0;
  if (a === -Infinity) return Math.floor(b) - 1;
  if (b === Infinity) return Math.floor(a) + 1;
  if (kind === 'date') return b - a > 1 ? a + 1 : undefined;
  const next = Math.floor(a) + 1;
  return next < b ? next : (a + b) / 2;
}

function dayText(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** The pieces of a dimension whose cells name `constants`: [piece values for `test`, examples for data]. */
function piecesOf(kind: Kind, constants: Array<number | string>): { values: Array<number | string>; examples: unknown[] } {
  if (kind === 'number' || kind === 'date') {
    const sorted = [...new Set(constants as number[])].sort((x, y) => x - y);
    const values: number[] = [];
    const bounds = [-Infinity, ...sorted, Infinity];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const inside = between(kind, bounds[i], bounds[i + 1]);
      if (inside !== undefined) values.push(inside);
      if (i + 1 < bounds.length - 1) values.push(bounds[i + 1]);
    }
    return { values, examples: kind === 'date' ? values.map((d) => dayText(d)) : values };
  }
  if (kind === 'boolean') return { values: [0, 1], examples: [false, true] };
  const listed = [...new Set(constants as string[])];
  let other = 'other';
  for (let i = 2; listed.includes(other); i++) other = `other ${i}`;
  return { values: [...listed, other], examples: [...listed, other] };
}

/** A dimension's pieces: each a value of one kind, for cells' tests. */
type Piece = { kind: Kind; value: number | string };

/** The pieces (as ranges) on which `test` holds. */
function setOf(pieces: readonly Piece[], test: KnownCell['test']): number[] {
  const out: number[] = [];
  for (let i = 0; i < pieces.length; i++) {
    if (!test(pieces[i].kind, pieces[i].value)) continue;
    if (out.length > 0 && out[out.length - 1] === i - 1) out[out.length - 1] = i;
    else out.push(i, i);
  }
  return out;
}

export function intersect(a: PieceSet, b: PieceSet): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i], b[j]);
    const hi = Math.min(a[i + 1], b[j + 1]);
    if (lo <= hi) out.push(lo, hi);
    if (a[i + 1] < b[j + 1]) i += 2;
    else j += 2;
  }
  return out;
}

export function isSubset(a: PieceSet, b: PieceSet): boolean {
  const both = intersect(a, b);
  return both.length === a.length && both.every((v, k) => v === a[k]);
}

/** Reads the table into dimensions and rule regions; null when a cell or a path does not parse (the table's own problems say so). */
export function tableSpace(node: FlowTableNode): TableSpace | null {
  const byPath = new Map<string, Dimension>();
  const dimOfInput: number[] = [];
  const dimensions: Dimension[] = [];
  for (const [i, input] of node.inputs.entries()) {
    const parsed = parseColumnPath(input.path);
    if (!parsed.ok) return null;
    const steps = parsed.path.steps.map((s) => s.name);
    const key = steps.map(keyFamily).join('\u0000');
    let dim = byPath.get(key);
    if (dim === undefined) {
      dim = { steps, inputs: [], kinds: [], examples: [] };
      byPath.set(key, dim);
      dimensions.push(dim);
    }
    dim.inputs.push(i);
    dimOfInput.push(dimensions.indexOf(dim));
  }
  // Every cell's meaning; a dimension has the pieces of every kind its cells name.
  const cells: Array<Array<KnownCell | 'any' | 'opaque'>> = [];
  const byText = new Map<string, KnownCell | 'any' | 'opaque'>();
  for (const rule of node.rules) {
    const row: Array<KnownCell | 'any' | 'opaque'> = [];
    for (const text of rule.when) {
      let cell = byText.get(text);
      if (cell === undefined) {
        const parsed = parseCell(text);
        if (!parsed.ok) return null;
        cell = parsed.cell.kind === 'any' ? 'any' : (knownCell(parsed.cell) ?? 'opaque');
        byText.set(text, cell);
      }
      row.push(cell);
    }
    cells.push(row);
  }
  const constants = dimensions.map(() => new Map<Kind, Array<number | string>>());
  for (const row of cells) {
    row.forEach((cell, i) => {
      if (typeof cell === 'string') return;
      const byKind = constants[dimOfInput[i]];
      for (const c of cell.constants) {
        const list = byKind.get(c.kind);
        if (list === undefined) byKind.set(c.kind, [c.value]);
        else list.push(c.value);
      }
    });
  }
  const pieceValues = dimensions.map((dim, d): Piece[] => {
    const pieces: Piece[] = [];
    const examples: unknown[] = [];
    for (const [kind, named] of constants[d]) {
      const cut = piecesOf(kind, named);
      dim.kinds.push(kind);
      pieces.push(...cut.values.map((value) => ({ kind, value })));
      examples.push(...cut.examples);
    }
    if (pieces.length === 0) {
      // No cell names a value: one piece, any value.
      pieces.push({ kind: 'number', value: 0 });
      examples.push(0);
    }
    dim.examples = examples;
    return pieces;
  });
  const rows = cells.map((row) =>
    dimensions.map((dim, d): RowSet => {
      let pieces: number[] = [0, pieceValues[d].length - 1];
      let opaque = false;
      for (const i of dim.inputs) {
        const cell = row[i];
        if (cell === 'any') continue;
        if (cell === 'opaque') opaque = true;
        else pieces = intersect(pieces, setOf(pieceValues[d], cell.test));
      }
      return { pieces, opaque };
    }),
  );
  return { dimensions, rows };
}
