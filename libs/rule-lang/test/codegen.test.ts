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
import { CompiledPolicy, StepBudget, compile } from '../src/index.js';
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

describe('rules written inline or as functions', () => {
  /** The generated source of `text`'s no-trace evaluator (the body handed to `Function`). */
  function sourceOf(text: string): string {
    const sources: string[] = [];
    const real = globalThis.Function;
    vi.stubGlobal(
      'Function',
      new Proxy(real, {
        construct(target, args: string[]) {
          sources.push(args[args.length - 1]);
          return Reflect.construct(target, args) as object;
        },
      }),
    );
    try {
      compile(text);
    } finally {
      vi.unstubAllGlobals();
    }
    return sources[0];
  }

  /** Every step limit up to what `data` needs: the same result and the same steps used as the closures. */
  function agreeAtEveryLimit(text: string, datas: unknown[]): void {
    const generated = compile(text);
    const closures = compileWithoutCodegen(text);
    expect(isGenerated(generated)).toBe(true);
    for (const data of datas) {
      const full = new StepBudget(1_000_000);
      same(generated.evaluate(data, { stepBudget: full }), closures.evaluate(data));
      for (let limit = 0; limit <= full.used; limit++) {
        const a = new StepBudget(limit);
        const b = new StepBudget(limit);
        same(generated.evaluate(data, { stepBudget: a }), closures.evaluate(data, { stepBudget: b }));
        expect(a.used).toBe(b.used);
      }
    }
  }

  // `$twice` is referenced twice (a function); `$once` once, inside an any/all (inline, run on the
  // first element only); `$inner` once, from `$once` (inline within inline).
  const MIXED = `A **x** is ok if $twice and any of x.items where ($once or its.v > 1) and $other.
twice: if x.a == 1 -> twice.
once: if x.b is in [1, 2] and $inner -> once.
inner: if x.c is not empty and $twice -> inner.
other: if x.a != 2 or $twice -> other.`;
  const MIXED_DATA = { x: { a: 1, b: 2, c: 'z', items: [{ v: 0 }, { v: 2 }] } };

  it('writes a rule referenced once inline, and one referenced more often, or inside an any/all, as a function', () => {
    const source = sourceOf(MIXED);
    expect(source).toContain('function r1(');
    // `once` is referenced inside an any: it is also called after it, for an array that never ran it.
    expect(source).toContain('function r2(');
    expect(source).not.toContain('function r3(');
    expect(source).not.toContain('function r0(');
    expect(compile(MIXED).evaluate(MIXED_DATA)).toEqual({
      result: true,
      outcomes: { ok: true, twice: true, once: true, inner: true, other: true },
      trace: [],
    });
  });

  it('agrees with the closures on results, errors and steps at every budget', () => {
    const variants = [
      MIXED_DATA,
      { x: { a: 2, b: 3, c: '', items: [] } },
      { x: { a: 1, items: [{ v: 0 }] } },
      { x: { a: 1, b: 1, items: [{ v: 0 }] } },
      { x: { a: 1, b: 1, c: 'z', items: [{}, { v: 2 }] } },
    ];
    agreeAtEveryLimit(MIXED, variants);
  });

  it('calls rules once a function holds its share of conditions, or nests too deeply', () => {
    // A chain of 80 rules, each referenced once: more than one function takes in.
    const chain = Array.from({ length: 80 }, (_, i) =>
      i < 79 ? `r${i}: if x.a >= ${i} and $r${i + 1} -> o${i}.` : `r${i}: if x.a >= 0 -> o${i}.`,
    );
    const text = chain.join('\n');
    const source = sourceOf(text);
    expect(source).toMatch(/function r\d+\(/);
    agreeAtEveryLimit(text, [{ x: { a: 100 } }, { x: { a: 40 } }, { x: {} }]);
    // Two rules nested 40 deep each: inlined, the nesting would pass the cap.
    const deep = (inner: string) => `${'('.repeat(40)}${inner}${')'.repeat(40)}`;
    const nested = `if ${deep('x.a == 1 and $b')} -> a.\nb: if ${deep('x.b == 2')} -> b.`;
    expect(sourceOf(nested)).toContain('function r1(');
    agreeAtEveryLimit(nested, [{ x: { a: 1, b: 2 } }, { x: { a: 1 } }]);
  });
});
