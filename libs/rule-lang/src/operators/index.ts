/**
 * Everything derived from the operator catalogue (catalogue.ts): the form map the checker reads,
 * the test of each operator, `list_operators`, the trace words and the words editors highlight and
 * complete (`@arbiter/rule-lang/operators`; browsers take the words from the plain-data
 * `@arbiter/rule-lang/operator-words` the build writes, words-module.ts).
 */

import type { Operand } from '../ast/operands.js';
import { unitWords } from '../values/periods.js';
import {
  CATALOGUE,
  type CanonicalOperator,
  type CatalogueRow,
  type MeasureEntry,
  type OperandKind,
  type OperatorEntry,
} from './catalogue.js';
import type { Test } from './semantics.js';

export {
  CATALOGUE,
  listOperators,
  type ListedOperator,
  type CanonicalOperator,
  type CatalogueRow,
  type MeasureEntry,
  type OperandKind,
  type OperatorEntry,
} from './catalogue.js';

/** The catalogue's rows, widened for the views below. */
const ROWS: readonly CatalogueRow[] = CATALOGUE;

export const isOperatorEntry = (row: CatalogueRow): row is OperatorEntry => 'test' in row;
export const isMeasureEntry = (row: CatalogueRow): row is MeasureEntry => 'measure' in row;

/** A form with its operand placeholders dropped: `is within <n> days` → `is within`. */
export function phraseOf(form: string): string {
  return form.replace(/\s+"?<[a-z_]+>.*$/, '');
}

/** Every operator a comparison can use, by canonical name. */
export const OPERATORS: Readonly<Record<CanonicalOperator, OperatorEntry>> = Object.fromEntries(
  ROWS.filter(isOperatorEntry).map((e) => [e.name, e]),
) as Record<CanonicalOperator, OperatorEntry>;

/** Written phrase (lower case, single spaces, no placeholders) → canonical operator and negation (§7.1, §7.4). */
export const FORMS: ReadonlyMap<string, { name: CanonicalOperator; negated: boolean }> = new Map(
  ROWS.filter(isOperatorEntry).flatMap((e) => {
    const name = e.name as CanonicalOperator;
    return [
      ...e.forms.map((f): [string, { name: CanonicalOperator; negated: boolean }] => [phraseOf(f), { name, negated: false }]),
      ...e.negation.forms.map((f): [string, { name: CanonicalOperator; negated: boolean }] => [phraseOf(f), { name, negated: true }]),
    ];
  }),
);

/** The positive test of a comparison with operator `name` and its (already checked) right operand. */
export function compileTest(name: CanonicalOperator, right: Operand | null): Test {
  const entry = OPERATORS[name] as OperatorEntry | undefined;
  if (!entry) throw new Error(`INVARIANT: no test for operator \`${name}\``);
  return entry.test(right);
}

/** Whether a comparison with operator `name` reads the clock (periods around today). */
export function usesClock(name: string): boolean {
  return (OPERATORS as Readonly<Record<string, OperatorEntry | undefined>>)[name]?.clock === true;
}

/** The operand kind of a canonical operator; undefined for any other name. */
export function operandKindOf(name: string): OperandKind | undefined {
  return (OPERATORS as Readonly<Record<string, OperatorEntry | undefined>>)[name]?.operand;
}

const WORDING: ReadonlyMap<string, string> = new Map(ROWS.filter(isOperatorEntry).map((e) => [e.name, phraseOf(e.forms[0])]));

/** How a trace line words a positive operator: its first form (`format check` → `has the format`). */
export function positiveWording(name: string): string {
  return WORDING.get(name) ?? name;
}

/** Every written operator phrase, positive and negative, measures included (placeholders dropped). */
export function operatorPhrases(): string[] {
  const phrases = ROWS.flatMap((row: CatalogueRow) =>
    isOperatorEntry(row) ? [...row.forms, ...row.negation.forms] : isMeasureEntry(row) ? row.forms : [],
  );
  return [...new Set(phrases.map(phraseOf))];
}

const isWord = (w: string): boolean => /^[a-z]+$/.test(w);

/** The words of the operator phrases (`is`, `greater`, `than`, …), symbols left out. */
export function operatorWords(): string[] {
  return [...new Set(operatorPhrases().flatMap((p) => p.split(' ').filter(isWord)))];
}

/** The words an operator phrase can start with (`is`, `does`, `has`, …), measures left out. */
export function operatorStartWords(): string[] {
  const starts = ROWS.filter(isOperatorEntry).flatMap((e) => [...e.forms, ...e.negation.forms].map((f) => phraseOf(f).split(' ')[0]));
  return [...new Set(starts.filter(isWord))];
}

/** The symbolic operators (`>=`, `!=`, …). */
export function operatorSymbols(): string[] {
  return operatorPhrases().filter((p) => !/[a-z]/.test(p));
}

/** The most words an operator phrase has. */
export function longestPhraseWords(): number {
  return Math.max(...operatorPhrases().map((p) => p.split(' ').length));
}

/**
 * The structural words of LANGUAGE.md §2.5 (what the operator phrases, label predicates and units
 * add comes from the catalogue and the unit table).
 */
export const STRUCTURAL_WORDS: readonly string[] = [
  'a',
  'an',
  'the',
  'if',
  'and',
  'or',
  'of',
  'in',
  'its',
  'any',
  'all',
  'where',
  'satisfies',
  'present',
  'true',
  'false',
  'date',
  'length',
  'number',
];

/** The words an editor shows as keywords: the structural words, the operator words and the period units. */
export function keywordWords(): string[] {
  return [...new Set([...STRUCTURAL_WORDS, ...operatorWords(), ...unitWords()])];
}

/** The negative phrase a positive phrase is guessed to pair with: `is at least` → `is not at least`, `contains` → `does not contain`. */
function notOf(phrase: string): string {
  if (phrase === 'is') return 'is not';
  if (phrase.startsWith('is ')) return `is not ${phrase.slice(3)}`;
  const [verb, ...rest] = phrase.split(' ');
  const base = verb === 'has' ? 'have' : verb.endsWith('ches') ? verb.slice(0, -2) : verb.endsWith('s') ? verb.slice(0, -1) : verb;
  return ['does not', base, ...rest].join(' ');
}

/**
 * The opposite of an operator phrase as written (placeholders dropped), from the catalogue's forms
 * and their negations: a positive phrase gives its negative form (`is at least` → `is not at least`,
 * `contains` → `does not contain`, `>=` → the first negative form), a negative phrase its positive
 * form (`is not empty` → `is empty`, `!=` → `is equal to`). Reasons word a condition that does not
 * hold with it (LANGUAGE.md §10.4).
 */
export function oppositePhrase(name: CanonicalOperator, phrase: string, negated: boolean): string {
  const entry = OPERATORS[name] as OperatorEntry | undefined;
  if (!entry) throw new Error(`INVARIANT: no operator \`${name}\``);
  const positives = entry.forms.map(phraseOf);
  const negatives = entry.negation.forms.map(phraseOf);
  if (!negated) {
    const guess = notOf(phrase);
    return negatives.includes(guess) ? guess : negatives[0];
  }
  return positives.find((p) => notOf(p) === phrase) ?? positives[0];
}
