/**
 * The language corpus: every case in test/cases/*.json runs through the public API.
 *
 * A case is `{note, rule, data?, now?, want?, wantOutcomes?, wantError?, wantErrorCode?, wantLine?,
 * wantColumn?, wantAt?, wantHelp?, wantExplain?, wantTrace?, decision?}`:
 * - `want` / `wantOutcomes`: the result and the full outcomes map of a successful evaluation;
 * - `wantErrorCode` + `wantError`: the full error message; for parse errors also `wantLine` /
 *   `wantColumn` (absent = the error has no position) and `wantAt` (the source text at that position);
 * - `wantExplain`: the exact `explain(rule)` result; `wantTrace`: the exact trace lines (§10.2 only);
 * - `decision`: the LANGUAGE.md §15 id(s) the case relies on.
 * Every evaluation gets an injected clock (`now`, default {@link DEFAULT_NOW}).
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compile, evaluate, explain, isRuleParseError, listOperators, RuleParseError, validate } from '../src/index.js';
import { FORMS } from '../src/operators/index.js';
import { allForms, documentedOperatorList, measureForms, operatorTable } from '@arbiter/test-kit/language-doc';

interface Case {
  note: string;
  rule: string;
  data?: unknown;
  now?: string;
  want?: boolean;
  wantOutcomes?: Record<string, boolean>;
  wantError?: string;
  wantErrorCode?: 'parse_error' | 'missing_selector' | 'missing_property';
  wantLine?: number;
  wantColumn?: number;
  wantAt?: string;
  wantHelp?: string;
  wantExplain?: unknown;
  wantTrace?: string[];
  decision?: string | string[];
}

const CASE_KEYS = new Set([
  'note',
  'rule',
  'data',
  'now',
  'want',
  'wantOutcomes',
  'wantError',
  'wantErrorCode',
  'wantLine',
  'wantColumn',
  'wantAt',
  'wantHelp',
  'wantExplain',
  'wantTrace',
  'decision',
]);

/** LANGUAGE.md §15. */
const DECISIONS = new Set([
  'D-keyword-case',
  'D-string-escapes',
  'D-negative-numbers',
  'D-quoted-strings',
  'D-label-charset',
  'D-terminator',
  'D-operator-spacing',
  'D-unified-conditions',
  'D-shorthand-outcome',
  'D-path-root',
  'D-name-lookup',
  'D-reference-matching',
  'D-static-checks',
  'D-no-short-circuit',
  'D-grouping',
  'D-if-present',
  'D-empty-missing',
  'D-type-mismatch',
  'D-extra-forms',
  'D-ordering-coercion',
  'D-loose-equality',
  'D-contains-boundary',
  'D-empty-list',
  'D-date-granularity',
  'D-period-units',
  'D-format-set',
  'D-pattern-semantics',
  'D-negation-forms',
  'D-quantifier-edges',
  'D-shorthand-selector',
  'D-explain-shape',
  'D-error-messages',
  'D-trace-format',
]);

const AREAS = [
  'dates-periods',
  'errors',
  'explain',
  'formats-patterns',
  'forms',
  'golden',
  'if-present',
  'lexical',
  'operators',
  'paths',
  'precedence',
  'quantifiers',
  'references',
];

/** The clock every case runs with unless it sets `now`. */
const DEFAULT_NOW = '2025-06-15T12:00:00Z';

const casesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cases');
const files = readdirSync(casesDir)
  .filter((f) => f.endsWith('.json'))
  .sort();

function load(file: string): Case[] {
  return JSON.parse(readFileSync(path.join(casesDir, file), 'utf8')) as Case[];
}

/** The source text starting at 1-based `line` / `column` (columns count code points, §9.1). */
function textAt(text: string, line: number, column: number): string {
  const lines = text.split(/\r\n|\r|\n/);
  const l = lines[line - 1];
  if (l === undefined) return '';
  return [...l].slice(column - 1).join('');
}

function checkShape(c: Case): void {
  for (const k of Object.keys(c)) expect(CASE_KEYS.has(k), `unknown case key \`${k}\``).toBe(true);
  expect(typeof c.note).toBe('string');
  expect(typeof c.rule).toBe('string');
  const expectations = ['want', 'wantOutcomes', 'wantErrorCode', 'wantExplain', 'wantTrace'].filter((k) => k in c);
  expect(expectations.length, 'a case needs an expectation').toBeGreaterThan(0);
  if (c.wantErrorCode !== undefined) {
    expect(c.wantError, 'an error case states the full message').toBeTypeOf('string');
    expect(c.want, 'an error case has no `want`').toBeUndefined();
  }
  if (c.wantError !== undefined) expect(c.wantErrorCode, 'wantError needs wantErrorCode').toBeDefined();
  if (c.wantLine !== undefined || c.wantColumn !== undefined || c.wantAt !== undefined) {
    expect(c.wantErrorCode).toBe('parse_error');
    expect(c.wantLine).toBeTypeOf('number');
    expect(c.wantColumn).toBeTypeOf('number');
  }
  for (const d of [c.decision ?? []].flat()) expect(DECISIONS.has(d), `unknown decision id ${d}`).toBe(true);
}

