/** As-of picks in the held state: what a runtime can answer for an instant, and what it must leave to the service. */
import type { FlowDefinition, RunnableBase, RunnablePolicy, RunnableSnapshot } from '@arbiter/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runFlowDefinition } from '../src/local/evaluate.js';
import { Reporter } from '../src/local/reporter.js';
import { RunnableState, type PolicyEntry } from '../src/local/state.js';

const limits = { stepBudget: 1_000_000, traceStepBudget: 10_000, maxTraceBytes: 262_144 };
const id = (n: number) => `0190a0b0-0000-7000-8000-${String(n).padStart(12, '0')}`;
const rule = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
const BASE = id(1);
const record = (version: number | null, age: number, n = 100 + (version ?? 0)): RunnablePolicy => ({
  policyId: id(n),
  baseId: BASE,
  status: version === null ? 'draft' : 'published',
  version,
  rule: rule(age),
  schema: null,
});
const plain = (current: RunnablePolicy, extra: Partial<Extract<RunnableBase, { kind: 'policy' }>> = {}): RunnableBase => ({
  kind: 'policy',
  baseId: BASE,
  selected: true,
  current,
  pinned: [],
  ...extra,
});
const snapshot = (revision: number, full: boolean, bases: RunnableBase[]): RunnableSnapshot => ({
  revision,
  full,
  bases,
  removed: [],
  missing: [],
  limits,
});
const T0 = Date.parse('2026-11-01T00:00:00.000Z');
const HOUR = 3600_000;
const versionOf = (picked: PolicyEntry | string | undefined) => (typeof picked === 'object' ? picked.version : picked);

let reporter: Reporter;
beforeEach(() => {
  reporter = new Reporter(async () => ({ accepted: 0, ignored: [] }), 60_000, 10);
});
afterEach(async () => {
  await reporter.close(0);
});

describe('as-of picks of a base on a timeline', () => {
  it('picks by instant over the entries held, and names the first held before them', () => {
    const v2 = record(2, 21);
    const v3 = record(3, 18);
    const base = plain(v2, {
      timeline: [
        { version: 2, recordId: v2.policyId, from: T0 },
        { version: 3, recordId: v3.policyId, from: T0 + HOUR, rollbackOf: 1 },
      ],
      scheduled: [v3],
    });
    const state = RunnableState.from(snapshot(1, true, [base]), null, reporter, T0 + 10);
    expect(versionOf(state.policyAsOf(BASE, T0))).toBe(2);
    expect(versionOf(state.policyAsOf(BASE, T0 + HOUR - 1))).toBe(2);
    expect(versionOf(state.policyAsOf(BASE, T0 + HOUR))).toBe(3);
    expect(state.policyAsOf(BASE, T0 - 1)).toBe(
      `policy \`${BASE}\` has no version in effect at that instant: its first held, version 2, takes effect at 2026-11-01T00:00:00.000Z`,
    );
    expect(state.policyAsOf(id(9), T0)).toBeUndefined();
  });
});

describe('as-of picks of a base without a timeline', () => {
  it('answers the record in effect from when it was held on, and names it before', () => {
    const state = RunnableState.from(snapshot(1, true, [plain(record(1, 18))]), null, reporter, T0);
    expect(versionOf(state.policyAsOf(BASE, T0))).toBe(1);
    expect(versionOf(state.policyAsOf(BASE, T0 + 365 * 24 * HOUR))).toBe(1);
    expect(state.policyAsOf(BASE, T0 - 1)).toBe(
      `policy \`${BASE}\` has no version held for that instant: its first held, version 1, is known in effect from 2026-11-01T00:00:00.000Z`,
    );
  });

  it('keeps that instant while the record stays the same, and moves it when another takes over', () => {
    const s1 = RunnableState.from(snapshot(1, true, [plain(record(1, 18))]), null, reporter, T0);
    // another base changed: this one arrives again unchanged
    const s2 = RunnableState.from(snapshot(2, false, [plain(record(1, 18))]), s1, reporter, T0 + HOUR);
    expect(versionOf(s2.policyAsOf(BASE, T0))).toBe(1);
    const s3 = RunnableState.from(snapshot(3, false, [plain(record(2, 21))]), s2, reporter, T0 + 2 * HOUR);
    expect(versionOf(s3.policyAsOf(BASE, T0 + 2 * HOUR))).toBe(2);
    expect(s3.policyAsOf(BASE, T0 + HOUR)).toMatch(/no version held for that instant: its first held, version 2/);
  });

  it('a never-published base has no version at any instant, as the service answers', () => {
    const state = RunnableState.from(snapshot(1, true, [plain(record(null, 18))]), null, reporter, T0);
    expect(state.policyAsOf(BASE, T0 + HOUR)).toBe(`policy \`${BASE}\` has no version in effect`);
    // a run without an instant still runs the draft
    expect(state.policyAt(BASE, T0 + HOUR)).toMatchObject({ version: null });
  });

  it('a base in a staged rollout: the new version for every as-of run, whatever the split', () => {
    const base = plain(record(2, 21), { rollout: { percent: 0, previous: record(1, 18) } });
    const state = RunnableState.from(snapshot(1, true, [base]), null, reporter, T0);
    expect(versionOf(state.policyAt(BASE, T0))).toBe(1);
    expect(versionOf(state.policyAsOf(BASE, T0))).toBe(2);
    expect(state.policyAsOf(BASE, T0 - 1)).toMatch(/its first held, version 2/);
  });
});

describe('as-of flows', () => {
  it("a base-following node picks at the run's asOf; one not held for it stops the flow as the service's missing node does", async () => {
    const definition: FlowDefinition = {
      start: 'a',
      nodes: {
        a: { type: 'policy', baseId: BASE, onTrue: 'y', onFalse: 'n' },
        y: { type: 'return', value: true },
        n: { type: 'return', value: false },
      },
    };
    const flow: RunnableBase = {
      kind: 'flow',
      baseId: id(2),
      selected: true,
      current: { flowId: id(200), baseId: id(2), status: 'published', version: 1, definition },
    };
    const v1 = record(1, 18);
    const v2 = record(2, 21);
    const timed = plain(v1, {
      selected: false,
      timeline: [
        { version: 1, recordId: v1.policyId, from: T0 },
        { version: 2, recordId: v2.policyId, from: T0 + HOUR },
      ],
      scheduled: [v2],
    });
    const state = RunnableState.from(snapshot(1, true, [flow, timed]), null, reporter, T0 + 1);
    const data = { applicant: { age: 19 } };
    expect(state.flowAsOf(id(2), T0 + 1)).toMatchObject({ record: { version: 1 } });
    expect(state.flowAsOf(id(2), T0)).toMatch(/^flow `.*` has no version held for that instant: its first held, version 1/);
    const before = await runFlowDefinition(state, definition, data, false, undefined, undefined, { asOf: T0 + 1 });
    expect(before).toMatchObject({ result: true, path: [{ nodeId: 'a', version: 1 }, { nodeId: 'y' }] });
    const after = await runFlowDefinition(state, definition, data, false, undefined, undefined, { asOf: T0 + HOUR });
    expect(after).toMatchObject({ result: false, path: [{ nodeId: 'a', version: 2 }, { nodeId: 'n' }] });
    const tooEarly = await runFlowDefinition(state, definition, data, false, undefined, undefined, { asOf: T0 - 1 });
    expect(tooEarly).toMatchObject({ result: false, errorCode: 'policy_not_found' });
    expect(tooEarly.error).toMatch(/its first held, version 1, takes effect at/);
  });
});
