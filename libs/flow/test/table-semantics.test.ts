/**
 * Hit-policy semantics of decision-table nodes (DMN 1.4 §8.2.8) against hand-computed
 * expectations: matches, no match, ties and aggregation for every policy, with tables modelled on
 * the DMN specification's examples (applicant risk rating, person loan compliance, special
 * discount, holidays).
 */

import type { FlowDefinition, FlowRunResponse, FlowTableNode, FlowTableNodeRun } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { runFlow as runFlowOnce, validateDefinition, type FlowRunOptions, type PolicyResolver } from '../src/index.js';

const noPolicies: PolicyResolver = () => Promise.reject(new Error('no policy nodes here'));

/** A run without its tables' trace lines and cells. */
function untraced(out: FlowRunResponse): FlowRunResponse {
  return { ...out, nodes: out.nodes.map((n) => ('cells' in n ? { ...n, trace: [], cells: [] } : n)) };
}

/**
 * Every case runs with and without a trace: the table's cell closures and its untraced scan must
 * give the same result, path, matched rules and errors. Answers the run `options.trace` asks for.
 */
async function runFlow(
  def: FlowDefinition,
  data: Record<string, unknown>,
  resolve: PolicyResolver,
  budget = 1_000_000,
  options: FlowRunOptions = {},
): Promise<FlowRunResponse> {
  const traced = await runFlowOnce(def, data, resolve, budget, { ...options, trace: true });
  const plain = await runFlowOnce(def, data, resolve, budget, { ...options, trace: false });
  expect(plain).toEqual(untraced(traced));
  return options.trace === false ? plain : traced;
}

/** A flow of one table node that ends the flow. */
function flowOf(table: Omit<FlowTableNode, 'type'>): FlowDefinition {
  return { start: 't', nodes: { t: { type: 'table', ...table } } };
}

async function run(table: Omit<FlowTableNode, 'type'>, data: Record<string, unknown>, trace = true) {
  const def = flowOf(table);
  expect(validateDefinition(def)).toEqual([]);
  const out = await runFlow(def, data, noPolicies, 1_000_000, { trace });
  return { out, node: out.nodes[0] as FlowTableNodeRun };
}

// DMN 1.4 "Applicant Risk Rating" (U): age bands by two columns on the same value ([25..60]).
const riskRating = (hitPolicy: FlowTableNode['hitPolicy']): Omit<FlowTableNode, 'type'> => ({
  hitPolicy,
  inputs: [
    { name: 'ageFrom', path: 'applicant.age' },
    { name: 'ageTo', path: 'applicant.age' },
    { name: 'history', path: 'applicant.medicalHistory' },
  ],
  outputs: [{ name: 'rating', values: ['High', 'Medium', 'Low'] }],
  rules: [
    { when: ['> 60', '-', '"good"'], then: { rating: 'Medium' } },
    { when: ['> 60', '-', '"bad"'], then: { rating: 'High' } },
    { when: ['>= 25', '<= 60', '-'], then: { rating: 'Medium' } },
    { when: ['< 25', '-', '"good"'], then: { rating: 'Low' } },
    { when: ['< 25', '-', '"bad"'], then: { rating: 'Medium' } },
  ],
});

