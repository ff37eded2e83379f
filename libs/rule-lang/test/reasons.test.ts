/**
 * Reasons (LANGUAGE.md §10.4): which conditions decide, the entries' shape, the sentence, every
 * operator both ways, and that an evaluation without reasons is exactly what it was. The corpus
 * (test/cases) runs with reasons too: the result, outcomes and error never change.
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compile, evaluate, type Reason } from '../src/index.js';
import {
  CATALOGUE,
  isOperatorEntry,
  oppositePhrase,
  phraseOf,
  type CanonicalOperator,
  type CatalogueRow,
  type OperatorEntry,
} from '../src/operators/index.js';

const NOW = Date.UTC(2026, 0, 15, 12);

function reasonsOf(rule: string, data: unknown) {
  const r = evaluate(rule, data, { reasons: true, now: NOW });
  if (!r.reasons) throw new Error('no reasons');
  return r.reasons;
}

describe('the shape', () => {
  it('gives the example of the contract: a failed condition with its path, value and place', () => {
    const rule = 'A **driver** gets a licence\n  if the __age__ of the **driver** is at least 17.';
    expect(reasonsOf(rule, { driver: { age: 16 } })).toEqual({
      result: false,
      sentence: 'a licence is false because the age of the driver (16) is not at least 17',
      because: [
        {
          kind: 'condition',
          rule: 'a licence',
          text: 'the __age__ of the **driver** is at least 17',
          holds: false,
          path: 'driver.age',
          value: 16,
          line: 2,
          column: 6,
        },
      ],
    });
  });

  it('keeps the contract key order', () => {
    const r = reasonsOf('if driver.age >= 17 -> licence.', { driver: { age: 16 } });
    expect(Object.keys(r)).toEqual(['result', 'sentence', 'because']);
    expect(Object.keys(r.because[0])).toEqual(['kind', 'rule', 'text', 'holds', 'path', 'value', 'line', 'column']);
  });

  it('names the JSON keys found, and the element of an its path', () => {
    const rule = 'if any of applicant.past_offences satisfies (its.points > 3) -> flagged.';
    const r = reasonsOf(rule, { applicant: { pastOffences: [{ points: 1 }, { points: 5 }] } });
    expect(r.because[0]).toMatchObject({ kind: 'any', path: 'applicant.pastOffences', element: 1 });
    expect(r.because[0].because![0]).toMatchObject({ path: 'applicant.pastOffences[1].points', value: 5, text: 'its.points > 3' });
  });
});

describe('which conditions decide', () => {
  const and = 'if x.a > 1 and x.b > 1 and x.c > 1 -> ok.';
  const or = 'if x.a > 1 or x.b > 1 or x.c > 1 -> ok.';
  const texts = (because: Reason[]) => because.map((b) => b.text);

  it('an and that fails: every false operand, all of them evaluated', () => {
    expect(texts(reasonsOf(and, { x: { a: 0, b: 2, c: 0 } }).because)).toEqual(['x.a > 1', 'x.c > 1']);
  });
  it('an and that holds: every operand', () => {
    expect(texts(reasonsOf(and, { x: { a: 2, b: 2, c: 2 } }).because)).toEqual(['x.a > 1', 'x.b > 1', 'x.c > 1']);
  });
  it('an or that holds: the first operand that holds', () => {
    expect(texts(reasonsOf(or, { x: { a: 0, b: 2, c: 2 } }).because)).toEqual(['x.b > 1']);
  });
  it('an or that fails: every operand', () => {
    expect(texts(reasonsOf(or, { x: { a: 0, b: 0, c: 0 } }).because)).toEqual(['x.a > 1', 'x.b > 1', 'x.c > 1']);
  });
  it('and binds tighter: an or of and-runs keeps the holding run, or the false operands of every run', () => {
    const rule = 'if x.a > 1 and x.b > 1 or x.c > 1 and x.d > 1 -> ok.';
    expect(texts(reasonsOf(rule, { x: { a: 0, b: 2, c: 2, d: 2 } }).because)).toEqual(['x.c > 1', 'x.d > 1']);
    expect(texts(reasonsOf(rule, { x: { a: 0, b: 2, c: 2, d: 0 } }).because)).toEqual(['x.a > 1', 'x.d > 1']);
  });
  it('a group gives its own deciding operands', () => {
    const rule = 'if (x.a > 1 or x.b > 1) and x.c > 1 -> ok.';
    expect(texts(reasonsOf(rule, { x: { a: 0, b: 0, c: 2 } }).because)).toEqual(['x.a > 1', 'x.b > 1']);
  });

  it('a reference: the referenced rule’s own reasons under a rule entry, with the reference as written', () => {
    const rule = `A **driver** may drive if the **driver** has a licence and the __sober__ of the **driver** is true.
A **driver** has a licence if the __age__ of the **driver** is at least 17.`;
    const r = reasonsOf(rule, { driver: { age: 16, sober: true } });
    expect(r.because).toHaveLength(1);
    expect(r.because[0]).toMatchObject({
      kind: 'rule',
      rule: 'may drive',
      text: 'the **driver** has a licence',
      holds: false,
      line: 1,
      column: 27,
    });
    expect(r.because[0].because).toEqual([expect.objectContaining({ kind: 'condition', rule: 'a licence', value: 16, holds: false })]);
    expect(r.sentence).toBe('may drive is false because a licence is false (because the age of the driver (16) is not at least 17)');
  });

  it('labels and shorthand rules with their own text', () => {
    const rule = 'adult: if driver.age >= 18 -> adult.\nif $adult is satisfied -> may vote.';
    const r = reasonsOf(rule, { driver: { age: 20 } });
    expect(r.because[0]).toMatchObject({ kind: 'rule', rule: 'may vote', text: '$adult is satisfied', holds: true });
    expect(r.because[0].because![0]).toMatchObject({ rule: 'adult', text: 'driver.age >= 18', holds: true, line: 1, column: 11 });
    expect(r.sentence).toBe('may vote is true because adult is true (because driver.age (20) >= 18)');
  });

  it('negations as written, worded by their positive form when they fail', () => {
    const rule = 'A **pet** is welcome if the __species__ of the **pet** is not "snake".';
    expect(reasonsOf(rule, { pet: { species: 'cat' } }).sentence).toBe(
      'welcome is true because the species of the pet ("cat") is not "snake"',
    );
    const failed = reasonsOf(rule, { pet: { species: 'snake' } });
    expect(failed.because[0].text).toBe('the __species__ of the **pet** is not "snake"');
    expect(failed.sentence).toBe('welcome is false because the species of the pet ("snake") is "snake"');
  });

  describe('any and all', () => {
    const any = 'if any of order.items satisfies (its.price > 100) -> big.';
    const all = 'if all of order.items satisfies (its.price > 100) -> big.';
    const items = (...prices: number[]) => ({ order: { items: prices.map((price) => ({ price })) } });

    it('any that holds: the first element that does, with its reasons', () => {
      const r = reasonsOf(any, items(5, 200, 300));
      expect(r.because).toEqual([
        expect.objectContaining({ kind: 'any', holds: true, element: 1, because: [expect.objectContaining({ value: 200, holds: true })] }),
      ]);
      expect(r.sentence).toBe('big is true because element 1 of order.items satisfies it (its.price (200) > 100)');
    });
    it('any that fails: one entry, none of the N elements does', () => {
      const r = reasonsOf(any, items(5, 6));
      expect(r.because).toEqual([expect.objectContaining({ kind: 'any', holds: false, count: 2 })]);
      expect(r.because[0].because).toBeUndefined();
      expect(r.sentence).toBe('big is false because none of the 2 elements of order.items satisfies it');
    });
    it('all that fails: the first element that does not, with its reasons', () => {
      const r = reasonsOf(all, items(200, 5, 6));
      expect(r.because).toEqual([
        expect.objectContaining({ kind: 'all', holds: false, element: 1, because: [expect.objectContaining({ value: 5, holds: false })] }),
      ]);
      expect(r.sentence).toBe('big is false because element 1 of order.items does not satisfy it (its.price (5) is not greater than 100)');
    });
    it('all that holds: one entry for the N elements', () => {
      const r = reasonsOf(all, items(200, 300));
      expect(r.because).toEqual([expect.objectContaining({ kind: 'all', holds: true, count: 2 })]);
      expect(r.sentence).toBe('big is true because all 2 elements of order.items satisfy it');
    });
    it('an any over an empty list fails with a count of 0', () => {
      expect(reasonsOf(any, items()).because[0]).toMatchObject({ kind: 'any', holds: false, count: 0 });
    });
  });

  it('missing data: a missing entry with the absent path and the error, under the references that led there', () => {
    const rule = 'if $adult is satisfied -> may vote.\nadult: if driver.age >= 18 -> adult.';
    const r = evaluate(rule, { driver: {} }, { reasons: true });
    expect(r.errorCode).toBe('missing_property');
    expect(r.reasons).toEqual({
      result: false,
      sentence: 'may vote is false because adult is false (because driver.age is missing (Missing property: driver.age))',
      because: [
        {
          kind: 'rule',
          rule: 'may vote',
          text: '$adult is satisfied',
          holds: false,
          line: 1,
          column: 4,
          because: [
            {
              kind: 'missing',
              rule: 'adult',
              text: 'driver.age >= 18',
              holds: false,
              path: 'driver.age',
              error: 'Missing property: driver.age',
              line: 2,
              column: 11,
            },
          ],
        },
      ],
    });
  });

  it('an optional condition skipped holds, with no value', () => {
    const r = reasonsOf('if driver.age >= 18 if present -> ok.', { driver: {} });
    expect(r.because[0]).toEqual({
      kind: 'condition',
      rule: 'ok',
      text: 'driver.age >= 18 if present',
      holds: true,
      path: 'driver.age',
      line: 1,
      column: 4,
    });
    expect(r.sentence).toBe('ok is true because driver.age is absent, and the condition is optional');
  });

  it('a measure shows the measured value', () => {
    const r = reasonsOf(
      'A **order** is small if the number of __items__ of the **order** is at most 2.'.replace('at most', 'no more than'),
      {
        order: { items: [1, 2, 3] },
      },
    );
    expect(r.because[0]).toMatchObject({ path: 'order.items', value: 3, holds: false });
    expect(r.sentence).toBe('small is false because the number of items of the order (3) is not less than or equal to 2');
  });

  it('an exhausted step budget: an error entry', () => {
    const r = evaluate('if all of x.a satisfies (its > 0) -> ok.', { x: { a: [1, 2, 3, 4] } }, { reasons: true, stepBudget: 3 });
    expect(r.errorCode).toBe('budget_exceeded');
    expect(r.reasons!.because[0]).toMatchObject({ kind: 'error', holds: false, error: r.error });
  });

  it('a parse error: one error entry with its place', () => {
    const r = evaluate('if x.a >= -> ok.', {}, { reasons: true });
    expect(r.errorCode).toBe('parse_error');
    expect(r.reasons).toEqual({
      result: false,
      sentence: r.error,
      because: [{ kind: 'error', rule: '', text: '', holds: false, error: r.error, line: 1, column: expect.any(Number) as number }],
    });
  });
});

/** An operand and a value that makes the positive operator hold and one that makes it fail, per operator. */
const FIXTURES: Record<CanonicalOperator, { operand: string; holds: unknown; fails: unknown }> = {
  'is greater than': { operand: '5', holds: 6, fails: 4 },
  'is greater than or equal to': { operand: '5', holds: 5, fails: 4 },
  'is less than': { operand: '5', holds: 4, fails: 6 },
  'is no more than': { operand: '5', holds: 5, fails: 6 },
  'is equal to': { operand: '5', holds: 5, fails: 6 },
  'is exactly': { operand: '5', holds: 5, fails: '5' },
  'is in': { operand: '["a", "b"]', holds: 'a', fails: 'c' },
  contains: { operand: '"b"', holds: ['a', 'b'], fails: ['x'] },
  'is a valid email': { operand: '', holds: 'ada@example.org', fails: 'nope' },
  'is a valid uuid': { operand: '', holds: '123e4567-e89b-12d3-a456-426614174000', fails: 'x' },
  'is a valid date': { operand: '', holds: '2024-02-29', fails: '2023-02-30' },
  'format check': { operand: '"email"', holds: 'ada@example.org', fails: 'nope' },
  pattern: { operand: '"^a+$"', holds: 'aaa', fails: 'b' },
  period: { operand: '30 days', holds: '2026-01-10', fails: '2000-01-01' },
  'is empty': { operand: '', holds: '', fails: 'x' },
  'is later than': { operand: '2020-01-01', holds: '2021-01-01', fails: '2019-01-01' },
  'is earlier than': { operand: '2020-01-01', holds: '2019-01-01', fails: '2021-01-01' },
  'is older than': { operand: '18 years', holds: '1990-01-01', fails: '2026-01-10' },
  'is younger than': { operand: '18 years', holds: '2026-01-10', fails: '1990-01-01' },
};

