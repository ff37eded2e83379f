/**
 * One nesting limit (LANGUAGE.md §9.2): conditions nested more than 256 levels deep — parentheses
 * and any/all bodies counted together — are a parse error with a position, the same on every
 * thread whatever its stack; 256 levels compile and evaluate on every evaluator.
 */

import { describe, expect, it } from 'vitest';
import { compile, evaluate, MAX_NESTING, validate } from '../src/index.js';
import { compileWithoutCodegen } from './support/evaluators.js';

const groups = (n: number): string => `if ${'('.repeat(n)}x.a > 1${')'.repeat(n)} -> ok.`;
/** `q` any/all bodies inside `g` groups. */
const mixed = (g: number, q: number): string =>
  `if ${'('.repeat(g)}${'any x.l where ('.repeat(q)}its > 1${')'.repeat(q)}${')'.repeat(g)} -> ok.`;
const message = (column: number) => `Parse error: line 1, column ${column}: conditions nested more than 256 levels deep`;

describe('the nesting limit', () => {
  it('is 256 levels', () => {
    expect(MAX_NESTING).toBe(256);
  });

  it('accepts 256 nested parentheses and evaluates them the same on every evaluator', () => {
    const text = groups(256);
    expect(validate(text)).toEqual({ valid: true, error: null });
    for (const policy of [compile(text), compileWithoutCodegen(text)]) {
      expect(policy.evaluate({ x: { a: 2 } })).toEqual({ result: true, outcomes: { ok: true }, trace: [] });
      const traced = policy.evaluate({ x: { a: 2 } }, { trace: true, traceTree: true });
      expect(traced.result).toBe(true);
      expect(traced.trace.at(-1)).toBe('result: true');
      expect(policy.evaluate({ x: {} }).error).toBe('Missing property: x.a');
    }
  });

  it('refuses 257 nested parentheses with a parse error at the 257th', () => {
    // `if ` is three characters: the 257th parenthesis is column 260.
    expect(validate(groups(257))).toEqual({ valid: false, error: message(260) });
    expect(evaluate(groups(257), { x: { a: 2 } })).toMatchObject({ result: false, error: message(260), errorCode: 'parse_error' });
  });

  it('counts any/all bodies and parentheses together', () => {
    expect(validate(mixed(128, 128))).toEqual({ valid: true, error: null });
    expect(compile(mixed(128, 128)).evaluate({ x: { l: [2] } }).result).toBe(true);
    expect(validate(mixed(128, 129))).toMatchObject({
      valid: false,
      error: expect.stringContaining('conditions nested more than 256 levels deep'),
    });
    expect(validate(mixed(0, 257)).error).toBe(message(3 + 257 * 'any x.l where ('.length));
  });

  it('does not count the parentheses of date(…)', () => {
    const text = `if ${'('.repeat(256)}x.d is later than date(2024-01-01)${')'.repeat(256)} -> ok.`;
    expect(validate(text)).toEqual({ valid: true, error: null });
  });

  it('answers 3,000 levels with the same positioned error, whatever the stack left', () => {
    const here = evaluate(groups(3000), { x: { a: 2 } });
    expect(here).toMatchObject({ result: false, error: message(260), errorCode: 'parse_error' });
    // The same call with most of the stack already used: the count does not depend on it.
    const deepCall = (n: number): unknown => (n === 0 ? evaluate(groups(3000), { x: { a: 2 } }) : deepCall(n - 1));
    expect(deepCall(5000)).toEqual(here);
  });

  it('refuses far deeper nesting with the same positioned error, never a stack overflow', () => {
    expect(validate(groups(50_000))).toEqual({ valid: false, error: message(260) });
  });
});
