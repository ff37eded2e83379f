/**
 * The sentence of reasons (LANGUAGE.md §10.4), built from the rule's own words: each condition's
 * text with the value found after its property phrase, and its operator in the opposite form when
 * it does not hold (`is not at least`, `does not contain`). The constant pieces of each condition
 * are cut from the policy text when the reasons are compiled; an evaluation adds the values.
 */

import type { Reason } from '../api-types.js';
import { json } from '../trace/text.js';

/** What a sentence needs of one condition, taken from the policy text when the reasons are compiled. */
export type Phrasing =
  | {
      kind: 'condition';
      /** The words before the operator, markers dropped, and ` (`: `the age of the driver (`. */
      before: string;
      /** `) ` + the operator as written + the operand as written. */
      holds: string;
      /** `) ` + the operator's opposite (catalogue forms) + the operand as written. */
      fails: string;
      /** The words of a skipped optional condition. */
      absent: string;
    }
  | { kind: 'rule'; target: string }
  | { kind: 'any' | 'all'; array: string };

/** Where a condition's {@link Phrasing} is kept: its line and column (no two conditions start at the same place). */
export function positionKey(line: number, column: number): number {
  return line * 1_000_003 + column;
}

/** `<outcome> is <result> because <phrase> and <phrase> …`. */
export function phraseOf(outcome: string, result: boolean, because: readonly Reason[], phrasing: ReadonlyMap<number, Phrasing>): string {
  const head = result ? `${outcome} is true` : `${outcome} is false`;
  return because.length === 0 ? head : `${head} because ${phrases(because, phrasing)}`;
}

function phrases(because: readonly Reason[], phrasing: ReadonlyMap<number, Phrasing>): string {
  let out = phrase(because[0], phrasing);
  for (let i = 1; i < because.length; i++) out += ` and ${phrase(because[i], phrasing)}`;
  return out;
}

function elements(n: number): string {
  return n === 1 ? '1 element' : `${n} elements`;
}

/** One entry in words. */
export function phrase(r: Reason, phrasing: ReadonlyMap<number, Phrasing>): string {
  if (r.kind === 'missing') return `${r.path ?? r.text} is missing (${r.error ?? 'missing data'})`;
  if (r.kind === 'error') return r.error ?? r.text;
  if (r.kind === 'table') return tablePhrase(r);
  const p = phrasing.get(positionKey(r.line, r.column));
  if (p === undefined) return r.text;
  switch (p.kind) {
    case 'condition':
      if (!('value' in r)) return p.absent;
      return p.before + json(r.value) + (r.holds ? p.holds : p.fails);
    case 'rule': {
      const head = r.holds ? `${p.target} is true` : `${p.target} is false`;
      return r.because === undefined || r.because.length === 0 ? head : `${head} (because ${phrases(r.because, phrasing)})`;
    }
    case 'any':
    case 'all': {
      if (r.element !== undefined) {
        const inner = r.because === undefined || r.because.length === 0 ? '' : ` (${phrases(r.because, phrasing)})`;
        const what = r.holds || p.kind === 'any' ? 'satisfies' : 'does not satisfy';
        return `element ${r.element} of ${p.array} ${what} it${inner}`;
      }
      if (r.count !== undefined) {
        return r.holds
          ? `all ${elements(r.count)} of ${p.array} satisfy it`
          : `none of the ${elements(r.count)} of ${p.array} satisfies it`;
      }
      if (!('value' in r)) return `${p.array} is absent, and the condition is optional`;
      return `${p.array} (${json(r.value)}) is not a list`;
    }
  }
}

/** A table row (flows): `row N matched` with its cells, or `no rule matched`. */
function tablePhrase(r: Reason): string {
  if (r.row === undefined) return r.text;
  const cells = (r.because ?? []).map((c) => `${c.text} (${json(c.value)})`).join(', ');
  return cells === ''
    ? `row ${r.row} ${r.holds ? 'matched' : 'did not match'}`
    : `row ${r.row} ${r.holds ? 'matched' : 'did not match'}: ${cells}`;
}
