import { RUN_DEFAULTS } from '@arbiter/contracts';
import { DEFAULT_STEP_BUDGET, DEFAULT_TRACED_STEP_BUDGET } from '@arbiter/rule-lang';
import { describe, expect, it } from 'vitest';
import { resolveRun } from '../src/index.js';

describe('resolveRun', () => {
  it('decides every default once: trace on, the traced budget, the trace cap, no fixed clock', () => {
    const run = resolveRun(undefined);
    expect(run).toMatchObject({ trace: true, stepBudget: RUN_DEFAULTS.tracedStepBudget, maxTraceBytes: RUN_DEFAULTS.maxTraceBytes });
    expect(run.now).toBeUndefined();
    expect(run.options).toEqual({ trace: true, stepBudget: RUN_DEFAULTS.tracedStepBudget });
    expect(resolveRun({})).toEqual(run);
  });

  it('gives a run without a trace the untraced budget', () => {
    expect(resolveRun({ trace: false })).toMatchObject({ trace: false, stepBudget: RUN_DEFAULTS.stepBudget });
  });

  it('takes the limits a door runs under, and the clock of the spec', () => {
    const run = resolveRun({ trace: false, now: '2026-01-02T03:04:05.000Z' }, { stepBudget: 7, tracedStepBudget: 3, maxTraceBytes: 99 });
    expect(run).toMatchObject({ trace: false, stepBudget: 7, maxTraceBytes: 99 });
    expect(run.now?.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(run.options).toEqual({ trace: false, stepBudget: 7, now: run.now });
    expect(resolveRun({ trace: true }, { stepBudget: 7, tracedStepBudget: 3 }).stepBudget).toBe(3);
  });

  it("agrees with the language's own defaults, and keeps the deadline order (queue wait plus a run end before the caller gives up)", () => {
    expect(RUN_DEFAULTS.stepBudget).toBe(DEFAULT_STEP_BUDGET);
    expect(RUN_DEFAULTS.tracedStepBudget).toBe(DEFAULT_TRACED_STEP_BUDGET);
    expect(RUN_DEFAULTS.queueWaitMs + RUN_DEFAULTS.itemTimeoutMs).toBeLessThan(RUN_DEFAULTS.callerTimeoutMs);
  });
});
