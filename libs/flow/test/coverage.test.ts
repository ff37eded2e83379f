import type { FlowDefinition } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { FlowCoverage, runFlow, type PolicyResolver } from '../src/index.js';

const ADULT = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01';

/** The one policy: `age >= 18`. */
const resolve: PolicyResolver = async () =>
  Promise.resolve({
    policyId: ADULT,
    version: null,
    run: (d) => ({ result: Number(d.age) >= 18, outcomes: {}, trace: [] }),
  });

/** adult? → a tier table routed on `tier` (gold → approve, else → review); minor → reject. */
const flow: FlowDefinition = {
  start: 'adult',
  nodes: {
    adult: { type: 'policy', baseId: ADULT, onTrue: 'tier', onFalse: 'reject' },
    tier: {
      type: 'table',
      hitPolicy: 'first',
      inputs: [
        { name: 'income', path: 'applicant.income' },
        { name: 'country', path: 'applicant.country' },
      ],
      outputs: [{ name: 'tier', values: ['gold', 'silver', 'bronze'] }],
      rules: [
        { when: ['> 5000', 'is "NL"'], then: { tier: 'gold' } },
        { when: ['> 1000', '-'], then: { tier: 'silver' } },
        { when: ['-', '-'], then: { tier: 'bronze' } },
      ],
      routes: { gold: 'approve', silver: 'review', bronze: 'review' },
    },
    approve: { type: 'return', value: true },
    review: { type: 'custom', outcome: 'manual review' },
    reject: { type: 'return', value: false },
  },
};

async function cover(...data: Record<string, unknown>[]): Promise<FlowCoverage> {
  const coverage = new FlowCoverage(flow);
  for (const d of data) coverage.record(await runFlow(flow, d, resolve, undefined, { trace: false }));
  return coverage;
}

describe('FlowCoverage', () => {
  it('counts nothing covered before any run, listing every row and edge', () => {
    const report = new FlowCoverage(flow).report();
    expect(report.summary).toEqual({ rows: { total: 3, covered: 0 }, edges: { total: 4, covered: 0 }, percent: 0 });
    expect(report.uncovered).toEqual([
      { kind: 'row', nodeId: 'tier', row: 1, text: 'income > 5000, country is "NL"' },
      { kind: 'row', nodeId: 'tier', row: 2, text: 'income > 1000' },
      { kind: 'row', nodeId: 'tier', row: 3, text: '-' },
      { kind: 'edge', from: 'adult', to: 'tier', text: 'adult → tier (onTrue)' },
      { kind: 'edge', from: 'adult', to: 'reject', text: 'adult → reject (onFalse)' },
      { kind: 'edge', from: 'tier', to: 'approve', text: 'tier → approve (routes.gold)' },
      // Two routes to the same node are one edge.
      { kind: 'edge', from: 'tier', to: 'review', text: 'tier → review (routes.silver, routes.bronze)' },
    ]);
  });

  it('counts the rows matched and the edges taken by the runs', async () => {
    const coverage = await cover({ age: 30, applicant: { income: 9000, country: 'NL' } }, { age: 12 });
    const report = coverage.report();
    expect(coverage.runCount).toBe(2);
    expect(report.summary).toEqual({ rows: { total: 3, covered: 1 }, edges: { total: 4, covered: 3 }, percent: 57.1 });
    expect(report.uncovered.map((u) => (u.kind === 'row' ? `row ${u.row}` : u.kind === 'edge' ? `${u.from}→${u.to}` : u.kind))).toEqual([
      'row 2',
      'row 3',
      'tier→review',
    ]);
  });

  it('reaches 100 % when every row matched and every edge was taken', async () => {
    const report = (
      await cover(
        { age: 30, applicant: { income: 9000, country: 'NL' } },
        { age: 30, applicant: { income: 2000, country: 'BE' } },
        { age: 30, applicant: { income: 10, country: 'BE' } },
        { age: 12 },
      )
    ).report();
    expect(report.summary.percent).toBe(100);
    expect(report.uncovered).toEqual([]);
  });

  it('counts every rule a multiple-hit table matched', async () => {
    const collect: FlowDefinition = {
      start: 't',
      nodes: {
        t: {
          type: 'table',
          hitPolicy: 'collect',
          inputs: [{ name: 'n', path: 'item.n' }],
          outputs: [{ name: 'o' }],
          rules: [
            { when: ['> 1'], then: { o: 1 } },
            { when: ['> 2'], then: { o: 2 } },
            { when: ['> 3'], then: { o: 3 } },
          ],
        },
      },
    };
    const coverage = new FlowCoverage(collect);
    coverage.record(await runFlow(collect, { item: { n: 3 } }, resolve, undefined, { trace: false }));
    expect(coverage.report()).toEqual({
      summary: { rows: { total: 3, covered: 2 }, edges: { total: 0, covered: 0 }, percent: 66.6 },
      uncovered: [{ kind: 'row', nodeId: 't', row: 3, text: 'n > 3' }],
    });
  });

  it('answers 100 % for a flow with nothing to count', async () => {
    const bare: FlowDefinition = { start: 'r', nodes: { r: { type: 'return', value: true } } };
    const coverage = new FlowCoverage(bare);
    expect(coverage.report().summary).toEqual({ rows: { total: 0, covered: 0 }, edges: { total: 0, covered: 0 }, percent: 100 });
    coverage.record(await runFlow(bare, {}, resolve));
    expect(coverage.report().uncovered).toEqual([]);
  });

  it('counts the path up to a node that stopped the flow', async () => {
    const coverage = new FlowCoverage(flow);
    // No `income`: the table's first cell stops the run with a missing-data error.
    const out = await runFlow(flow, { age: 30, applicant: {} }, resolve, undefined, { trace: false });
    expect(out.error).toBeDefined();
    coverage.record(out);
    expect(coverage.report().summary.edges).toEqual({ total: 4, covered: 1 });
  });
});
