import type { FlowDefinition, FlowPolicyNode } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FLOW_STEP_BUDGET,
  runFlow,
  type FlowStepBudget,
  type PolicyResolver,
  type PolicyRunResult,
  type ResolvedPolicy,
} from '../src/index.js';

const ADULT = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01';
const RICH = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a02';
const BROKEN = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a03';

/** A resolver over plain functions: the data's `age`/`income` decide, BROKEN reports an engine error. */
const policies: Record<string, (data: Record<string, unknown>) => PolicyRunResult> = {
  [ADULT]: (d) => ({ result: Number(d.age) >= 18, outcomes: { adult: Number(d.age) >= 18 }, trace: [`age ${String(d.age)}`] }),
  [RICH]: (d) => ({ result: Number(d.income) > 1000, outcomes: { rich: Number(d.income) > 1000 }, trace: [] }),
  [BROKEN]: () => ({ result: false, outcomes: {}, trace: [], error: 'Missing property: `x`', errorCode: 'missing_property' }),
};
const seen: Array<[string, FlowPolicyNode]> = [];
const resolve: PolicyResolver = async (node, nodeId) => {
  seen.push([nodeId, node]);
  const id = node.policyId ?? node.baseId!;
  return { policyId: `${id}`, version: node.version ?? null, run: policies[id] };
};

/** adult? → rich? (pinned v2) → approve; not rich → the shared `review` node; minor → review too. */
const flow: FlowDefinition = {
  start: 'adult',
  nodes: {
    adult: { type: 'policy', baseId: ADULT, onTrue: 'rich', onFalse: 'review' },
    rich: { type: 'policy', baseId: RICH, version: 2, onTrue: 'approve', onFalse: 'review' },
    approve: { type: 'return', value: true },
    review: { type: 'custom', outcome: 'manual review' },
  },
};

describe('runFlow', () => {
  it('follows onTrue to a return node', async () => {
    const out = await runFlow(flow, { age: 30, income: 5000 }, resolve);
    expect(out).toEqual({
      result: true,
      path: [
        { nodeId: 'adult', type: 'policy', policyId: ADULT, version: null, result: true },
        { nodeId: 'rich', type: 'policy', policyId: RICH, version: 2, result: true },
        { nodeId: 'approve', type: 'return', result: true },
      ],
      nodes: [
        { nodeId: 'adult', result: true, outcomes: { adult: true }, trace: ['age 30'], error: null },
        { nodeId: 'rich', result: true, outcomes: { rich: true }, trace: [], error: null },
      ],
    });
  });

  it('reaches the shared custom node from both paths', async () => {
    const minor = await runFlow(flow, { age: 12, income: 5000 }, resolve);
    expect(minor.result).toBe('manual review');
    expect(minor.path.map((p) => p.nodeId)).toEqual(['adult', 'review']);
    const poor = await runFlow(flow, { age: 40, income: 10 }, resolve);
    expect(poor.result).toBe('manual review');
    expect(poor.path.map((p) => p.nodeId)).toEqual(['adult', 'rich', 'review']);
    expect(poor.path.at(-1)).toEqual({ nodeId: 'review', type: 'custom', result: 'manual review' });
  });

  it('passes the node to the resolver (base, pinned version or exact id)', async () => {
    seen.length = 0;
    await runFlow(flow, { age: 30, income: 5000 }, resolve);
    expect(seen.map(([id, n]) => [id, n.baseId, n.version])).toEqual([
      ['adult', ADULT, undefined],
      ['rich', RICH, 2],
    ]);
  });

  it('stops at a node error with the error and the nodes so far', async () => {
    const def: FlowDefinition = {
      start: 'adult',
      nodes: {
        adult: { type: 'policy', baseId: ADULT, onTrue: 'broken', onFalse: 'no' },
        broken: { type: 'policy', policyId: BROKEN, onTrue: 'no', onFalse: 'no' },
        no: { type: 'return', value: false },
      },
    };
    const out = await runFlow(def, { age: 30 }, resolve);
    expect(out.result).toBe(false);
    expect(out.error).toBe('node `broken`: Missing property: `x`');
    expect(out.errorCode).toBe('missing_property');
    expect(out.path.map((p) => p.nodeId)).toEqual(['adult', 'broken']);
    expect(out.nodes[1]).toEqual({
      nodeId: 'broken',
      result: false,
      outcomes: {},
      trace: [],
      error: 'Missing property: `x`',
      errorCode: 'missing_property',
    });
  });

  it('returns at once when the start is terminal', async () => {
    const out = await runFlow({ start: 't', nodes: { t: { type: 'return', value: false } } }, {}, resolve);
    expect(out).toEqual({ result: false, path: [{ nodeId: 't', type: 'return', result: false }], nodes: [] });
  });

  it('ends an unvalidated cycle with an error instead of looping', async () => {
    const def: FlowDefinition = { start: 'a', nodes: { a: { type: 'policy', baseId: ADULT, onTrue: 'a', onFalse: 'a' } } };
    const out = await runFlow(def, { age: 30 }, resolve);
    expect(out.error).toBe('flow does not end: node `a` visited again');
    expect(out.result).toBe(false);
  });

  it('reports a missing branch or unknown node of an unvalidated definition', async () => {
    const missing = await runFlow({ start: 'a', nodes: { a: { type: 'policy', baseId: ADULT, onFalse: 'x' } } }, { age: 30 }, resolve);
    expect(missing.error).toBe('policy node `a` has no `onTrue` branch');
    const unknown = await runFlow({ start: 'zz', nodes: { a: { type: 'return', value: true } } }, {}, resolve);
    expect(unknown.error).toBe('node `zz` does not exist');
  });

  it('rejects when the resolver rejects', async () => {
    const failing: PolicyResolver = async () => {
      throw new Error('gone');
    };
    await expect(runFlow(flow, {}, failing)).rejects.toThrow('gone');
  });
});

