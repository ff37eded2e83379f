/**
 * Unpaired UTF-16 surrogates: rule text holding one is a parse error in every entry point (the
 * service refuses such text in any request), and strings compare by code points, so half of a
 * character never matches, whichever evaluator runs.
 */

import { describe, expect, it } from 'vitest';
import { compile, evaluate, explain, isRuleParseError, validate } from '../src/index.js';
import { compileWithoutCodegen } from './support/evaluators.js';

const message = (line: number, column: number, unit: string) =>
  `Parse error: line ${line}, column ${column}: unpaired UTF-16 surrogate \`\\u${unit}\`: the text must be well-formed Unicode`;

describe('rule text with an unpaired surrogate', () => {
  it('is a parse error at the surrogate in compile, evaluate, validate and explain', () => {
    const text = 'A **x** is ok if the __s__ of the **x** contains "\ude00".';
    let thrown: unknown;
    try {
      compile(text);
    } catch (err) {
      thrown = err;
    }
    expect(isRuleParseError(thrown)).toBe(true);
    expect((thrown as Error).message).toBe(message(1, 51, 'de00'));
    expect(evaluate(text, { x: { s: '😀' } })).toEqual({
      result: false,
      outcomes: {},
      trace: [],
      error: message(1, 51, 'de00'),
      errorCode: 'parse_error',
    });
    expect(validate(text)).toEqual({ valid: false, error: message(1, 51, 'de00') });
    expect(explain(text).error).toBe(message(1, 51, 'de00'));
  });

  it('counts lines and code points before it, and finds a lone high half too', () => {
    const text = '# 😀 comment\nA **x** is ok if x.s is "😀\ud83d".';
    expect(validate(text).error).toBe(message(2, 27, 'd83d'));
  });

  it('accepts well-formed pairs', () => {
    expect(compile('A **x** is ok if the __s__ of the **x** contains "😀".').evaluate({ x: { s: 'a 😀 b' } }).result).toBe(true);
  });
});

describe('strings compare by code points', () => {
  const policy = 'A **x** is ok if the __s__ of the **x** contains the __t__ of the **x**.';
  const cases: Array<[string, string, boolean]> = [
    ['😀', '\ude00', false], // the low half of the pair
    ['😀', '\ud83d', false], // the high half
    ['a😀b', '\ude00b', false],
    ['a😀b', 'a\ud83d', false],
    ['a \ude00 b', '\ude00', true], // a lone half in the data is a code point of its own
    ['a 😀 b', '😀', true],
  ];
  it.each(cases)('%j contains %j is %s on every evaluator', (s, t, want) => {
    for (const p of [compile(policy), compileWithoutCodegen(policy)]) {
      expect(p.evaluate({ x: { s, t } }).result).toBe(want);
      expect(p.evaluate({ x: { s, t } }, { trace: true }).result).toBe(want);
      expect(p.evaluate({ x: { s, t } }, { traceTree: true }).result).toBe(want);
    }
  });

  it('in an array of strings an element is one value: no half of it is found', () => {
    expect(compile('A **x** is ok if x.l contains x.t.').evaluate({ x: { l: ['😀'], t: '\ude00' } }).result).toBe(false);
  });
});