function checkParseError(c: Case): void {
  const v = validate(c.rule);
  expect(v).toEqual({ valid: false, error: c.wantError });

  let thrown: unknown;
  try {
    compile(c.rule);
  } catch (err) {
    thrown = err;
  }
  expect(isRuleParseError(thrown), `compile must throw RuleParseError, got ${String(thrown)}`).toBe(true);
  const err = thrown as RuleParseError;
  expect(err).toBeInstanceOf(RuleParseError);
  expect(err.code).toBe('parse_error');
  expect(err.message).toBe(c.wantError);
  if (c.wantLine !== undefined) {
    expect(err.message.startsWith(`Parse error: line ${c.wantLine}, column ${c.wantColumn}: `), err.message).toBe(true);
    expect({ line: err.line, column: err.column }).toEqual({ line: c.wantLine, column: c.wantColumn });
    if (c.wantAt !== undefined)
      expect(
        textAt(c.rule, c.wantLine, c.wantColumn!).startsWith(c.wantAt),
        `text at the position: ${textAt(c.rule, c.wantLine, c.wantColumn!)}`,
      ).toBe(true);
  } else {
    expect(err.message).toMatch(/^Parse error: (?!line \d+, column \d+:)/);
    expect(err.line).toBeUndefined();
    expect(err.column).toBeUndefined();
  }
  if (c.wantHelp !== undefined) expect(err.help).toBe(c.wantHelp);

  const now = new Date(c.now ?? DEFAULT_NOW);
  expect(evaluate(c.rule, c.data ?? {}, { now })).toEqual({
    result: false,
    outcomes: {},
    trace: [],
    error: c.wantError,
    errorCode: 'parse_error',
  });
  const traced = evaluate(c.rule, c.data ?? {}, { now, trace: true });
  expect(traced.trace).toEqual([c.wantError]);
  expect(explain(c.rule)).toEqual({ rule_count: 0, rules: [], error: c.wantError });
}

function checkEvaluation(c: Case): void {
  expect(validate(c.rule)).toEqual({ valid: true, error: null });
  const policy = compile(c.rule);
  const data = c.data ?? {};
  const now = new Date(c.now ?? DEFAULT_NOW);
  const plain = policy.evaluate(data, { now });
  const viaText = evaluate(c.rule, data, { now: now.getTime() });
  const traced = policy.evaluate(data, { now, trace: true });
  expect(viaText).toEqual(plain);
  expect(traced.result).toBe(plain.result);
  expect(traced.outcomes).toEqual(plain.outcomes);
  expect(traced.error).toBe(plain.error);
  expect(traced.errorCode).toBe(plain.errorCode);
  expect(traced.trace.every((l) => typeof l === 'string')).toBe(true);

  if (c.wantErrorCode !== undefined) {
    expect(plain).toEqual({ result: false, outcomes: {}, trace: [], error: c.wantError, errorCode: c.wantErrorCode });
    expect(traced.trace.at(-1)).toBe(`error: ${c.wantError}`);
    return;
  }
  expect(plain.error, `unexpected error ${plain.error}`).toBeUndefined();
  expect(plain.errorCode).toBeUndefined();
  expect(plain.trace).toEqual([]);
  if (c.want !== undefined) expect(plain.result).toBe(c.want);
  if (c.wantOutcomes !== undefined) expect(plain.outcomes).toEqual(c.wantOutcomes);
  expect(traced.trace.at(-1)).toBe(`result: ${plain.result}`);
  if (c.wantTrace !== undefined) expect(traced.trace).toEqual(c.wantTrace);
}

function run(c: Case): void {
  checkShape(c);
  if (c.wantExplain !== undefined) expect(explain(c.rule)).toEqual(c.wantExplain);
  if (c.wantErrorCode === 'parse_error') checkParseError(c);
  else if (c.want !== undefined || c.wantOutcomes !== undefined || c.wantErrorCode !== undefined || c.wantTrace !== undefined)
    checkEvaluation(c);
}

describe('corpus', () => {
  it('has one file per area', () => {
    expect(files).toEqual(AREAS.map((a) => `${a}.json`));
  });

  for (const file of files) {
    const cases = load(file);
    describe(file, () => {
      it('has cases with unique notes', () => {
        expect(cases.length).toBeGreaterThan(0);
        const notes = cases.map((c) => c.note);
        expect(notes.filter((n, i) => notes.indexOf(n) !== i)).toEqual([]);
      });
      for (const c of cases) it(c.note, () => run(c));
    });
  }
});

/** Every accepted and negative form of LANGUAGE.md §7.1 (operand placeholders dropped), read from the document. */
const ALL_FORMS = allForms();

describe('coverage of §7.1', () => {
  it('every accepted and negative form is used by a case with a true and a false outcome', () => {
    const evaluated = files.flatMap(load).filter((c) => c.want !== undefined);
    const uncovered: string[] = [];
    for (const form of ALL_FORMS) {
      // The form as a whole phrase: not preceded by `not`/`is`, not followed by more operator words.
      const re = new RegExp(
        `(?<![\\w])(?<!not )(?<!is )${form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?! (?:not|than|equal|to|a |the same|exactly|in |at |less|greater|empty|within|later|earlier|older|younger|no ))(?![\\w=])`,
        'i',
      );
      const using = evaluated.filter((c) => re.test(c.rule));
      if (!using.some((c) => c.want === true) || !using.some((c) => c.want === false)) uncovered.push(form);
    }
    expect(uncovered).toEqual([]);
  });
});

describe('listOperators', () => {
  it('returns exactly the list of §12.3 (read from docs/LANGUAGE.md)', () => {
    const documented = documentedOperatorList();
    expect(documented).toHaveLength(operatorTable().length);
    expect(listOperators()).toEqual(documented);
  });

  it('accepts exactly the forms of the §7.1 table (the catalogue and the document agree)', () => {
    const measures = new Set(measureForms());
    const documented = allForms().filter((f) => !measures.has(f));
    expect([...FORMS.keys()].sort()).toEqual([...documented].sort());
  });

  it('returns a fresh copy each time', () => {
    const a = listOperators();
    a[0].forms.push('mutated');
    expect(listOperators()[0].forms).toEqual(documentedOperatorList()[0].forms);
  });
});