describe('unique (U)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['over 60, good history', { age: 70, medicalHistory: 'good' }, 'Medium'],
    ['over 60, bad history', { age: 61, medicalHistory: 'bad' }, 'High'],
    ['60 is inside [25..60]', { age: 60, medicalHistory: 'bad' }, 'Medium'],
    ['25 is inside [25..60]', { age: 25, medicalHistory: 'good' }, 'Medium'],
    ['under 25, good', { age: 24, medicalHistory: 'GOOD' }, 'Low'],
    ['under 25, bad', { age: 18, medicalHistory: 'bad' }, 'Medium'],
  ];
  it.each(cases)('DMN applicant risk rating: %s', async (_name, applicant, rating) => {
    const { out } = await run(riskRating('unique'), { applicant });
    expect(out.result).toEqual({ rating });
    expect(out.error).toBeUndefined();
  });

  it('no match gives the defaults (null without one)', async () => {
    const { out, node } = await run(riskRating('unique'), { applicant: { age: 70, medicalHistory: 'unknown' } });
    expect(out.result).toEqual({ rating: null });
    expect(node.matched).toEqual([]);
  });

  it('two matching rules are the engine error table_not_unique, naming them', async () => {
    const table = riskRating('unique');
    table.rules.push({ when: ['> 60', '-', '-'], then: { rating: 'High' } });
    const { out, node } = await run(table, { applicant: { age: 70, medicalHistory: 'good' } });
    expect(out.result).toBe(false);
    expect(out.errorCode).toBe('table_not_unique');
    expect(out.error).toBe('node `t`: table `t`: rules 1 and 6 match, but the hit policy `unique` allows one');
    expect(node.matched).toEqual([0, 5]);
    expect(node.errorCode).toBe('table_not_unique');
    expect(node.trace.at(-1)).toMatch(/^error: table `t`: rules 1 and 6 match/);
  });
});

// DMN 1.4 "Person Loan Compliance" (A): overlapping rules that agree.
const compliance: Omit<FlowTableNode, 'type'> = {
  hitPolicy: 'any',
  inputs: [
    { name: 'rating', path: 'person.creditRating' },
    { name: 'cardBalance', path: 'person.cardBalance' },
    { name: 'loanBalance', path: 'person.educationLoanBalance' },
  ],
  outputs: [{ name: 'compliance' }],
  rules: [
    { when: ['"A"', '< 10000', '< 60000'], then: { compliance: 'Compliant' } },
    { when: ['is not "A"', '-', '-'], then: { compliance: 'Not Compliant' } },
    { when: ['-', '>= 10000', '-'], then: { compliance: 'Not Compliant' } },
    { when: ['-', '-', '>= 60000'], then: { compliance: 'Not Compliant' } },
  ],
};

describe('any (A)', () => {
  it('DMN person loan compliance: one match', async () => {
    const { out, node } = await run(compliance, { person: { creditRating: 'A', cardBalance: 500, educationLoanBalance: 0 } });
    expect(out.result).toEqual({ compliance: 'Compliant' });
    expect(node.matched).toEqual([0]);
  });

  it('DMN person loan compliance: three matches that agree', async () => {
    const { out, node } = await run(compliance, { person: { creditRating: 'B', cardBalance: 20000, educationLoanBalance: 70000 } });
    expect(out.result).toEqual({ compliance: 'Not Compliant' });
    expect(node.matched).toEqual([1, 2, 3]);
  });

  it('matches that disagree are the engine error table_conflict', async () => {
    const table = { ...compliance, rules: [...compliance.rules, { when: ['-', '-', '-'], then: { compliance: 'Review' } }] };
    const { out } = await run(table, { person: { creditRating: 'B', cardBalance: 1, educationLoanBalance: 1 } });
    expect(out.errorCode).toBe('table_conflict');
    expect(out.error).toContain('rules 2 and 5 match with different outputs');
  });

  it('no match gives the default', async () => {
    const table = { ...compliance, outputs: [{ name: 'compliance', default: 'Unknown' }], rules: compliance.rules.slice(0, 1) };
    const { out } = await run(table, { person: { creditRating: 'B', cardBalance: 1, educationLoanBalance: 1 } });
    expect(out.result).toEqual({ compliance: 'Unknown' });
  });
});

// Priority (P): overlapping rules ranked by the output's values (High before Medium before Low).
const priorityRating: Omit<FlowTableNode, 'type'> = {
  hitPolicy: 'priority',
  inputs: [
    { name: 'age', path: 'applicant.age' },
    { name: 'history', path: 'applicant.medicalHistory' },
  ],
  outputs: [
    { name: 'rating', values: ['High', 'Medium', 'Low'] },
    { name: 'reason', values: ['history', 'age', 'none'] },
  ],
  rules: [
    { when: ['-', '"good"'], then: { rating: 'Low', reason: 'none' } },
    { when: ['>= 60', '-'], then: { rating: 'Medium', reason: 'age' } },
    { when: ['-', '"bad"'], then: { rating: 'High', reason: 'history' } },
    { when: ['< 25', '-'], then: { rating: 'Medium', reason: 'age' } },
    { when: ['< 25', '"good"'], then: { rating: 'Medium', reason: 'history' } },
  ],
};

