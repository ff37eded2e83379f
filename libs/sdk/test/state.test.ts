/** The held state: deltas on top of the last state, compiled entries reused, unreferenced bases collected, swaps that runs never see half-done. */
import type { FlowDefinition, RunnableBase, RunnableSnapshot } from '@arbiter/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { runFlowDefinition } from '../src/local/evaluate.js';
import { Reporter } from '../src/local/reporter.js';
import { RunnableState } from '../src/local/state.js';

const limits = { stepBudget: 1_000_000, traceStepBudget: 10_000, maxTraceBytes: 262_144 };
const id = (n: number) => `0190a0b0-0000-7000-8000-${String(n).padStart(12, '0')}`;
const rule = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
const policy = (base: number, age: number, selected = true, record = base + 100): RunnableBase => ({
  kind: 'policy',
  baseId: id(base),
  selected,
  current: { policyId: id(record), baseId: id(base), status: 'draft', version: null, rule: rule(age), schema: null },
  pinned: [],
});
const flowOf = (base: number, policyBase: number): RunnableBase => {
  const definition: FlowDefinition = {
    start: 'a',
    nodes: {
      a: { type: 'policy', baseId: id(policyBase), onTrue: 'y', onFalse: 'n' },
      y: { type: 'return', value: true },
      n: { type: 'return', value: false },
    },
  };
  return {
    kind: 'flow',
    baseId: id(base),
    selected: true,
    current: { flowId: id(base + 100), baseId: id(base), status: 'draft', version: null, definition },
  };
};
const snapshot = (revision: number, full: boolean, bases: RunnableBase[], removed: string[] = []): RunnableSnapshot => ({
  revision,
  full,
  bases,
  removed,
  missing: [],
  limits,
});

let reporter: Reporter;
afterEach(async () => {
  await reporter?.close(0);
});

describe('RunnableState', () => {
  it('applies a delta on top of the last state and reuses what did not change', () => {
    reporter = new Reporter(async () => ({ accepted: 0, ignored: [] }), 60_000, 10);
    const s1 = RunnableState.from(snapshot(1, true, [policy(1, 18), policy(2, 18)]), null, reporter);
    const s2 = RunnableState.from(snapshot(2, false, [policy(2, 21)], [id(1)]), s1, reporter);
    expect([...s2.policies.keys()]).toEqual([id(2)]);
    expect(s2.policies.get(id(2))!.record.rule).toBe(rule(21));
    const s3 = RunnableState.from(snapshot(3, false, [policy(2, 21)]), s2, reporter);
    expect(s3.policies.get(id(2))!.policy).toBe(s2.policies.get(id(2))!.policy);
    // a full snapshot replaces everything
    expect([...RunnableState.from(snapshot(4, true, [policy(5, 1)]), s3, reporter).policies.keys()]).toEqual([id(5)]);
  });

  it('drops a base held only for a flow once no flow names it', () => {
    reporter = new Reporter(async () => ({ accepted: 0, ignored: [] }), 60_000, 10);
    const s1 = RunnableState.from(snapshot(1, true, [flowOf(10, 2), policy(2, 18, false)]), null, reporter);
    expect(s1.policies.has(id(2))).toBe(true);
    const s2 = RunnableState.from(snapshot(2, false, [flowOf(10, 3), policy(3, 18, false)]), s1, reporter);
    expect([...s2.policies.keys()]).toEqual([id(3)]);
  });

  it('a flow run keeps the state it started with while a new one is swapped in', async () => {
    reporter = new Reporter(async () => ({ accepted: 0, ignored: [] }), 60_000, 10);
    const before = RunnableState.from(snapshot(1, true, [flowOf(10, 2), policy(2, 18, false)]), null, reporter);
    const flow = before.flows.get(id(10))!.record.definition;
    const running = runFlowDefinition(before, flow, { applicant: { age: 20 } }, true);
    const after = RunnableState.from(snapshot(2, false, [policy(2, 99, false)]), before, reporter);
    expect((await running).result).toBe(true);
    expect((await runFlowDefinition(after, flow, { applicant: { age: 20 } }, true)).result).toBe(false);
  });
});
