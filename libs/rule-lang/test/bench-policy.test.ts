/**
 * The benchmark compares rule-lang with a hand-written function, json-rules-engine and cel-js
 * (bench/run.ts). This checks that the four really express the same logic: they agree on the bench
 * data and on variations that make it fail. Never asserts speed.
 */

import { describe, expect, it } from 'vitest';
import { compile, explain } from '../src/index.js';
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
import { LOAN_OUTCOMES, LOAN_POLICY, loanData, loanHandWritten, type LoanApplication } from '../bench/overhead.js';

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

describe('overhead bench policy: rule-lang and the hand-written function agree', () => {
  const loanPolicy = compile(LOAN_POLICY);
  const loan = (change: (d: LoanApplication) => void): LoanApplication => {
    const data = loanData();
    change(data);
    return data;
  };
  const drop = (o: object, key: string) => delete (o as Record<string, unknown>)[key];

  it('has seven rules and nine comparisons', () => {
    expect(loanPolicy.outcomes).toEqual([...LOAN_OUTCOMES]);
    const explained = explain(LOAN_POLICY);
    const comparisons = explained.rules.flatMap((r) => r.conditions).filter((c) => c.type === 'comparison');
    expect(comparisons).toHaveLength(9);
  });

  it.each([
    ['the bench data', loanData()],
    ['low income', loan((d) => (d.applicant.income = 29_999))],
    ['income at the bound', loan((d) => (d.applicant.income = 30_000))],
    ['a poor credit score', loan((d) => (d.applicant.creditScore = 650))],
    ['a default', loan((d) => (d.applicant.defaults = 1))],
    ['not resident', loan((d) => (d.applicant.country = 'US'))],
    ['temporary, 3 years', loan((d) => ((d.applicant.employment = 'temporary'), (d.applicant.yearsEmployed = 3)))],
    ['temporary, 2 years', loan((d) => ((d.applicant.employment = 'temporary'), (d.applicant.yearsEmployed = 2)))],
    ['PERMANENT in capitals', loan((d) => ((d.applicant.employment = 'PERMANENT'), (d.applicant.yearsEmployed = 0)))],
    ['a minor', loan((d) => (d.applicant.age = 17))],
    ['too large an amount', loan((d) => (d.loan.amount = 250_001))],
    ['too long a term', loan((d) => (d.loan.term = 31))],
  ])('%s', (_name, data) => {
    const ours = loanPolicy.evaluate(data);
    expect(ours.error).toBeUndefined();
    const hand = loanHandWritten(data);
    expect(hand.result).toBe(ours.result);
    expect(hand.outcomes).toEqual(ours.outcomes);
  });

  it.each([
    ['no applicant', loan((d) => drop(d, 'applicant'))],
    ['no credit score', loan((d) => drop(d.applicant, 'creditScore'))],
    ['no defaults (after a failed credit score)', loan((d) => ((d.applicant.creditScore = 0), drop(d.applicant, 'defaults')))],
    ['no years employed (after a permanent job)', loan((d) => drop(d.applicant, 'yearsEmployed'))],
    ['no loan', loan((d) => drop(d, 'loan'))],
    ['no term', loan((d) => drop(d.loan, 'term'))],
  ])('missing data, %s: the same error', (_name, data) => {
    const ours = loanPolicy.evaluate(data);
    expect(ours.error).toBeDefined();
    expect(loanHandWritten(data)).toEqual({ result: false, outcomes: {}, error: ours.error });
  });
});
