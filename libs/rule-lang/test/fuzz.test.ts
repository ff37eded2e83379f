/**
 * Property-based tests: mutated and random rule texts and random data. `compile` throws nothing but
 * RuleParseError (with a well-formed message and an in-range position), `validate` and `explain`
 * agree with it, and `evaluate` always returns a well-formed result.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile, evaluate, explain, isRuleParseError, validate, type CompiledPolicy, type EvaluationResult } from '../src/index.js';
import { data, ruleText, SEEDS } from './support/arbitraries.js';

// ------------------------------------------------------------------------------------------ checks

/** Lines as positions count them (ANTLR's rule): `\n` ends a line; a lone `\r` is whitespace within one. */
function codePointLines(text: string): string[][] {
  return text.split('\n').map((l) => [...l]);
}

/** compile either succeeds or throws a well-formed RuleParseError; validate and explain agree. */
function compileChecked(text: string): CompiledPolicy | null {
  let policy: CompiledPolicy | null = null;
  let thrown: unknown = null;
  try {
    policy = compile(text);
  } catch (err) {
    thrown = err;
  }
  const v = validate(text);
  const ex = explain(text);
  if (policy) {
    expect(v).toEqual({ valid: true, error: null });
    expect(ex.error).toBeNull();
    expect(ex.rule_count).toBe(ex.rules.length);
    expect(ex.rule_count).toBe(policy.outcomes.length);
    return policy;
  }
  expect(isRuleParseError(thrown), `compile threw something else: ${String(thrown)}`).toBe(true);
  const err = thrown as Error & { code: string; line?: number; column?: number };
  expect(err.code).toBe('parse_error');
  expect(err.message).toMatch(/^Parse error: /);
  expect(err.message).not.toMatch(/[\r\n]/);
  if (err.line !== undefined) {
    expect(err.message.startsWith(`Parse error: line ${err.line}, column ${err.column}: `)).toBe(true);
    const lines = codePointLines(text);
    expect(err.line).toBeGreaterThanOrEqual(1);
    expect(err.line).toBeLessThanOrEqual(lines.length);
    expect(err.column).toBeGreaterThanOrEqual(1);
    expect(err.column).toBeLessThanOrEqual(lines[err.line - 1].length + 1);
  } else {
    expect(err.column).toBeUndefined();
    expect(err.message).not.toMatch(/^Parse error: line \d+, column \d+:/);
  }
  expect(v).toEqual({ valid: false, error: err.message });
  expect(ex).toEqual({ rule_count: 0, rules: [], error: err.message });
  return null;
}

function wellFormed(r: EvaluationResult, outcomes: readonly string[] | null, traced: boolean): void {
  expect(typeof r.result).toBe('boolean');
  expect(typeof r.outcomes).toBe('object');
  expect(r.outcomes).not.toBeNull();
  expect(Array.isArray(r.trace)).toBe(true);
  for (const line of r.trace) expect(typeof line).toBe('string');
  for (const v of Object.values(r.outcomes)) expect(typeof v).toBe('boolean');
  if (r.error !== undefined) {
    expect(typeof r.error).toBe('string');
    expect(['parse_error', 'missing_selector', 'missing_property']).toContain(r.errorCode);
    expect(r.error).toMatch(
      r.errorCode === 'parse_error' ? /^Parse error: / : r.errorCode === 'missing_selector' ? /^Missing selector: / : /^Missing property: /,
    );
    expect(r.result).toBe(false);
    expect(r.outcomes).toEqual({});
    if (traced) expect(r.trace.at(-1)).toBe(r.errorCode === 'parse_error' ? r.error : `error: ${r.error}`);
  } else {
    expect(r.errorCode).toBeUndefined();
    if (outcomes) expect(Object.keys(r.outcomes).sort()).toEqual([...outcomes].sort());
    if (traced) expect(r.trace.at(-1)).toBe(`result: ${r.result}`);
  }
  if (!traced) expect(r.trace).toEqual([]);
}

const NOW = new Date('2025-06-15T12:00:00Z');

