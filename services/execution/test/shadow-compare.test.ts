import { describe, expect, it } from 'vitest';
import { flowAnswer, policyAnswer, sameAnswer, shadowRunning, sideOf } from '../src/answers/shadow-runs.js';

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

describe('shadow comparisons', () => {
  it('compares a policy answer by result, error code and outcomes (keys in any order), not its trace', () => {
    const a = policyAnswer(json({ result: true, trace: 'x', outcomes: { b: true, a: false }, policyId: 'r-1' }));
    const b = policyAnswer(json({ result: true, trace: 'y', outcomes: { a: false, b: true }, policyId: 'r-2' }));
    expect(sameAnswer(a, b)).toBe(true);
    expect(sameAnswer(a, { ...b, outcomes: { a: true, b: true } })).toBe(false);
    expect(sameAnswer(a, { ...b, errorCode: 'missing_property' })).toBe(false);
    expect(sameAnswer(a, { ...b, result: false })).toBe(false);
  });

  it('compares a flow answer by result, error code and the node ids of its path', () => {
    const response = (result: unknown, path: string[]) => ({
      result: result as boolean,
      path: path.map((nodeId) => ({ nodeId, type: 'return' as const, result: result as boolean })),
      nodes: [],
    });
    expect(sameAnswer(flowAnswer(response('gold', ['a', 'b'])), flowAnswer(response('gold', ['a', 'b'])))).toBe(true);
    expect(sameAnswer(flowAnswer(response('gold', ['a', 'b'])), flowAnswer(response('gold', ['a', 'c'])))).toBe(false);
    expect(sameAnswer(flowAnswer(response({ tier: 1 }, ['t'])), flowAnswer(response({ tier: 2 }, ['t'])))).toBe(false);
  });

  it('names the sides of a transition from four values, so a report holds at most sixteen', () => {
    expect(sideOf({ result: true, errorCode: null })).toBe('true');
    expect(sideOf({ result: false, errorCode: null })).toBe('false');
    expect(sideOf({ result: false, errorCode: 'budget_exceeded' })).toBe('error');
    expect(sideOf({ result: 'gold', errorCode: null })).toBe('other');
    expect(sideOf({ result: { tier: 1 }, errorCode: null })).toBe('other');
  });
});

describe('whether a shadow runs', () => {
  const shadow = { recordId: 'r', sampleRate: 0.5, until: '2026-12-02T12:00:00.000Z', since: '2026-12-01T00:00:00.000Z' };
  const at = (iso: string) => Date.parse(iso);

  it('runs until its `until` (exclusive), for ever without one, never at a share of 0 or without a shadow', () => {
    expect(shadowRunning(shadow, at('2026-12-02T11:59:59.999Z'))).toBe(true);
    expect(shadowRunning(shadow, at('2026-12-02T12:00:00.000Z'))).toBe(false);
    expect(shadowRunning({ ...shadow, until: null }, at('2099-01-01T00:00:00.000Z'))).toBe(true);
    expect(shadowRunning({ ...shadow, sampleRate: 0 }, at('2026-12-01T00:00:00.000Z'))).toBe(false);
    expect(shadowRunning(undefined, 0)).toBe(false);
  });
});
