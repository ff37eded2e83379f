/**
 * The generated no-trace evaluator (src/compile/codegen.ts) against the closures it replaces.
 *
 * Every corpus policy is compiled twice: normally (generated evaluator) and with `Function`
 * disabled, as under a Content-Security-Policy (closure fallback). Both must give the very same
 * result — value, outcomes and their key order, error message and code — for the case's data and
 * for variants of it that remove and retype values (so missing-data errors and their order are
 * covered). Trace mode has its own generated evaluator: codegen-trace.test.ts.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { check } from '../src/compile/compile.js';
import { CompiledPolicy, compile } from '../src/index.js';
import { compilable, compileWithoutCodegen, isGenerated, same, variants, withoutCodegen } from './support/evaluators.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('generated evaluator agrees with the closures on the corpus', () => {
  it('covers most of the corpus', () => {
    expect(compilable.length).toBeGreaterThan(500);
  });

  it.each(compilable.map((c, i) => [i, c.note, c] as const))('#%i %s', (_i, _note, c) => {
    const generated = compile(c.rule);
    const closures = compileWithoutCodegen(c.rule);
    expect(isGenerated(generated)).toBe(true);
    expect(isGenerated(closures)).toBe(false);
    const now = new Date(c.now ?? '2025-06-15T12:00:00Z');
    for (const data of variants(c.data ?? {})) {
      same(generated.evaluate(data, { now }), closures.evaluate(data, { now }));
    }
  });
});

describe('generated source', () => {
  it('takes keys and outcome names only as string literals', () => {
    // Property names may hold quotes, backslashes, `${`, line separators and comment markers.
    const key = "a'b\\c${x}\u2028d`); throw 1; // </script>";
    const text = `A **thing's** is isn't ok if the __${key}__ of the **thing's** is "v".`;
    const policy = compile(text);
    expect(isGenerated(policy)).toBe(true);
    const data = { "thing's": { [key]: 'v' } };
    const closures = compileWithoutCodegen(text);
    same(policy.evaluate(data), closures.evaluate(data));
    expect(policy.evaluate(data).result).toBe(true);
    same(policy.evaluate({ "thing's": {} }), closures.evaluate({ "thing's": {} }));
    expect(policy.evaluate({ "thing's": {} }).error).toBe(`Missing property: thing's.${key}`);
  });

  it('builds outcomes as the closures do even for an outcome named `__proto__`', () => {
    // The language cannot spell that outcome (it lexes as a property); the guard is defensive, so
    // the checked policy is edited directly.
    const build = (): CompiledPolicy => {
      const checked = check('if x.a == 1 -> placeholder.');
      checked.ast.rules[0].outcome = '__proto__';
      return new CompiledPolicy(checked, () => '');
    };
    const generated = build();
    const closures = withoutCodegen(build);
    expect(isGenerated(generated)).toBe(true);
    expect(isGenerated(closures)).toBe(false);
    const a = generated.evaluate({ x: { a: 1 } });
    same(a, closures.evaluate({ x: { a: 1 } }));
    expect(Object.getPrototypeOf(a.outcomes)).toBe(Object.prototype);
  });

  it('falls back to the closures for very deep nesting', () => {
    const depth = 80;
    const text = `A **x** is ok if ${'('.repeat(depth)}the __a__ of the **x** is 1${')'.repeat(depth)}.`;
    const policy = compile(text);
    expect(isGenerated(policy)).toBe(false);
    expect(policy.evaluate({ x: { a: 1 } }).result).toBe(true);
  });

  it('falls back to the closures when Function is disabled, and they still evaluate', () => {
    const policy = compileWithoutCodegen('A **x** is ok if the __a__ of the **x** is 1 and the __b__ of the **x** is 2.');
    expect(isGenerated(policy)).toBe(false);
    expect(policy.evaluate({ x: { a: 1, b: 2 } })).toEqual({ result: true, outcomes: { ok: true }, trace: [] });
    expect(policy.evaluate({ x: { a: 1 } })).toEqual({
      result: false,
      outcomes: {},
      trace: [],
      error: 'Missing property: x.b',
      errorCode: 'missing_property',
    });
  });
});