describe('fuzz', () => {
  it('the seeds are valid policies', () => {
    expect(SEEDS.length).toBeGreaterThan(100);
    for (const s of SEEDS.slice(0, 50)) expect(validate(s).valid, s).toBe(true);
  });

  it('compile throws only RuleParseError with a well-formed message and position', () => {
    fc.assert(
      fc.property(ruleText, (text) => {
        compileChecked(text);
      }),
      { numRuns: 800 },
    );
  }, 30_000);

  it('evaluate always returns a well-formed result (mutated texts, random data)', () => {
    fc.assert(
      fc.property(ruleText, data, fc.boolean(), (text, d, trace) => {
        const policy = compileChecked(text);
        const r = evaluate(text, d, { now: NOW, trace });
        wellFormed(r, policy?.outcomes ?? null, trace);
        if (policy) {
          const direct = policy.evaluate(d, { now: NOW, trace });
          wellFormed(direct, policy.outcomes, trace);
          expect(direct.result).toBe(r.result);
          expect(direct.error).toBe(r.error);
        }
      }),
      { numRuns: 600 },
    );
  }, 30_000);

  it('valid policies evaluate to a well-formed result on random data', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SEEDS), data, fc.boolean(), fc.integer({ min: -2e12, max: 5e12 }), (text, d, trace, now) => {
        const policy = compile(text);
        const r = policy.evaluate(d, { now, trace });
        wellFormed(r, policy.outcomes, trace);
        if (!trace) {
          const again = policy.evaluate(d, { now, trace: true });
          expect(again.result).toBe(r.result);
          expect(again.outcomes).toEqual(r.outcomes);
          expect(again.error).toBe(r.error);
        }
      }),
      { numRuns: 1000 },
    );
  }, 30_000);

  it('data that is not an object never breaks evaluation', () => {
    const policy = compile('if x.a == 1 or any x.items where (its.price > 1) -> ok.');
    for (const d of [null, undefined, 42, 'x', [], [{ x: { a: 1 } }], true, Object.create(null) as object]) {
      wellFormed(policy.evaluate(d, { now: NOW }), policy.outcomes, false);
      wellFormed(policy.evaluate(d, { now: NOW, trace: true }), policy.outcomes, true);
    }
  });

  it('deeply nested data and long texts finish quickly', () => {
    // As deep as JSON.parse accepts it: the trace must not overflow the stack printing it.
    const nestedText = `${'{"a":'.repeat(20_000)}{"price":5}${'}'.repeat(20_000)}`;
    const nested = JSON.parse(nestedText) as unknown;
    const policy = compile('if any x.items where (its.a.a.a.a is not empty) and the length of x.a is 1 -> ok.');
    for (const trace of [false, true]) {
      const r = policy.evaluate({ x: { items: [nested, nested], a: nested } }, { now: NOW, trace });
      wellFormed(r, policy.outcomes, trace);
      expect(r.result).toBe(true);
    }
    const deepArray = (): unknown => JSON.parse(`${'['.repeat(20_000)}1${']'.repeat(20_000)}`);
    const same = compile('if x.a is exactly x.b and x.c is x.d and x.e contains x.d and x.d is not in x.e -> ok.');
    for (const trace of [false, true]) {
      const r = same.evaluate(
        { x: { a: nested, b: JSON.parse(JSON.stringify({ a: 1 })) as unknown, c: deepArray(), d: deepArray(), e: [deepArray()] } },
        { now: NOW, trace },
      );
      wellFormed(r, same.outcomes, trace);
      expect(r.result).toBe(false);
      const equal = same.evaluate(
        { x: { a: nested, b: JSON.parse(nestedText) as unknown, c: deepArray(), d: deepArray(), e: [0, deepArray()] } },
        { now: NOW, trace },
      );
      wellFormed(equal, same.outcomes, trace);
      expect(equal.result).toBe(true);
    }
    const many =
      Array.from({ length: 300 }, (_, i) => `r${i}: if x.a${i} == ${i} or $r${i + 1} -> out ${i}.`).join('\n') +
      '\nr300: if x.a == 1 -> last.';
    const p = compile(many);
    wellFormed(p.evaluate({ x: {} }, { now: NOW }), p.outcomes, false);
    for (const n of [200, 1000, 5000]) {
      const deepGroups = `if ${'('.repeat(n)}x.a == 1${')'.repeat(n)} -> ok.`;
      const compiled = compileChecked(deepGroups);
      wellFormed(evaluate(deepGroups, { x: { a: 1 } }, { trace: true }), compiled?.outcomes ?? null, true);
    }
    const deepQuantifiers = `if ${'any x.l where ('.repeat(400)}its > 1${')'.repeat(400)} -> ok.`;
    const q = compileChecked(deepQuantifiers);
    wellFormed(evaluate(deepQuantifiers, { x: { l: [] } }), q?.outcomes ?? null, false);
    // Far beyond any stack: the nesting limit's parse error, never a RangeError.
    const tooDeep = `if ${'('.repeat(50_000)}x.a == 1${')'.repeat(50_000)} -> ok.`;
    expect(compileChecked(tooDeep)).toBeNull();
    expect(validate(tooDeep)).toEqual({
      valid: false,
      error: 'Parse error: line 1, column 260: conditions nested more than 256 levels deep',
    });
  }, 20_000);
});
