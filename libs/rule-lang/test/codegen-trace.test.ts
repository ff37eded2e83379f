/**
 * The generated traced evaluator (src/compile/codegen-trace.ts) against the closures and
 * renderTrace it replaces in trace mode.
 *
 * `trace: true` runs the generated traced evaluator; `traceTree: true` runs the closures, which
 * record the structured trace that renderTrace turns into lines; with `Function` disabled (as
 * under a Content-Security-Policy) `trace: true` runs the closures too. All three must give the
 * very same result — value, outcomes and their key order, error and code, and every trace line —
 * on the corpus (with data variants that remove and retype values, so every error path is taken),
 * on random policies and data, and in the focused cases below, whose lines are also written out.
 */

import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { check } from '../src/compile/compile.js';
import { CompiledPolicy, compile, evaluate, type EvaluateOptions, type EvaluationResult } from '../src/index.js';
import { json, plainString } from '../src/trace/text.js';
import { data as randomData, mutatedText, SEEDS } from './support/arbitraries.js';
import { compilable, compileWithoutCodegen, isTraceGenerated, same, variants, withoutCodegen } from './support/evaluators.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

const NOW = new Date('2025-06-15T12:00:00Z');

/** The result without its structured trace. */
function withoutTree(r: EvaluationResult): EvaluationResult {
  expect(r.traceTree).toBeDefined();
  const { traceTree: _tree, ...rest } = r;
  return rest;
}

/**
 * Evaluates `data` three ways and checks they agree: generated traced evaluator, closures with the
 * structured trace, closures without code generation. Returns the generated evaluator's result.
 */
function agree(generated: CompiledPolicy, closures: CompiledPolicy, data: unknown, now: Date | number = NOW): EvaluationResult {
  const lines = generated.evaluate(data, { now, trace: true });
  expect(lines.traceTree).toBeUndefined();
  same(lines, withoutTree(generated.evaluate(data, { now, traceTree: true })));
  same(lines, closures.evaluate(data, { now, trace: true }));
  // The trace ends as §10.2 says, whichever way it was made.
  expect(lines.trace.at(-1)).toBe(lines.error !== undefined ? `error: ${lines.error}` : `result: ${lines.result}`);
  return lines;
}

/** Compiles `text` both ways and checks the generated traced evaluator is the one `trace: true` uses. */
function both(text: string): { generated: CompiledPolicy; closures: CompiledPolicy } {
  const generated = compile(text);
  const closures = compileWithoutCodegen(text);
  expect(isTraceGenerated(generated)).toBe(true);
  expect(isTraceGenerated(closures)).toBe(false);
  return { generated, closures };
}

/** The trace lines of `text` on `data`, once checked to agree all three ways. */
function traceOf(text: string, data: unknown): string[] {
  const { generated, closures } = both(text);
  return agree(generated, closures, data).trace;
}

describe('generated traced evaluator agrees with the closures on the corpus', () => {
  it('covers most of the corpus', () => {
    expect(compilable.length).toBeGreaterThan(500);
  });

  it.each(compilable.map((c, i) => [i, c.note, c] as const))('#%i %s', (_i, _note, c) => {
    const { generated, closures } = both(c.rule);
    const now = new Date(c.now ?? '2025-06-15T12:00:00Z');
    for (const data of variants(c.data ?? {})) agree(generated, closures, data, now);
  });
});

// ------------------------------------------------------------------------------ random policies

/**
 * Random valid-looking policies in shorthand form: rule `r0` is golden, rule `rI` may reference
 * later rules only (no cycles), and every later rule is referenced. Conditions: comparisons with
 * literals, lists, periods, path operands, measures and `if present`; groups; any/all with `its`
 * paths and nested any/all; label references, also inside any/all.
 */
