/**
 * The benchmark compares rule-lang with a hand-written function, json-rules-engine and cel-js
 * (bench/run.ts). This checks that the four really express the same logic: they agree on the bench
 * data and on variations that make it fail. Never asserts speed.
 */

import { describe, expect, it } from 'vitest';
import { compile } from '../src/index.js';
import {
  OUTCOMES,
  POLICY,
  buildCel,
  buildJsonRulesEngine,
  handWritten,
  passingData,
  shiftYears,
  type LicenceApplication,
} from '../bench/policy.js';

const NOW = Date.parse('2025-06-15T12:00:00Z');
const clock = () => NOW;
const policy = compile(POLICY);
const engine = buildJsonRulesEngine(clock);
const cel = buildCel(clock);

function variant(change: (d: LicenceApplication['application']) => void): LicenceApplication {
  const data = passingData();
  change(data.application);
  return data;
}

const cases: { name: string; data: LicenceApplication; expected: boolean; failing?: (typeof OUTCOMES)[number] }[] = [
  { name: 'the bench data', data: passingData(), expected: true },
  {
    name: 'exactly 17 today (not older)',
    data: variant((a) => (a.driver.dateOfBirth = '2008-06-15')),
    expected: false,
    failing: 'the age check',
  },
  { name: '17 years and a day', data: variant((a) => (a.driver.dateOfBirth = '2008-06-14')), expected: true },
  {
    name: 'licence from a country not in the list',
    data: variant((a) => (a.driver.licence.country = 'US')),
    expected: false,
    failing: 'a valid licence',
  },
  {
    name: 'licence issued over 10 years ago',
    data: variant((a) => (a.driver.licence.issuedOn = '2015-06-14')),
    expected: false,
    failing: 'a valid licence',
  },
  {
    name: 'licence without category B',
    data: variant((a) => (a.driver.licence.categories = ['AM', 'A1'])),
    expected: false,
    failing: 'a valid licence',
  },
  { name: 'poor vision', data: variant((a) => (a.medical.vision = 0.4)), expected: false, failing: 'medical clearance' },
  {
    name: 'one document unverified',
    data: variant((a) => (a.documents[1].verified = false)),
    expected: false,
    failing: 'the document check',
  },
  { name: 'a major offence', data: variant((a) => (a.driver.offences[0].severity = 'major')), expected: false, failing: 'a clean record' },
  {
    name: 'fee neither paid nor exempt',
    data: variant((a) => (a.fee = { paid: false, exempt: false })),
    expected: false,
    failing: 'a settled fee',
  },
  { name: 'fee exempt', data: variant((a) => (a.fee = { paid: false, exempt: true })), expected: true },
];

describe('bench policy: rule-lang, hand-written, json-rules-engine and cel-js agree', () => {
  it('compiles to the seven outcomes the hand-written function reports', () => {
    expect(policy.outcomes).toEqual([...OUTCOMES]);
  });

  it.each(cases)('$name', async ({ data, expected, failing }) => {
    const ours = policy.evaluate(data, { now: NOW });
    expect(ours.error).toBeUndefined();
    expect(ours.result).toBe(expected);
    const hand = handWritten(data, NOW);
    expect(hand.outcomes).toEqual(ours.outcomes);
    expect(hand.result).toBe(expected);
    if (failing) expect(ours.outcomes[failing]).toBe(false);
    expect(await engine.run(data)).toBe(expected);
    expect(cel(data)).toBe(expected);
  });

  it('reports missing data as an error, like rule-lang', () => {
    const data = variant((a) => delete (a as Partial<typeof a>).medical);
    expect(policy.evaluate(data, { now: NOW }).errorCode).toBe('missing_property');
    expect(handWritten(data, NOW).error).toBeDefined();
  });

  it('shifts years with the calendar, clamping 29 February', () => {
    expect(new Date(shiftYears(Date.parse('2024-02-29'), -1)).toISOString().slice(0, 10)).toBe('2023-02-28');
    expect(new Date(shiftYears(Date.parse('2025-06-15T12:00:00Z'), -17)).toISOString().slice(0, 10)).toBe('2008-06-15');
  });
});