describe('priority (P)', () => {
  it('the match whose output comes first in the values order wins, whatever its rule order', async () => {
    const { out, node } = await run(priorityRating, { applicant: { age: 70, medicalHistory: 'bad' } });
    expect(out.result).toEqual({ rating: 'High', reason: 'history' });
    expect(node.matched).toEqual([2, 1]);
  });

  it('Medium beats Low', async () => {
    const { out } = await run(priorityRating, { applicant: { age: 65, medicalHistory: 'good' } });
    expect(out.result).toEqual({ rating: 'Medium', reason: 'age' });
  });

  it("a tie on the first output goes to the next output's order", async () => {
    // rules 4 (Medium, age) and 5 (Medium, history) tie on rating; history comes before age.
    const { out, node } = await run(priorityRating, { applicant: { age: 20, medicalHistory: 'good' } });
    expect(out.result).toEqual({ rating: 'Medium', reason: 'history' });
    expect(node.matched).toEqual([4, 3, 0]);
  });

  it('a full tie goes to the earlier rule', async () => {
    const table = { ...priorityRating, outputs: [priorityRating.outputs[0], { name: 'reason' }] };
    const { out } = await run(table, { applicant: { age: 20, medicalHistory: 'good' } });
    expect(out.result).toEqual({ rating: 'Medium', reason: 'age' });
  });

  it('no match gives the defaults', async () => {
    const table = { ...priorityRating, rules: priorityRating.rules.slice(1, 3) };
    const { out } = await run(table, { applicant: { age: 30, medicalHistory: 'good' } });
    expect(out.result).toEqual({ rating: null, reason: null });
  });
});

// DMN "Special Discount" as a first-hit table: the first matching rule in order, later rules not evaluated.
const discount: Omit<FlowTableNode, 'type'> = {
  hitPolicy: 'first',
  inputs: [
    { name: 'orderType', path: 'order.type' },
    { name: 'location', path: 'customer.location' },
    { name: 'customerType', path: 'customer.type' },
  ],
  outputs: [{ name: 'discount', default: 0 }],
  rules: [
    { when: ['"Web"', '"US"', '"Wholesaler"'], then: { discount: 10 } },
    { when: ['"Phone"', '"US"', '"Wholesaler"'], then: { discount: 10 } },
    { when: ['["Web", "Phone"]', '"US"', '"Retailer"'], then: { discount: 5 } },
    { when: ['-', 'is not "US"', '-'], then: { discount: 2 } },
    { when: ['-', '-', '"Wholesaler"'], then: { discount: 1 } },
  ],
};

describe('first (F)', () => {
  it.each([
    [{ order: { type: 'Web' }, customer: { location: 'US', type: 'Wholesaler' } }, 10, [0]],
    [{ order: { type: 'Phone' }, customer: { location: 'US', type: 'Retailer' } }, 5, [2]],
    [{ order: { type: 'Web' }, customer: { location: 'EU', type: 'Wholesaler' } }, 2, [3]],
    [{ order: { type: 'Shop' }, customer: { location: 'US', type: 'Wholesaler' } }, 1, [4]],
  ])('special discount %#', async (data, d, matched) => {
    const { out, node } = await run(discount, data);
    expect(out.result).toEqual({ discount: d });
    expect(node.matched).toEqual(matched);
  });

  it('stops at the first match: later rules are not evaluated (their cells are not in the trace)', async () => {
    const { node } = await run(discount, { order: { type: 'Web' }, customer: { location: 'US', type: 'Wholesaler' } });
    expect(new Set(node.cells.map((c) => c.rule))).toEqual(new Set([0]));
    expect(node.trace).toEqual([
      'table "t" [first]: 5 rules',
      '  rule 1',
      '    if $.order.type = "Web": is equal to "Web" -> true',
      '    and $.customer.location = "US": is equal to "US" -> true',
      '    and $.customer.type = "Wholesaler": is equal to "Wholesaler" -> true',
      '    => match: {"discount":10}',
      'result: {"discount":10}',
    ]);
  });

  it('no match gives the declared default', async () => {
    const { out } = await run(discount, { order: { type: 'Shop' }, customer: { location: 'US', type: 'Retailer' } });
    expect(out.result).toEqual({ discount: 0 });
  });
});