const LITERALS = ['1', '0', '-2.5', '3', '"a"', '"b"', '""', 'true', 'false', '2024-01-01', '"2024-01-01"', '"say \\"hi\\""'];
const WITH_LITERAL = ['==', '!=', '>', '>=', '<', '<=', 'contains', 'does not contain', 'is exactly', 'is later than', 'is earlier than'];
const ALONE = [
  'is empty',
  'is not empty',
  'is a valid email',
  'is a valid date',
  'is within 30 days',
  'is not within 2 years',
  'is older than 18 years',
  'is younger than 2 months',
  'matches pattern "^a"',
  'has the format "email"',
  'is in [1, "a", true, 2024-01-01]',
  'is not in ["a", 2]',
];
const WITH_PATH = ['==', '!=', '>', '<=', 'contains', 'is later than'];
const MEASURED = ['==', '!=', '>', '>=', '<', '<='];
const DATA_PATHS = ['x.a', 'x.b', 'x.l', 'x.n.a', 'x.n', 'y.a'];
const ITS_PATHS = ['its', 'its.a', 'its.b', 'its.l'];

function conditionText(depth: number, inAnyAll: boolean, later: readonly number[]): fc.Arbitrary<string> {
  const path = fc.constantFrom(...DATA_PATHS, ...(inAnyAll ? ITS_PATHS : []));
  const optional = fc.constantFrom('', '', ' if present');
  const comparison = fc.oneof(
    fc
      .tuple(path, fc.constantFrom(...WITH_LITERAL), fc.constantFrom(...LITERALS), optional)
      .map(([p, op, lit, o]) => `${p} ${op} ${lit}${o}`),
    fc.tuple(path, fc.constantFrom(...ALONE), optional).map(([p, op, o]) => `${p} ${op}${o}`),
    fc.tuple(path, fc.constantFrom(...WITH_PATH), path, optional).map(([p, op, q, o]) => `${p} ${op} ${q}${o}`),
    fc
      .tuple(
        fc.constantFrom('the length of', 'the number of'),
        path,
        fc.constantFrom(...MEASURED),
        fc.constantFrom('0', '1', '2', '3'),
        optional,
      )
      .map(([m, p, op, n, o]) => `${m} ${p} ${op} ${n}${o}`),
  );
  const options: fc.Arbitrary<string>[] = [comparison, comparison];
  if (later.length > 0) options.push(fc.constantFrom(...later).map((j) => `$r${j}`));
  if (depth > 0) {
    options.push(listText(depth - 1, inAnyAll, later).map((l) => `(${l})`));
    options.push(
      fc
        .tuple(fc.constantFrom('any', 'all'), path, fc.constantFrom('where', 'satisfies'), listText(depth - 1, true, later), optional)
        .map(([q, p, w, l, o]) => `${q} ${p} ${w} (${l})${o}`),
    );
  }
  return fc.oneof(...options);
}

function listText(depth: number, inAnyAll: boolean, later: readonly number[]): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.constantFrom(' and ', ' or '), conditionText(depth, inAnyAll, later)), { minLength: 1, maxLength: 4 })
    .map((items) => items.map(([op, c], i) => (i === 0 ? c : op + c)).join(''));
}

const policyText: fc.Arbitrary<string> = fc.integer({ min: 1, max: 4 }).chain((n) =>
  fc
    .tuple(
      ...Array.from({ length: n }, (_, i) =>
        listText(
          2,
          false,
          Array.from({ length: n - i - 1 }, (_, k) => i + k + 1),
        ),
      ),
    )
    .map((lists) => {
      // Every rule but the golden one must be referenced by an earlier rule.
      const all = lists.map((l) => l);
      for (let j = 1; j < all.length; j++) {
        if (!all.slice(0, j).some((l) => new RegExp(`\\$r${j}\\b`).test(l))) all[j - 1] = `${all[j - 1]} and $r${j}`;
      }
      return all.map((l, i) => `r${i}: if ${l} -> out ${i}.`).join('\n');
    }),
);