describe('every operator of the catalogue, both ways', () => {
  const entries: OperatorEntry[] = (CATALOGUE as readonly CatalogueRow[]).filter(isOperatorEntry);

  it('has a fixture for every operator', () => {
    expect(Object.keys(FIXTURES).sort()).toEqual(entries.map((e) => e.name).sort());
  });

  for (const entry of entries) {
    const name = entry.name as CanonicalOperator;
    const fx = FIXTURES[name];
    const written = [
      ...new Set(
        [...entry.forms.map((f) => [phraseOf(f), false] as const), ...entry.negation.forms.map((f) => [phraseOf(f), true] as const)].map(
          (x) => JSON.stringify(x),
        ),
      ),
    ].map((x) => JSON.parse(x) as [string, boolean]);
    for (const [phrase, negated] of written) {
      it(`${phrase}${negated ? ' (negative)' : ''}: its own words when it holds, the opposite form when not`, () => {
        const operand = fx.operand === '' ? '' : ` ${fx.operand}`;
        const rule = `if x.v ${phrase}${operand} -> ok.`;
        const opposite = oppositePhrase(name, phrase, negated);
        // The opposite is a form of the other side of the catalogue entry, and leads back.
        const otherSide = (negated ? entry.forms : entry.negation.forms).map(phraseOf);
        expect(otherSide).toContain(opposite);
        const sameSide = (negated ? entry.negation.forms : entry.forms).map(phraseOf);
        expect(sameSide).toContain(oppositePhrase(name, opposite, !negated));
        const [holdsValue, failsValue] = negated ? [fx.fails, fx.holds] : [fx.holds, fx.fails];
        const held = reasonsOf(rule, { x: { v: holdsValue } });
        expect(held.result).toBe(true);
        expect(held.because[0]).toMatchObject({ kind: 'condition', holds: true, text: `x.v ${phrase}${operand}` });
        expect(held.sentence).toBe(`ok is true because x.v (${JSON.stringify(holdsValue)}) ${phrase}${operand}`);
        const failed = reasonsOf(rule, { x: { v: failsValue } });
        expect(failed.result).toBe(false);
        expect(failed.because[0]).toMatchObject({ kind: 'condition', holds: false });
        expect(failed.sentence).toBe(`ok is false because x.v (${JSON.stringify(failsValue)}) ${opposite}${operand}`);
        if (!negated && /^[a-z]/.test(phrase)) expect(opposite).toMatch(/\bnot\b/);
        if (negated) expect(opposite).not.toMatch(/\bnot\b/);
      });
    }
  }

  it('words the examples of the contract', () => {
    expect(oppositePhrase('is greater than or equal to', 'is at least', false)).toBe('is not at least');
    expect(oppositePhrase('contains', 'contains', false)).toBe('does not contain');
    expect(oppositePhrase('is a valid email', 'is a valid email', false)).toBe('is not a valid email');
    expect(reasonsOf('if x.d is within 30 days -> recent.', { x: { d: '2000-01-01' } }).sentence).toBe(
      'recent is false because x.d ("2000-01-01") is not within 30 days',
    );
  });
});