// "Holidays": extra days by age and years of service; rule order lists every match, collect aggregates.
const holidays = (hitPolicy: FlowTableNode['hitPolicy'], aggregation?: FlowTableNode['aggregation']): Omit<FlowTableNode, 'type'> => ({
  hitPolicy,
  ...(aggregation ? { aggregation } : {}),
  inputs: [
    { name: 'age', path: 'employee.age' },
    { name: 'service', path: 'employee.yearsOfService' },
  ],
  outputs: [{ name: 'days' }],
  rules: [
    { when: ['-', '-'], then: { days: 22 } },
    { when: ['>= 60', '-'], then: { days: 3 } },
    { when: ['-', '>= 30'], then: { days: 3 } },
    { when: ['< 18', '-'], then: { days: 5 } },
    { when: ['>= 60', '-'], then: { days: 5 } },
  ],
});

describe('rule order (R) and collect (C, C+, C<, C>, C#)', () => {
  const senior = { employee: { age: 62, yearsOfService: 35 } };
  it('rule order: every match in rule order', async () => {
    const { out, node } = await run(holidays('rule order'), senior);
    expect(out.result).toEqual([{ days: 22 }, { days: 3 }, { days: 3 }, { days: 5 }]);
    expect(node.matched).toEqual([0, 1, 2, 4]);
  });
  it('collect: every match', async () => {
    const { out } = await run(holidays('collect'), senior);
    expect(out.result).toEqual([{ days: 22 }, { days: 3 }, { days: 3 }, { days: 5 }]);
  });
  it.each([
    ['sum', 33],
    ['min', 3],
    ['max', 22],
    ['count', 4],
  ] as const)('collect %s', async (aggregation, days) => {
    const { out } = await run(holidays('collect', aggregation), senior);
    expect(out.result).toEqual({ days });
  });
  it('a young employee: sum 27 of two rules', async () => {
    const { out } = await run(holidays('collect', 'sum'), { employee: { age: 17, yearsOfService: 1 } });
    expect(out.result).toEqual({ days: 27 });
  });

  const none = { employee: { age: 40, yearsOfService: 1 } };
  const noBase = (t: Omit<FlowTableNode, 'type'>) => ({ ...t, rules: t.rules.slice(1) });
  it('no match: rule order and collect give [], or [defaults] when an output declares one', async () => {
    expect((await run(noBase(holidays('rule order')), none)).out.result).toEqual([]);
    expect((await run(noBase(holidays('collect')), none)).out.result).toEqual([]);
    const withDefault = { ...noBase(holidays('collect')), outputs: [{ name: 'days', default: 0 }] };
    expect((await run(withDefault, none)).out.result).toEqual([{ days: 0 }]);
  });
  it('no match: count 0; sum, min and max the default or null', async () => {
    expect((await run(noBase(holidays('collect', 'count')), none)).out.result).toEqual({ days: 0 });
    expect((await run(noBase(holidays('collect', 'sum')), none)).out.result).toEqual({ days: null });
    const withDefault = { ...noBase(holidays('collect', 'max')), outputs: [{ name: 'days', default: 20 }] };
    expect((await run(withDefault, none)).out.result).toEqual({ days: 20 });
  });
  it('sum ignores rules that give null', async () => {
    const t = holidays('collect', 'sum');
    t.rules[1] = { when: ['>= 60', '-'], then: { days: null } };
    expect((await run(t, senior)).out.result).toEqual({ days: 30 });
  });
});