const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 5 }),
  fc.double({ noNaN: true }),
  fc.constantFrom(
    '',
    'a',
    'b',
    'abc',
    '2024-01-01',
    '2025-06-01',
    'mara@fjordstay.example',
    'say "hi"',
    'a\\b',
    'a😀b',
    '\ud800',
    'x'.repeat(300),
  ),
  fc.string({ maxLength: 6 }),
);
const { value: jsonValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.record({ a: tie('value'), b: tie('value'), l: tie('value') }, { requiredKeys: [] }),
  ),
}));
const policyData = fc.oneof(
  fc.record(
    { x: fc.record({ a: jsonValue, b: jsonValue, l: jsonValue, n: jsonValue }, { requiredKeys: [] }), y: jsonValue },
    { requiredKeys: [] },
  ),
  fc.record({
    x: fc.record({
      a: leaf,
      b: leaf,
      l: fc.array(fc.record({ a: leaf, b: leaf, l: fc.array(leaf) }, { requiredKeys: [] })),
      n: fc.record({ a: leaf }),
    }),
  }),
  jsonValue,
);

/** The policy, or null when the random text does not compile. */
function compileBoth(text: string): { generated: CompiledPolicy; closures: CompiledPolicy } | null {
  try {
    check(text);
  } catch {
    return null;
  }
  return both(text);
}

describe('generated traced evaluator agrees with the closures on random policies and data', () => {
  it('random policies built from every kind of condition', () => {
    let compiled = 0;
    fc.assert(
      fc.property(
        policyText,
        fc.array(policyData, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 4e12 }),
        (text, datas, now) => {
          const policies = compileBoth(text);
          if (policies === null) return;
          compiled++;
          for (const d of datas) agree(policies.generated, policies.closures, d, now);
        },
      ),
      { numRuns: 400 },
    );
    // The generator makes valid policies, so the property is not vacuous.
    expect(compiled).toBeGreaterThan(300);
  }, 60_000);

  it('corpus policies, mutated or not, on random data', () => {
    let compiled = 0;
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...SEEDS), mutatedText), fc.oneof(randomData, policyData), (text, d) => {
        const policies = compileBoth(text);
        if (policies === null) return;
        compiled++;
        agree(policies.generated, policies.closures, d);
      }),
      { numRuns: 600 },
    );
    expect(compiled).toBeGreaterThan(200);
  }, 60_000);
});

// ------------------------------------------------------------------------------ focused cases