describe('runFlow step budget', () => {
  /** A policy that takes `cost` steps of the shared budget, stopping like rule-lang when it runs out. */
  const costly =
    (cost: number): ResolvedPolicy['run'] =>
    (_data, budget): PolicyRunResult => {
      if (budget.used + cost > budget.limit) {
        budget.used = budget.limit;
        const error = `Budget exceeded: the evaluation needs more than ${budget.limit} steps`;
        return { result: false, outcomes: {}, trace: [], error, errorCode: 'budget_exceeded' };
      }
      budget.used += cost;
      return { result: true, outcomes: { ok: true }, trace: [] };
    };
  const chain: FlowDefinition = {
    start: 'a',
    nodes: {
      a: { type: 'policy', baseId: ADULT, onTrue: 'b' },
      b: { type: 'policy', baseId: RICH, onTrue: 'c' },
      c: { type: 'policy', baseId: BROKEN, onTrue: 'done' },
      done: { type: 'return', value: true },
    },
  };
  const limits: number[] = [];
  const sharing: PolicyResolver = async () => ({
    policyId: 'p',
    version: null,
    run: (data, budget) => {
      limits.push(budget.used);
      return costly(40)(data, budget);
    },
  });

  it('shares one budget across the policy nodes of a run', async () => {
    limits.length = 0;
    expect((await runFlow(chain, {}, sharing, 120)).result).toBe(true);
    expect(limits).toEqual([0, 40, 80]);
  });

  it('stops the flow with budget_exceeded when the nodes together need more', async () => {
    const out = await runFlow(chain, {}, sharing, 100);
    expect(out.result).toBe(false);
    expect(out.errorCode).toBe('budget_exceeded');
    expect(out.error).toBe('node `c`: Budget exceeded: the evaluation needs more than 100 steps');
    expect(out.nodes.map((n) => n.nodeId)).toEqual(['a', 'b', 'c']);
  });

  it('gives each run a budget of its own, DEFAULT_FLOW_STEP_BUDGET by default', async () => {
    const seenBudgets: FlowStepBudget[] = [];
    const recording: PolicyResolver = async () => ({
      policyId: 'p',
      version: null,
      run: (_data, budget) => (seenBudgets.push(budget), { result: true, outcomes: {}, trace: [] }),
    });
    await runFlow(chain, {}, recording);
    await runFlow(chain, {}, recording);
    expect(seenBudgets[0].limit).toBe(DEFAULT_FLOW_STEP_BUDGET);
    expect(seenBudgets[0]).toBe(seenBudgets[2]);
    expect(seenBudgets[3]).not.toBe(seenBudgets[0]);
  });
});
