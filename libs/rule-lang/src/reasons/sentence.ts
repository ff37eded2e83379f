/**
 * The sentence of reasons (LANGUAGE.md §10.4), built from the rule's own words: each condition's
 * text with the value found after its property phrase, and its operator in the opposite form when
 * it does not hold (`is not at least`, `does not contain`).
 */

import type { Reason } from '../api-types.js';
import { json } from '../trace/text.js';

/** What a sentence needs of one condition, taken from the policy text when the reasons are compiled. */
export type Phrasing =
  | {
      kind: 'condition';
      /** The words before the operator, markers dropped (`the age of the driver`). */
      subject: string;
      /** The operator as written. */
      holds: string;
      /** The operator's opposite (catalogue forms). */
      fails: string;
      /** ` <operand as written>`, or '' when the operator takes none. */
      operand: string;
    }
  | { kind: 'rule'; target: string }
  | { kind: 'any' | 'all'; array: string };

/** Where a condition's {@link Phrasing} is kept: its line and column (no two conditions start at the same place). */
export function positionKey(line: number, column: number): number {
  return line * 1_000_003 + column;
}

/** `<outcome> is <result> because <phrase> and <phrase> …`. */
export function phraseOf(outcome: string, result: boolean, because: readonly Reason[], phrasing: ReadonlyMap<number, Phrasing>): string {
  const said = phrases(because, phrasing);
  return said === '' ? `${outcome} is ${result}` : `${outcome} is ${result} because ${said}`;
}

function phrases(because: readonly Reason[], phrasing: ReadonlyMap<number, Phrasing>): string {
  return because.map((r) => phrase(r, phrasing)).join(' and ');
}

function elements(n: number): string {
  return n === 1 ? '1 element' : `${n} elements`;
}

/** One entry in words. */
export function phrase(r: Reason, phrasing: ReadonlyMap<number, Phrasing>): string {
  const p = phrasing.get(positionKey(r.line, r.column));
  if (r.kind === 'missing') return `${r.path ?? r.text} is missing (${r.error ?? 'missing data'})`;
  if (r.kind === 'error') return r.error ?? r.text;
  if (r.kind === 'table') return tablePhrase(r);
  if (p?.kind === 'condition') {
    if (!('value' in r)) return `${p.subject} is absent, and the condition is optional`;
    return `${p.subject} (${json(r.value)}) ${r.holds ? p.holds : p.fails}${p.operand}`;
  }
  if (p?.kind === 'rule') {
    const inner = r.because === undefined ? '' : phrases(r.because, phrasing);
    return inner === '' ? `${p.target} is ${r.holds}` : `${p.target} is ${r.holds} (because ${inner})`;
  }
  if (p?.kind === 'any' || p?.kind === 'all') {
    const inner = r.because === undefined ? '' : phrases(r.because, phrasing);
    if (r.element !== undefined) {
      const what = r.holds ? 'satisfies' : p.kind === 'any' ? 'satisfies' : 'does not satisfy';
      return `element ${r.element} of ${p.array} ${what} it${inner === '' ? '' : ` (${inner})`}`;
    }
    if (r.count !== undefined) {
      return r.holds ? `all ${elements(r.count)} of ${p.array} satisfy it` : `none of the ${elements(r.count)} of ${p.array} satisfies it`;
    }
    if (!('value' in r)) return `${p.array} is absent, and the condition is optional`;
    return `${p.array} (${json(r.value)}) is not a list`;
  }
  return r.text;
}

/** A table row (flows): `row N matched` with its cells, or `no rule matched`. */
function tablePhrase(r: Reason): string {
  if (r.row === undefined) return r.text;
  const cells = (r.because ?? []).map((c) => `${c.text} (${json(c.value)})`).join(', ');
  return cells === ''
    ? `row ${r.row} ${r.holds ? 'matched' : 'did not match'}`
    : `row ${r.row} ${r.holds ? 'matched' : 'did not match'}: ${cells}`;
}