describe('trace lines', () => {
  it('puts a lazily evaluated rule before the rule that needed it, once', () => {
    const text = [
      'if x.a == 1 and $b and $c and any x.none where ($d) -> ok.',
      'b: if x.d == 4 or $c -> bee.',
      'c: if x.c == 3 -> see.',
      'd: if x.e == 5 -> dee.',
    ].join('\n');
    expect(traceOf(text, { x: { a: 1, c: 3, d: 5, e: 5, none: [] } })).toEqual([
      'rule "see" [label c]',
      '  if $.x.c = 3: is equal to 3 -> true',
      '  => see = true',
      'rule "bee" [label b]',
      '  if $.x.d = 5: is equal to 4 -> false',
      '  or label $c -> true',
      '  => bee = true',
      'rule "dee" [label d]',
      '  if $.x.e = 5: is equal to 5 -> true',
      '  => dee = true',
      'rule "ok" [golden]',
      '  if $.x.a = 1: is equal to 1 -> true',
      '  and label $b -> true',
      '  and label $c -> true',
      '  and any of $.x.none [0 elements]: 0 matched -> false',
      '  => ok = false',
      'result: false',
    ]);
    // `dee` is referenced only inside an any whose array is empty: still evaluated, after the any, with its real value.
    expect(compile(text).evaluate({ x: { a: 1, c: 3, d: 5, e: 5, none: [] } }, { trace: true }).outcomes).toEqual({
      ok: false,
      bee: true,
      see: true,
      dee: true,
    });
  });

  it('shows an error inside any/all inside a referenced rule as the closures record it', () => {
    const text = 'if x.a == 1 and $k and x.b == 2 -> ok.\nk: if (x.c == 3 or any x.l where (its.v > 1 and (its.w is empty))) -> k.';
    expect(traceOf(text, { x: { a: 1, b: 2, c: 3, l: [{ v: 2 }, { w: 1 }, { v: 3 }] } })).toEqual([
      'rule "k" [label k]',
      '  if group -> false',
      '    if $.x.c = 3: is equal to 3 -> true',
      '    or any of $.x.l: Missing property: its.v',
      '      [0] -> true',
      '        if $.x.l[0].v = 2: is greater than 1 -> true',
      '        and group -> true',
      '          if $.x.l[0].w = null: is empty -> true',
      '      [1] -> false',
      '        if $.its.v: Missing property: its.v',
      'rule "ok" [golden]',
      '  if $.x.a = 1: is equal to 1 -> true',
      'error: Missing property: its.v',
    ]);
  });

  it('shows an error in the path of an any/all, and in a right-hand path', () => {
    expect(traceOf('if any x.l where (its > 1) and x.a > x.b.c -> ok.', { x: {} })).toEqual([
      'rule "ok" [golden]',
      '  if any of $.x.l: Missing property: x.l',
      'error: Missing property: x.l',
    ]);
    expect(traceOf('if the length of x.a > x.b.c -> ok.', { x: { a: 'abc', b: {} } })).toEqual([
      'rule "ok" [golden]',
      '  if length of $.x.a: Missing property: x.b.c',
      'error: Missing property: x.b.c',
    ]);
  });

  it('puts a group line before its conditions, nested, and false when an error stops it', () => {
    const text = 'if (x.a == 1 or (x.b == 2 and x.c == 3)) and x.d == 4 -> ok.';
    expect(traceOf(text, { x: { a: 0, b: 2, c: 3, d: 4 } })).toEqual([
      'rule "ok" [golden]',
      '  if group -> true',
      '    if $.x.a = 0: is equal to 1 -> false',
      '    or group -> true',
      '      if $.x.b = 2: is equal to 2 -> true',
      '      and $.x.c = 3: is equal to 3 -> true',
      '  and $.x.d = 4: is equal to 4 -> true',
      '  => ok = true',
      'result: true',
    ]);
    expect(traceOf(text, { x: { a: 0, b: 2 } })).toEqual([
      'rule "ok" [golden]',
      '  if group -> false',
      '    if $.x.a = 0: is equal to 1 -> false',
      '    or group -> false',
      '      if $.x.b = 2: is equal to 2 -> true',
      '      and $.x.c: Missing property: x.c',
      'error: Missing property: x.c',
    ]);
  });

  it('shows skipped optional conditions with the value found, or missing', () => {
    const text =
      'if x.a == 1 if present and x.b == 2 if present and x.c == x.d if present and any x.l where (its > 1) if present and x.e > x.f if present -> ok.';
    expect(traceOf(text, { x: { b: null, c: 'c', e: 3 } })).toEqual([
      'rule "ok" [golden]',
      '  if $.x.a: missing (if present) -> skipped, true',
      '  and $.x.b: missing (if present) -> skipped, true',
      '  and $.x.c: "c" (if present) -> skipped, true',
      '  and any of $.x.l: missing (if present) -> skipped, true',
      '  and $.x.e: 3 (if present) -> skipped, true',
      '  => ok = true',
      'result: true',
    ]);
    expect(traceOf('if y.q == 1 if present -> ok.', {})).toEqual([
      'rule "ok" [golden]',
      '  if $.y: missing (if present) -> skipped, true',
      '  => ok = true',
      'result: true',
    ]);
  });

  it('shows measures with the measured value', () => {
    const text =
      'if the length of x.s is 3 and the number of x.l is at least 2 and the length of x.l is 2 and the length of x.n is 0 ' +
      'and the number of x.s < 1 and x.e is empty and the length of x.m is 1 if present -> ok.';
    expect(traceOf(text, { x: { s: 'a😀c', l: [1, 2], n: null, m: 5 } })).toEqual([
      'rule "ok" [golden]',
      '  if length of $.x.s = 3: is equal to 3 -> true',
      '  and number of $.x.l = 2: is greater than or equal to 2 -> true',
      '  and length of $.x.l = 2: is equal to 2 -> true',
      '  and length of $.x.n = 0: is equal to 0 -> true',
      '  and number of $.x.s = null: is less than 1 -> false',
      '  and $.x.e = null: is empty -> true',
      '  and length of $.x.m = null: is equal to 1 -> false',
      '  => ok = false',
      'result: false',
    ]);
  });

  it('shows path operands and the JSON keys actually followed', () => {
    const text =
      'A **x** is ok if the __date of birth__ of the **x** is the __first seen__ of the **x** ' +
      'and any x.items where (its.price > x.limit and its is not empty) and the __nick name__ of the **x** is "a" if present.';
    expect(
      traceOf(text, { x: { date_of_birth: '2001-02-03', firstSeen: '2001-02-03', items: [{ price: 3 }], limit: 2, 'nick name': 'a' } }),
    ).toEqual([
      'rule "ok" [golden]',
      '  if $.x.date_of_birth = "2001-02-03": is equal to $.x.firstSeen (= "2001-02-03") -> true',
      '  and any of $.x.items [1 element]: 1 matched -> true',
      '    [0] -> true',
      '      if $.x.items[0].price = 3: is greater than $.x.limit (= 2) -> true',
      '      and $.x.items[0] = {"price":3}: is not empty -> true',
      '  and $.x["nick name"] = "a": is equal to "a" -> true',
      '  => ok = true',
      'result: true',
    ]);
    // A lenient lookup that stops shows the name as written where it stopped.
    expect(traceOf('A **x** is ok if the __nick name__ of the __pet__ of the **x** is "a" if present.', { x: { pet: {} } })).toEqual([
      'rule "ok" [golden]',
      '  if $.x.pet.nick name: missing (if present) -> skipped, true',
      '  => ok = true',
      'result: true',
    ]);
  });

  it('shows values that need escaping, long values, and nested its paths', () => {
    const text = 'if any x.l where (any its.m where (its.s is not "q") and its.t == "a") -> ok.';
    const long = 'y'.repeat(300);
    const lines = traceOf(text, { x: { l: [{ m: [{ s: 'say "hi"' }, { s: 'a\u2028\u0000b' }, { s: [long] }, { s: long }], t: '😀' }] } });
    expect(lines.slice(3, 12)).toEqual([
      '      if any of $.x.l[0].m [4 elements]: 4 matched -> true',
      '        [0] -> true',
      '          if $.x.l[0].m[0].s = "say \\"hi\\"": is not "q" -> true',
      '        [1] -> true',
      `          if $.x.l[0].m[1].s = ${JSON.stringify('a\u2028\u0000b')}: is not "q" -> true`,
      '        [2] -> true',
      `          if $.x.l[0].m[2].s = ${JSON.stringify([long]).slice(0, 240)}…: is not "q" -> true`,
      '        [3] -> true',
      `          if $.x.l[0].m[3].s = "${long}": is not "q" -> true`,
    ]);
    expect(lines[12]).toBe('      and $.x.l[0].t = "😀": is equal to "a" -> false');
  });

  it('writes element lines past the cached indices as below them', () => {
    const items = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? 'b' : 'a'));
    const lines = traceOf('if all x.l satisfies (its is "a") -> ok.', { x: { l: items } });
    expect(lines[1]).toBe('  if all of $.x.l [300 elements]: 257 matched -> false');
    expect(lines.slice(-6)).toEqual([
      '    [298] -> true',
      '      if $.x.l[298] = "a": is equal to "a" -> true',
      '    [299] -> true',
      '      if $.x.l[299] = "a": is equal to "a" -> true',
      '  => ok = false',
      'result: false',
    ]);
    expect(lines).toContain('    [294] -> false');
  });

  it('writes element lines of deeply nested any/all as the closures do', () => {
    // 20 levels put the innermost element lines at depth 41, past the cached depths.
    const levels = 20;
    const text = `if any x.l where (${'any its.l where ('.repeat(levels - 1)}its.v > 1${')'.repeat(levels)} -> ok.`;
    let data: unknown = { v: 2 };
    for (let i = 0; i < levels - 1; i++) data = { l: [data] };
    const lines = traceOf(text, { x: { l: [data] } });
    expect(lines).toHaveLength(1 + 2 * levels + 1 + 2);
    expect(lines.at(-4)).toBe(`${'  '.repeat(2 * levels)}[0] -> true`);
    expect(lines.at(-3)).toBe(`${'  '.repeat(2 * levels + 1)}if $.x.l[0]${'.l[0]'.repeat(levels - 1)}.v = 2: is greater than 1 -> true`);
  });

  it('puts the blocks of a long chain of references innermost first', () => {
    const n = 300;
    const text = `${Array.from({ length: n }, (_, i) => `r${i}: if x.a${i} == ${i} or $r${i + 1} -> out ${i}.`).join('\n')}\nr${n}: if x.a == 1 -> last.`;
    const values = Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, i === 0 ? -1 : i]));
    const lines = traceOf(text, { x: { a: 1, ...values } });
    expect(lines.slice(0, 4)).toEqual([
      'rule "last" [label r300]',
      '  if $.x.a = 1: is equal to 1 -> true',
      '  => last = true',
      'rule "out 299" [label r299]',
    ]);
    expect(lines.at(-2)).toBe('  => out 0 = true');
    // And an error at the far end unwinds every rule, none with its `=>` line.
    const failed = traceOf(text, { x: { ...values, a: undefined } });
    expect(failed.filter((l) => l.startsWith('rule '))).toHaveLength(n + 1);
    expect(failed.filter((l) => l.startsWith('  =>'))).toEqual([]);
  });

  it('tags rules with label, golden and subject', () => {
    const text =
      'A **guest** may book if the **guest** is known and $deposit is satisfied.\nA **guest** is known if guest.id is not empty.\ndeposit: if booking.amount >= 200 -> deposit received.';
    expect(traceOf(text, { guest: { id: 7 }, booking: { amount: 250 } }).filter((l) => l.startsWith('rule '))).toEqual([
      'rule "known" [subject guest]',
      'rule "deposit received" [label deposit]',
      'rule "may book" [golden]',
    ]);
  });
});

