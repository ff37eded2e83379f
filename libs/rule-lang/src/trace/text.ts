/**
 * The wording of trace lines (LANGUAGE.md §10.2), shared by the two producers of those lines:
 * renderTrace (render.ts, from the structured trace) and the generated traced evaluator
 * (compile/codegen-trace.ts, which calls these at compile time for constant text and at run time
 * only for values). One definition of each piece keeps the two byte-identical.
 */

import { operandKindOf, positiveWording } from '../operators/index.js';
import { boundedJson } from './bounded-json.js';

/**
 * True when `JSON.stringify(s)` is just `s` in quotes: no control character, `"`, `\\` or
 * surrogate (well-formed JSON.stringify escapes lone surrogates; pairs take the slow path too).
 * Ordered so that a printable ASCII character costs two comparisons.
 *
 * INVARIANT: `json(s)` is `"${s}"` when `plainString(s)`. The generated traced evaluator relies on
 * it to write such a value between quotes that are part of its literals (and calls json for the
 * rest).
 */
export function plainString(s: string): boolean {
  for (let i = 0, n = s.length; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x22 ? c === 0x5c || (c >= 0xd800 && c <= 0xdfff) : c < 0x20 || c === 0x22) return false;
  }
  return true;
}

/**
 * `JSON.stringify(v)` ('null' for undefined). Plain strings, booleans and finite numbers, nearly
 * all the values a trace shows, skip JSON.stringify (a third of the rendering time before) in a
 * body small enough to be inlined where it is called; the results are identical.
 */
export function json(v: unknown): string {
  if (typeof v === 'string') {
    if (plainString(v)) return `"${v}"`;
  } else if (typeof v === 'boolean') {
    return v ? 'true' : 'false';
  } else if (typeof v === 'number' && Number.isFinite(v)) {
    // JSON.stringify prints finite numbers as String does (and -0 as 0, as String does).
    return String(v);
  }
  return otherJson(v);
}

/**
 * The rest of {@link json}: 'null' for null, undefined and non-finite numbers; long or escaped
 * strings, arrays and objects as at most a line's worth of JSON, cut with `…`. Bounds the work
 * too (deep, shared or cyclic in-memory values must never stall an evaluation).
 */
function otherJson(v: unknown): string {
  if (v === undefined || v === null || typeof v === 'number') return 'null';
  return boundedJson(v);
}

/** ` -> true` / ` -> false` (any other value as a template would print it). */
export function arrow(result: unknown): string {
  return result === true ? ' -> true' : result === false ? ' -> false' : ` -> ${String(result)}`;
}

/** Depths, element indices and counts below these get their text cached (a bounded cache). */
const CACHED_DEPTHS = 32;
const CACHED_INDICES = 256;
const CACHED_COUNTS = 64;

/** Per depth, per index: the element line for a true and for a false result. */
const ELEMENT_LINES: (readonly [string, string] | undefined)[][] = [];

/**
 * The line of element `index` of an any/all whose line is at `depth`: `  [i] -> result` under
 * it. Cached for small depths and indices, whose lines every traced evaluation repeats.
 */
export function elementLine(depth: number, index: number, result: unknown): string {
  if (depth < CACHED_DEPTHS && index < CACHED_INDICES && typeof result === 'boolean') {
    const byIndex = (ELEMENT_LINES[depth] ??= []);
    const lines = (byIndex[index] ??= [`${padOf(depth + 1)}[${index}] -> true`, `${padOf(depth + 1)}[${index}] -> false`]);
    return result ? lines[0] : lines[1];
  }
  return `${padOf(depth + 1)}[${index}]${arrow(result)}`;
}

/** Per count, per matched: the summary end for a true and for a false result. */
const SUMMARIES: (readonly [string, string] | undefined)[][] = [];

function summary(count: number, matched: number, arrowText: string): string {
  return ` [${count} element${count === 1 ? '' : 's'}]: ${matched} matched${arrowText}`;
}

/**
 * What follows the path in the summary line of an any/all that ran:
 * ` [N elements]: M matched -> result`. Cached for small counts.
 */
export function quantifierSummary(count: number, matched: number, result: unknown): string {
  if (count < CACHED_COUNTS && matched <= count && typeof result === 'boolean') {
    const byMatched = (SUMMARIES[count] ??= []);
    const texts = (byMatched[matched] ??= [summary(count, matched, ' -> true'), summary(count, matched, ' -> false')]);
    return result ? texts[0] : texts[1];
  }
  return summary(count, matched, arrow(result));
}

const PADS: string[] = [''];

/** Two spaces per level, cached. */
export function padOf(depth: number): string {
  while (PADS.length <= depth) PADS.push(`${PADS[PADS.length - 1]}  `);
  return PADS[depth];
}

/** The operator of a comparison line: a negative form as written, a positive one by its first form (the catalogue's). */
export function operatorText(operator: string, written: string, negated: boolean): string {
  return negated ? written : positiveWording(operator);
}

/** How a measure is named in the structured trace and its lines (§10.3): `length of` / `number of`. */
export function measureName(measure: 'length' | 'number' | null): 'length of' | 'number of' | null {
  return measure === 'length' ? 'length of' : measure === 'number' ? 'number of' : null;
}

/** `length of ` / `number of ` before the path of a measured comparison; '' without a measure. */
export function measurePrefix(measure: string | undefined | null): string {
  return measure ? `${measure} ` : '';
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const DATE_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9];

/** `/^\d{4}-\d{2}-\d{2}$/.test(s)` without the regex (it ran once per rendered comparison). */
function isDateText(s: string): boolean {
  if (s.length !== 10 || s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d) return false;
  for (const i of DATE_DIGITS) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}

/**
 * The right-operand text of a comparison line for an operand that is not a path: '' for none,
 * ` <value>` otherwise (periods and dates bare, the rest as JSON; a format name or pattern is
 * always JSON). `listText` prints a list.
 */
export function valueOperandText(operator: string, v: unknown, listText: (list: readonly unknown[]) => string = json): string {
  if (v === null) return '';
  const kind = operandKindOf(operator);
  if (kind === 'period') return ` ${v as string | number}`;
  if (typeof v === 'string' && isDateText(v) && kind !== 'string') {
    return ` ${v}`;
  }
  return ` ${Array.isArray(v) ? listText(v) : json(v)}`;
}

/** The first line of a rule's block: `rule "O"` with tags `label L`, then `golden` or (unlabelled only) `subject S`. */
export function ruleHeader(outcome: string, label: string | null, selector: string, golden: boolean): string {
  let tags = label !== null ? `label ${label}` : '';
  if (golden) tags = tags !== '' ? `${tags}, golden` : 'golden';
  else if (label === null && selector !== '') tags = `subject ${selector}`;
  return tags !== '' ? `rule "${outcome}" [${tags}]` : `rule "${outcome}"`;
}
