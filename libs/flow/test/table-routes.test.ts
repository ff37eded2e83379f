/** Table nodes inside flows: routing on an output's value, `next`, ending the flow, path entries. */

import type { FlowDefinition } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { NO_ROUTE, runFlow, runTableNode, type PolicyResolver, type TableRunner } from '../src/index.js';

const ADULT = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01';
const resolve: PolicyResolver = async () => ({
  policyId: ADULT,
  version: 1,
  run: (d) => ({ result: Number((d.applicant as { age: number }).age) >= 18, outcomes: {}, trace: [] }),
});

const def = (extra: Record<string, unknown> = {}): FlowDefinition => ({
  start: 'adult',
  nodes: {
    adult: { type: 'policy', baseId: ADULT, onTrue: 'tier', onFalse: 'no' },
    tier: {
      type: 'table',
      hitPolicy: 'first',
      inputs: [{ name: 'country', path: 'applicant.country' }],
      outputs: [{ name: 'tier' }],
      rules: [
        { when: ['["NL", "BE"]'], then: { tier: 'gold' } },
        { when: ['"DE"'], then: { tier: 'silver' } },
        { when: ['-'], then: { tier: 'basic' } },
      ],
      routes: { gold: 'yes', basic: 'no' },
      default: 'review',
      ...extra,
    },
    yes: { type: 'return', value: true },
    no: { type: 'return', value: false },
    review: { type: 'custom', outcome: 'manual review' },
  },
});

describe('table nodes in a flow', () => {
  it('routes on the output value, with the matched rules on the path', async () => {
    const out = await runFlow(def(), { applicant: { age: 30, country: 'NL' } }, resolve);
    expect(out.result).toBe(true);
    expect(out.path).toEqual([
      { nodeId: 'adult', type: 'policy', policyId: ADULT, version: 1, result: true },
      { nodeId: 'tier', type: 'table', result: { tier: 'gold' }, matched: [0] },
      { nodeId: 'yes', type: 'return', result: true },
    ]);
    expect(out.nodes[1]).toMatchObject({
      nodeId: 'tier',
      type: 'table',
      matched: [0],
      error: null,
      cells: [{ rule: 0, input: 0, result: true }],
    });
  });

  it('a value without a route takes `default`', async () => {
    const out = await runFlow(def(), { applicant: { age: 30, country: 'DE' } }, resolve);
    expect(out.result).toBe('manual review');
  });

  it('no match without a default leaves the routed output null: with every listed value routed and no `default`, that is the engine error no_route', async () => {
    const d = def({
      outputs: [{ name: 'tier', values: ['gold', 'silver', 'basic'] }],
      rules: [{ when: ['["NL", "BE"]'], then: { tier: 'gold' } }],
      routes: { gold: 'yes', silver: 'review', basic: 'no' },
      default: undefined,
    });
    const out = await runFlow(d, { applicant: { age: 30, country: 'DE' } }, resolve);
    expect(out).toMatchObject({ result: false, errorCode: NO_ROUTE, error: 'node `tier`: no route for `tier` = null, and no `default`' });
  });

  it('a table without next or routes ends the flow with its result', async () => {
    const out = await runFlow(def({ routes: undefined, default: undefined }), { applicant: { age: 30, country: 'FR' } }, resolve);
    expect(out.result).toEqual({ tier: 'basic' });
    expect(out.path.at(-1)).toEqual({ nodeId: 'tier', type: 'table', result: { tier: 'basic' }, matched: [2] });
  });

  it('`next` goes on whatever the result', async () => {
    const out = await runFlow(
      def({ routes: undefined, default: undefined, next: 'review' }),
      { applicant: { age: 30, country: 'NL' } },
      resolve,
    );
    expect(out.result).toBe('manual review');
  });

  it('routes on numbers and booleans by their JSON text', async () => {
    const d: FlowDefinition = {
      start: 't',
      nodes: {
        t: {
          type: 'table',
          hitPolicy: 'collect',
          aggregation: 'count',
          inputs: [],
          outputs: [{ name: 'n' }],
          rules: [
            { when: [], then: {} },
            { when: [], then: {} },
          ],
          routes: { '2': 'two' },
          default: 'other',
        },
        two: { type: 'custom', outcome: 'two' },
        other: { type: 'custom', outcome: 'other' },
      },
    };
    expect((await runFlow(d, {}, resolve)).result).toBe('two');
  });

  it('a table node of a definition that was never validated fails the run, not the process', async () => {
    const d = def({ rules: [{ when: ['is in 5'], then: {} }] });
    const out = await runFlow(d, { applicant: { age: 30, country: 'NL' } }, resolve);
    expect(out.errorCode).toBe('invalid_flow');
    expect(out.error).toContain('`is in` needs a list or a path');
  });

  it('a table runner in the options evaluates the table nodes (the execution service runs them in its workers), sharing the budget', async () => {
    const elsewhere = { applicant: { age: 30, country: 'BE' } };
    const calls: [string, number, boolean][] = [];
    // Answers a turn later, as a worker does, reading its own copy of the data.
    const runTable: TableRunner = async (nodeId, node, budget, options) => {
      calls.push([nodeId, budget.used, options.trace]);
      await Promise.resolve();
      return runTableNode(nodeId, node, elsewhere, budget, options);
    };
    const out = await runFlow(def(), elsewhere, resolve, 1000, { trace: false, runTable });
    expect(out.result).toBe(true);
    expect(out.path[1]).toEqual({ nodeId: 'tier', type: 'table', result: { tier: 'gold' }, matched: [0] });
    expect(calls).toEqual([['tier', 0, false]]);
    // A problem the runner reports stops the run as one found here would.
    const refused: TableRunner = () => ({ ok: false, problem: 'table `tier`: nope' });
    expect(await runFlow(def(), elsewhere, resolve, 1000, { runTable: refused })).toMatchObject({
      result: false,
      errorCode: 'invalid_flow',
      error: 'node `tier`: table `tier`: nope',
    });
  });
});