interface Case {
  note: string;
  rule: string;
  data?: unknown;
  now?: string;
}

describe('reasons change nothing else', () => {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cases');
  const cases = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .flatMap((f) => (JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Case[]).map((c) => ({ ...c, file: f })));

  it('gives every corpus case the same result, outcomes and error, with reasons that say the result', () => {
    let evaluated = 0;
    for (const c of cases) {
      if (c.data === undefined) continue;
      const now = c.now === undefined ? NOW : Date.parse(c.now);
      const plain = evaluate(c.rule, c.data, { now });
      const withReasons = evaluate(c.rule, c.data, { now, reasons: true });
      const { reasons, ...rest } = withReasons;
      expect(rest, `${c.file}: ${c.note}`).toEqual(plain);
      expect(reasons?.result, `${c.file}: ${c.note}`).toBe(plain.result);
      expect(reasons?.sentence.length).toBeGreaterThan(0);
      evaluated++;
    }
    expect(evaluated).toBeGreaterThan(200);
  });

  it('without reasons the answer has no reasons key and is byte-identical, compiled or not', () => {
    const policy = compile('if x.a > 1 and any of x.b satisfies (its > 2) -> ok.');
    const data = { x: { a: 2, b: [1, 3] } };
    const before = JSON.stringify(policy.evaluate(data));
    policy.evaluate(data, { reasons: true });
    expect(JSON.stringify(policy.evaluate(data))).toBe(before);
    expect(JSON.stringify(policy.evaluate(data, { reasons: false }))).toBe(before);
    expect(before).toBe('{"result":true,"outcomes":{"ok":true},"trace":[]}');
  });

  it('with a trace too: the trace is the traced evaluation’s, the reasons come beside it', () => {
    const policy = compile('if x.a > 1 -> ok.');
    const traced = policy.evaluate({ x: { a: 0 } }, { trace: true });
    const both = policy.evaluate({ x: { a: 0 } }, { trace: true, reasons: true });
    expect(both.trace).toEqual(traced.trace);
    expect(both.reasons!.sentence).toBe('ok is false because x.a (0) is not greater than 1');
  });
});