// ------------------------------------------------------------------------------ options and fallbacks

describe('trace options', () => {
  const text = 'if x.a == 1 and any x.l where (its > 1) -> ok.';
  const data = { x: { a: 1, l: [2] } };

  it('`trace: true` returns the lines only; `traceTree: true` also the structured trace', () => {
    const policy = compile(text);
    const lines = policy.evaluate(data, { trace: true });
    expect(Object.keys(lines)).toEqual(['result', 'outcomes', 'trace']);
    const tree = policy.evaluate(data, { traceTree: true });
    expect(Object.keys(tree)).toEqual(['result', 'outcomes', 'trace', 'traceTree']);
    expect(tree.trace).toEqual(lines.trace);
    expect(tree.traceTree?.rules[0]?.conditions[1]).toMatchObject({
      type: 'quantifier',
      path: '$.x.l',
      count: 1,
      matched: 1,
      result: true,
    });
    // `traceTree` implies the lines, with or without `trace`.
    same(policy.evaluate(data, { trace: false, traceTree: true }), tree);
    expect(policy.evaluate(data, { trace: false })).toEqual({ result: true, outcomes: { ok: true }, trace: [] });
  });

  it('on an error, `trace: true` returns the lines and no structured trace', () => {
    const r = compile(text).evaluate({ x: {} }, { trace: true });
    expect(r).toEqual({
      result: false,
      outcomes: {},
      trace: ['rule "ok" [golden]', '  if $.x.a: Missing property: x.a', 'error: Missing property: x.a'],
      error: 'Missing property: x.a',
      errorCode: 'missing_property',
    });
    expect(compile(text).evaluate({ x: {} }, { traceTree: true }).traceTree).toEqual({
      golden: 'ok',
      rules: [
        {
          outcome: 'ok',
          label: null,
          selector: 'x',
          result: false,
          conditions: [expect.objectContaining({ error: 'Missing property: x.a' })],
          error: 'Missing property: x.a',
        },
      ],
      error: 'Missing property: x.a',
    });
  });

  it('a parse error gives its message as the trace with either option', () => {
    for (const options of [{ trace: true }, { traceTree: true }] as EvaluateOptions[]) {
      const r = evaluate('if x.a == -> ok.', {}, options);
      expect(r.trace).toEqual([r.error]);
      expect(r.errorCode).toBe('parse_error');
    }
  });

  it('falls back to the closures without code generation, and for very deep nesting', () => {
    const csp = compileWithoutCodegen(text);
    expect(isTraceGenerated(csp)).toBe(false);
    same(csp.evaluate(data, { trace: true }), compile(text).evaluate(data, { trace: true }));
    expect(csp.evaluate(data, { trace: true }).traceTree).toBeUndefined();

    const depth = 80;
    const deep = `A **x** is ok if ${'('.repeat(depth)}the __a__ of the **x** is 1${')'.repeat(depth)}.`;
    const policy = compile(deep);
    expect(isTraceGenerated(policy)).toBe(false);
    const r = policy.evaluate({ x: { a: 1 } }, { trace: true });
    expect(r.trace).toHaveLength(depth + 4);
    expect(r.trace[depth + 1]).toBe(`${'  '.repeat(depth + 1)}if $.x.a = 1: is equal to 1 -> true`);
  });

  it('generates the traced evaluator once, on the first traced evaluation', () => {
    const policy = compile(text);
    let generated = 0;
    const real = globalThis.Function;
    vi.stubGlobal('Function', function Function(...args: string[]) {
      generated++;
      return real(...args);
    });
    policy.evaluate(data);
    expect(generated).toBe(0);
    policy.evaluate(data, { trace: true });
    policy.evaluate({}, { trace: true });
    expect(generated).toBe(1);
  });

  it('stays on the closures when generating the traced evaluator fails', () => {
    const policy = compile(text);
    const lines = withoutCodegen(() => policy.evaluate(data, { trace: true }));
    expect(isTraceGenerated(policy)).toBe(false);
    same(lines, withoutTree(policy.evaluate(data, { traceTree: true })));
  });
});

