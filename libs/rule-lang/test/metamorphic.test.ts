/**
 * The metamorphic fuzzer, bounded: generated policies and data, each relation of
 * support/metamorphic/relations.ts checked on a fixed-seed run of cases through the public
 * `evaluate`, with fast-check shrinking any failure to a minimal case. `npm run fuzz` runs the same
 * relations for as long as asked. Then the shrunk counterexamples the fuzzer found, as fixed tests.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../src/index.js';
import { RELATIONS } from './support/metamorphic/relations.js';
import { relationProperty, type Tally } from './support/metamorphic/run.js';

/** RULE_FUZZ_SEED replays another run; RULE_FUZZ_RUNS makes it longer. */
const SEED = Number(process.env.RULE_FUZZ_SEED ?? 20261202);
const RUNS = Number(process.env.RULE_FUZZ_RUNS ?? 40);
const NOW = new Date('2025-06-15T12:00:00Z');

describe('metamorphic relations, bounded fuzz run', () => {
  it('has the relations LANGUAGE.md gives, each named once', () => {
    const names = RELATIONS.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThanOrEqual(20);
  });

  for (const relation of RELATIONS) {
    it(`${relation.name}: ${relation.says}`, () => {
      const tally: Tally = { cases: 0, pairs: 0 };
      fc.assert(relationProperty(relation, tally), { seed: SEED, numRuns: RUNS });
      expect(tally.cases).toBeGreaterThanOrEqual(RUNS);
    });
  }
});

describe('counterexamples the fuzzer found, shrunk', () => {
  // A rule referred to only inside any/all is still evaluated once on its own, whatever the array
  // holds (empty, not an array, skipped by `if present`): its outcome is its value and its missing
  // data is an error of the policy.
  it("a rule referred to inside any/all over an empty array keeps its own value (the report's example)", () => {
    const text =
      'A **order** is ok if any of the __items__ of the **order** where (its __price__ > 1 and $chk).\nchk: if order.id >= 1 -> checked.';
    expect(evaluate(text, { order: { items: [], id: 5 } }, { now: NOW })).toMatchObject({
      result: false,
      outcomes: { ok: false, checked: true },
    });
    expect(evaluate(text, { order: { items: [] } }, { now: NOW })).toMatchObject({
      result: false,
      outcomes: {},
      error: 'Missing property: order.id',
      errorCode: 'missing_property',
    });
  });

  it('rule-evaluated-alone: nested any/all over an empty array still evaluates the rule (missing data is an error)', () => {
    const text =
      'A **order** ok if any of the __items__ in the **order** where ( any of the __items__ in the **order** where ( the **order** the checked ) ) .\n' +
      'A **order** checked if the __id__ in the **order** is greater than -1 .';
    expect(evaluate(text, { order: { items: [], address: {} } }, { now: NOW })).toMatchObject({
      result: false,
      error: 'Missing property: order.id',
      errorCode: 'missing_property',
    });
    expect(evaluate(text, { order: { items: [], id: 0 } }, { now: NOW })).toMatchObject({
      result: false,
      outcomes: { ok: false, checked: true },
    });
  });

  it('extract-rule (the bounded run counterexample): a rule referred to inside any/all over an empty array is evaluated', () => {
    const text =
      'A **order** ok if any of the __tags__ in the **order** where ( the **order** the extracted ) .\n' +
      'xr. A **order** extracted if the __id__ in the **order** is greater than -1 .';
    expect(evaluate(text, { order: { tags: [] } }, { now: NOW })).toMatchObject({
      result: false,
      outcomes: {},
      error: 'Missing property: order.id',
      errorCode: 'missing_property',
    });
    expect(evaluate(text, { order: { tags: [], id: 0 } }, { now: NOW })).toMatchObject({
      result: false,
      outcomes: { ok: false, extracted: true },
    });
  });

  it('extract-rule: a rule referred to inside an any/all skipped by `if present` is still evaluated', () => {
    const text =
      'A **order** ok if any of the __items__ in the **order** where ( the **order** the extracted ) if present .\n' +
      'xr. A **order** extracted if ( the __id__ in the **order** is greater than or equal to 1 ) and ( the __id__ in the **order** is greater than or equal to 1 ) .';
    expect(evaluate(text, {}, { now: NOW })).toMatchObject({
      result: false,
      outcomes: {},
      error: 'Missing selector: order',
      errorCode: 'missing_selector',
    });
    expect(evaluate(text, { order: { id: 3 } }, { now: NOW })).toMatchObject({ result: true, outcomes: { ok: true, extracted: true } });
  });

  it('negation: a rule referred to inside any/all over a non-array has its real value, so negating it flips it', () => {
    const rule = (op: string) =>
      'A **order** ok if ( the __id__ in the **order** is greater than -1 ) and ( any of the __items__ in the **order** where ( the **order** the checked ) ) .\n' +
      `A **order** checked if the __id__ in the **order** ${op} -1 .`;
    const data = { order: { items: 0, id: 0 } };
    expect(evaluate(rule('is greater than'), data, { now: NOW }).outcomes).toEqual({ ok: false, checked: true });
    expect(evaluate(rule('is not greater than'), data, { now: NOW }).outcomes).toEqual({ ok: false, checked: false });
  });

  it('de-morgan: a rule referred to inside any/all over an object (not an array) is evaluated: its missing data is an error', () => {
    const text =
      'A **order** ok if any of the __address__ in the **order** where ( the **order** the checked ) .\n' +
      'A **order** checked if ( the __id__ in the **order** is greater than -1 ) and ( the __id__ in the **order** is greater than -1 ) .';
    expect(evaluate(text, { order: { address: {} } }, { now: NOW })).toMatchObject({
      error: 'Missing property: order.id',
      errorCode: 'missing_property',
    });
  });

  it('format-name-case: a format name in capitals is the same format', () => {
    const text = (name: string) =>
      `A **order** ok if ( the __id__ in the **order** > -1 ) and ( the __id__ in the **order** has the format "${name}" ) .`;
    for (const data of [{}, { order: { id: '2025-06-15' } }, { order: { id: 'x' } }]) {
      const lower = evaluate(text('date'), data, { now: NOW });
      expect(lower.errorCode).not.toBe('parse_error');
      expect(evaluate(text('DATE'), data, { now: NOW })).toEqual(lower);
      expect(evaluate(text('Date'), data, { now: NOW })).toEqual(lower);
    }
  });
});
