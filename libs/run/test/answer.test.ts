import type { FlowTableNode } from '@arbiter/contracts';
import { StepBudget } from '@arbiter/rule-lang';
import { describe, expect, it } from 'vitest';
import {
  answerPolicy,
  answerRule,
  answerTable,
  compileDataSchema,
  compileRule,
  missingPolicyNode,
  policyNode,
  POLICY_NOT_FOUND,
  resolveRun,
  type CompiledRule,
} from '../src/index.js';

const ADULT = 'A **user** is adult if the __age__ of the **user** is at least 18.';
const adult = compileRule(ADULT);

describe('answerPolicy', () => {
  it('answers in the contract key order: result, trace, outcomes', () => {
    const answer = answerPolicy(adult, { user: { age: 30 } }, resolveRun({}));
    expect(Object.keys(answer)).toEqual(['result', 'trace', 'outcomes']);
    expect(answer.result).toBe(true);
    expect(answer.trace.at(-1)).toMatch(/result: true/);
    expect(answerPolicy(adult, { user: { age: 3 } }, resolveRun({ trace: false }))).toEqual({
      result: false,
      trace: [],
      outcomes: { adult: false },
    });
  });

  it('answers a rule that does not parse with parse_error, its message as the trace when traced', () => {
    const bad = compileRule('not a rule');
    expect('parseError' in bad).toBe(true);
    const traced = answerPolicy(bad, {}, resolveRun({}));
    expect(traced).toMatchObject({ result: false, outcomes: {}, errorCode: 'parse_error' });
    expect(traced.trace).toEqual([traced.error]);
    expect(answerPolicy(bad, {}, resolveRun({ trace: false })).trace).toEqual([]);
  });

  it('checks the schema before the rule: data breaking it answers schema_mismatch, even for a rule that does not parse', () => {
    const schema = compileDataSchema({ type: 'object', required: ['user'] });
    for (const rule of [adult, compileRule('not a rule')]) {
      const answer = answerPolicy(rule, {}, resolveRun({}), { schema });
      expect(answer).toMatchObject({ result: false, errorCode: 'schema_mismatch' });
      expect(answer.error).toMatch(/^Schema mismatch: `user`: is required/);
    }
  });

  it('stops at the step budget with budget_exceeded, advancing a shared budget', () => {
    const budget = new StepBudget(5, 5);
    const answer = answerPolicy(adult, { user: { age: 30 } }, resolveRun({ trace: false }), { budget });
    expect(answer.errorCode).toBe('budget_exceeded');
  });

  it('caps the trace at the run limit, keeping its last line', () => {
    const run = resolveRun({}, { maxTraceBytes: 40 });
    const answer = answerPolicy(adult, { user: { age: 30 } }, run);
    expect(answer.trace.at(-2)).toMatch(/^… trace cut: \d+ more lines \(a trace is limited to 40 bytes\)$/);
    expect(answer.trace.at(-1)).toMatch(/result: true/);
  });

  it('runs at the item clock when one is given', () => {
    const recent = compileRule('A **user** is new if the __joined__ of the **user** is within 1 day.');
    const run = resolveRun({ trace: false, now: '2026-01-01T00:00:00Z' });
    const data = { user: { joined: '2026-01-01' } };
    expect(answerPolicy(recent, data, run).result).toBe(true);
    expect(answerPolicy(recent, data, run, { now: '2026-03-01T00:00:00Z' }).result).toBe(false);
  });
});

describe('answerRule', () => {
  it('compiles once through the cache it is given', () => {
    const cache = new Map<string, CompiledRule>();
    answerRule(ADULT, { user: { age: 30 } }, resolveRun({}), cache);
    const held = cache.get(ADULT);
    answerRule(ADULT, { user: { age: 3 } }, resolveRun({}), cache);
    expect(cache.get(ADULT)).toBe(held);
  });
});

describe('flow nodes', () => {
  it('runs a policy node within the shared budget, and answers a missing one with policy_not_found', async () => {
    const run = resolveRun({ trace: false });
    const node = policyNode('p1', 2, adult, run);
    const budget = { limit: 100, used: 0 };
    expect(await node.run({ user: { age: 30 } }, budget)).toMatchObject({ result: true });
    expect(budget.used).toBeGreaterThan(0);
    const missing = missingPolicyNode('b1', null, 'policy `b1` not found', resolveRun({}));
    expect(await missing.run({}, budget)).toEqual({
      result: false,
      outcomes: {},
      trace: ['policy `b1` not found'],
      error: 'policy `b1` not found',
      errorCode: POLICY_NOT_FOUND,
    });
  });

  it('runs a table node, its trace capped like a policy', () => {
    const node = {
      type: 'table',
      hitPolicy: 'first',
      inputs: [{ name: 'country', path: 'applicant.country' }],
      outputs: [{ name: 'tier' }],
      rules: [
        { when: ['"NL"'], then: { tier: 'gold' } },
        { when: ['-'], then: { tier: 'basic' } },
      ],
    } as FlowTableNode;
    const data = { applicant: { country: 'NL' } };
    const full = answerTable('t', node, data, resolveRun({}), { limit: 1000, used: 0 });
    const capped = answerTable('t', node, data, resolveRun({}, { maxTraceBytes: 10 }), { limit: 1000, used: 0 });
    expect(full.ok && capped.ok).toBe(true);
    if (!full.ok || !capped.ok) return;
    expect(full.outcome.result).toEqual({ tier: 'gold' });
    expect(capped.outcome.trace.at(-1)).toBe(full.outcome.trace.at(-1));
    expect(capped.outcome.trace.some((l) => l.startsWith('… trace cut:'))).toBe(full.outcome.trace.length > 1);
  });
});