describe('generated traced source', () => {
  it('takes keys, names and outcomes only as string literals', () => {
    // Property names may hold quotes, backslashes, `${`, line separators and comment markers.
    const key = "a'b\\c${x}\u2028d`); throw 1; // </script>";
    const text = `A **thing's** is isn't ok if the __${key}__ of the **thing's** is "v" and the __${key}__ of the **thing's** is "w" if present.`;
    const { generated, closures } = both(text);
    for (const data of [{ "thing's": { [key]: 'v' } }, { "thing's": {} }, { "thing's": { [key]: null } }]) agree(generated, closures, data);
    expect(generated.evaluate({ "thing's": { [key]: 'v' } }, { trace: true }).trace[1]).toBe(
      `  if $["thing's"][${JSON.stringify(key)}] = "v": is equal to "v" -> true`,
    );
  });

  it('builds outcomes as the closures do even for an outcome named `__proto__`', () => {
    const build = (): CompiledPolicy => {
      const checked = check('if x.a == 1 -> placeholder.');
      checked.ast.rules[0].outcome = '__proto__';
      return new CompiledPolicy(checked, () => '');
    };
    const generated = build();
    const closures = withoutCodegen(build);
    const a = agree(generated, closures, { x: { a: 1 } });
    expect(Object.getPrototypeOf(a.outcomes)).toBe(Object.prototype);
    expect(a.trace[0]).toBe('rule "__proto__" [golden]');
  });
});

describe('json', () => {
  it('is JSON.stringify for primitives, and a string in quotes where plainString says so', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          // any UTF-16 code units, lone surrogates included (cheaper than unit 'binary', which takes seconds)
          fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 30 }),
          fc.string({ unit: 'grapheme', maxLength: 30 }),
          fc.constantFrom('a"b', 'a\\b', '\u001f', '\ud800', '😀'),
        ),
        (s) => {
          expect(json(s)).toBe(JSON.stringify(s));
          if (plainString(s)) expect(json(s)).toBe(`"${s}"`);
          // Anything JSON.stringify would escape is not plain.
          if (JSON.stringify(s) !== `"${s}"`) expect(plainString(s)).toBe(false);
        },
      ),
    );
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.boolean(), fc.constant(null)), (v) => {
        expect(json(v)).toBe(JSON.stringify(v));
      }),
    );
    expect([plainString('abc'), plainString(''), plainString('a"'), plainString('\\'), plainString('\n'), plainString('😀')]).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(json(undefined)).toBe('null');
    expect(json(-0)).toBe('0');
  });
});
