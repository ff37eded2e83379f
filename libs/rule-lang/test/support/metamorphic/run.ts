/**
 * Runs the metamorphic relations on generated cases through the engine's public `evaluate`: the
 * fast-check property for one relation, shared by the bounded run in the test suite
 * (metamorphic.test.ts) and the long run (`npm run fuzz`, scripts/fuzz.ts).
 */

import fc from 'fast-check';
import { evaluate } from '../../../src/index.js';
import { dataArb, policyArb } from './model.js';
import { styleArb } from './render.js';
import type { Case, Observed, Relation, Side } from './relations.js';

/** Clocks to evaluate at: mid-month, a month's last day, a leap day, early morning. */
const NOWS = ['2025-06-15T12:00:00Z', '2025-03-31T00:00:00Z', '2024-02-29T23:59:59Z', '2025-06-16T05:00:00Z'].map((s) => Date.parse(s));

export const caseArb: fc.Arbitrary<Case> = fc.record({
  policy: policyArb,
  data: dataArb,
  // The base writing keeps format names as the catalogue spells them; format-name-case varies them.
  style: styleArb.map((s) => ({ ...s, formatCase: 0 })),
  alt: styleArb,
  now: fc.constantFrom(...NOWS),
  pick: fc.nat(),
});

function observe(s: Side, now: number): Observed {
  const r = evaluate(s.text, s.data, { now, trace: s.mode === 'trace', traceTree: s.mode === 'traceTree' });
  return { result: r.result, outcomes: r.outcomes, ...(r.errorCode !== undefined ? { error: r.error, errorCode: r.errorCode } : {}) };
}

/** Counts of what a run checked. */
export interface Tally {
  cases: number;
  pairs: number;
}

/**
 * Checks every pair the relation makes of a case; throws an Error that shows both policies, the
 * data and both answers when a pair does not relate as it must. Parse errors always fail: the
 * generator writes only valid policies.
 */
export function checkCase(relation: Relation, c: Case, tally?: Tally): void {
  if (tally) tally.cases++;
  for (const pair of relation.pairs(c)) {
    const a = observe(pair.a, c.now);
    const b = observe(pair.b, c.now);
    if (tally) tally.pairs++;
    const why =
      a.errorCode === 'parse_error'
        ? `A does not parse: ${a.error}`
        : b.errorCode === 'parse_error'
          ? `B does not parse: ${b.error}`
          : pair.check(a, b);
    if (why !== null) {
      throw new Error(
        [
          `relation ${relation.name}: ${why}`,
          `now: ${new Date(c.now).toISOString()}`,
          `--- policy A ---`,
          pair.a.text,
          `--- data A ---`,
          JSON.stringify(pair.a.data),
          `--- answer A ---`,
          JSON.stringify(a),
          `--- policy B${pair.b.mode ? ` (evaluated with ${pair.b.mode})` : ''} ---`,
          pair.b.text,
          ...(JSON.stringify(pair.b.data) !== JSON.stringify(pair.a.data) ? [`--- data B ---`, JSON.stringify(pair.b.data)] : []),
          `--- answer B ---`,
          JSON.stringify(b),
        ].join('\n'),
      );
    }
  }
}

export function relationProperty(relation: Relation, tally?: Tally) {
  return fc.property(caseArb, (c) => checkCase(relation, c, tally));
}
