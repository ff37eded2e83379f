import { compile, isRuleParseError, type CompiledPolicy } from '@arbiter/rule-lang';
import type { ResolvedPolicy } from './run.js';

/** The policy record a flow's policy node runs, found by the caller (the registry, the CLI from a pulled directory). */
export interface PolicyTarget {
  policyId: string;
  version: number | null;
  rule: string;
}

/**
 * Resolves the policy nodes of flow runs outside the execution service (saved tests, the CLI) to
 * their targets' rules, each compiled once per policy: a rule that does not parse answers
 * `parse_error` on every run that reaches it. `now` is the clock of the run (default: the current time).
 */
export function targetResolver(): (target: PolicyTarget, now?: Date) => ResolvedPolicy {
  const policies = new Map<string, CompiledPolicy | Error>();
  return (target, now) => {
    let policy = policies.get(target.policyId);
    if (policy === undefined) {
      try {
        policy = compile(target.rule);
      } catch (err) {
        if (!isRuleParseError(err)) throw err;
        policy = err;
      }
      policies.set(target.policyId, policy);
    }
    const ready = policy;
    return {
      policyId: target.policyId,
      version: target.version,
      run: (data, budget) =>
        ready instanceof Error
          ? { result: false, outcomes: {}, trace: [], error: ready.message, errorCode: 'parse_error' }
          : ready.evaluate(data, now === undefined ? { stepBudget: budget } : { stepBudget: budget, now }),
    };
  };
}