describe('cells', () => {
  const one = (cell: string, output = 'hit'): Omit<FlowTableNode, 'type'> => ({
    hitPolicy: 'first',
    inputs: [{ name: 'v', path: 'x.v' }],
    outputs: [{ name: 'out', default: 'miss' }],
    rules: [{ when: [cell], then: { out: output } }],
  });
  const matches = async (cell: string, v: unknown, extra: Record<string, unknown> = {}) =>
    (await run(one(cell), { x: { v, ...extra } }, false)).out.result;

  it.each([
    ['>= 18', 18, 'hit'],
    ['is at least 18', 17, 'miss'],
    ['is not greater than 5', 5, 'hit'],
    ['is in ["NL", "BE"]', 'nl', 'hit'],
    ['is not in ["NL", "BE"]', 'DE', 'hit'],
    ['["NL", "BE"]', 'BE', 'hit'],
    ['"gold"', 'Gold', 'hit'],
    ['is exactly "gold"', 'Gold', 'miss'],
    ['contains "glass"', 'Fragile: glass inside', 'hit'],
    ['does not contain "glass"', 'fibreglass panel', 'hit'],
    ['has the format "email"', 'a@b.example', 'hit'],
    ['is a valid uuid', 'nope', 'miss'],
    ['matches pattern "^[A-Z]{2}$"', 'NL', 'hit'],
    ['is later than 2024-01-31', '2024-02-01', 'hit'],
    ['2024-03-01', '2024-03-01T22:00:00Z', 'hit'],
    ['is empty', '', 'hit'],
    ['-', { any: 'thing' }, 'hit'],
    ['', null, 'hit'],
  ])('`%s` on %j → %s', async (cell, v, want) => {
    expect(await matches(cell, v)).toEqual({ out: want });
  });

  it('`is within 30 days` reads the run clock', async () => {
    const def = flowOf(one('is within 30 days'));
    const now = Date.UTC(2025, 5, 15);
    const near = await runFlow(def, { x: { v: '2025-05-20' } }, noPolicies, 1000, { now });
    const far = await runFlow(def, { x: { v: '2025-04-01' } }, noPolicies, 1000, { now });
    expect([near.result, far.result]).toEqual([{ out: 'hit' }, { out: 'miss' }]);
  });

  it('a path operand compares with another value of the data', async () => {
    expect(await matches('<= x.limit', 10, { limit: 12 })).toEqual({ out: 'hit' });
    expect(await matches('<= x.limit', 13, { limit: 12 })).toEqual({ out: 'miss' });
  });

  it('a missing input is the language error missing_property, unless the cell says `if present` or `is empty`', async () => {
    const missing = await runFlow(flowOf(one('>= 18')), { x: {} }, noPolicies);
    expect(missing.errorCode).toBe('missing_property');
    expect(missing.error).toBe('node `t`: Missing property: x.v');
    expect(await matches('>= 18 if present', undefined)).toEqual({ out: 'hit' });
    expect((await runFlow(flowOf(one('is empty')), { x: {} }, noPolicies)).result).toEqual({ out: 'hit' });
    const noSelector = await runFlow(flowOf(one('is empty')), {}, noPolicies);
    expect(noSelector.errorCode).toBe('missing_selector');
  });

  it('a `-` cell never reads its input', async () => {
    expect((await runFlow(flowOf(one('-')), {}, noPolicies)).result).toEqual({ out: 'hit' });
  });

  it('cells count against the step budget: one step each, plus the size of what they compare', async () => {
    const table = { ...one('>= 1'), rules: Array.from({ length: 20 }, () => ({ when: ['>= 100'], then: { out: 'hit' } })) };
    const ok = await runFlow(flowOf(table), { x: { v: 1 } }, noPolicies, 20);
    expect(ok.result).toEqual({ out: 'miss' });
    const over = await runFlow(flowOf(table), { x: { v: 1 } }, noPolicies, 19);
    expect(over.errorCode).toBe('budget_exceeded');
  });

  it('trace off: the same answer, no lines and no cells', async () => {
    const { out, node } = await run(discount, { order: { type: 'Web' }, customer: { location: 'US', type: 'Wholesaler' } }, false);
    expect(out.result).toEqual({ discount: 10 });
    expect(node.trace).toEqual([]);
    expect(node.cells).toEqual([]);
    expect(node.matched).toEqual([0]);
  });
});
