import { runTableNode, type FlowStepBudget, type PolicyRunResult, type ResolvedPolicy, type TableRun } from '@arbiter/flow';
import type { EngineErrorCode, EvaluateOptions, Reasons, StepBudgetLike } from '@arbiter/rule-lang';
import type { DataSchema } from './schema/data-schema.js';
import type { FlowTableNode } from '@arbiter/contracts';
import { compileRule, type CompiledRule } from './compiled.js';
import type { ResolvedRun } from './resolve.js';
import { capTrace } from './trace-cap.js';
import { capReasons } from './reasons-cap.js';

/** `errorCode` of a flow node whose policy is deleted, unknown or of another org. */
export const POLICY_NOT_FOUND = 'policy_not_found';

/** The error codes a policy run answers with: the language's, and a schema the data breaks. */
export type RunErrorCode = EngineErrorCode | 'schema_mismatch';

/**
 * One policy run's answer, keys in the contract's order (`RunResponse`: result, trace, outcomes,
 * error, errorCode, reasons), so its JSON is the body as every door answers it.
 */
export interface PolicyAnswer {
  result: boolean;
  trace: string[];
  outcomes: Record<string, boolean>;
  error?: string;
  errorCode?: RunErrorCode;
  /** Why the result came out (LANGUAGE.md §10.4): only when the run asked, capped at its `maxReasonsBytes`. */
  reasons?: Reasons;
}

/** What a policy run may bring besides its rule and data. */
export interface PolicyRunExtras {
  /** The policy's schema: data that breaks it answers `schema_mismatch`, the rule unrun. */
  schema?: DataSchema | null;
  /** A budget shared with other runs (a flow's nodes), advanced by the steps taken; else the run's own. */
  budget?: StepBudgetLike;
  /** This item's clock (ISO 8601), instead of the run's (a replay of decisions made at different times). */
  now?: string;
}

/**
 * The reasons of a run that never reached its rule: one `error` entry, at the problem's place in a
 * rule that does not parse, at line 0, column 0 for data that breaks the schema.
 */
export function failedReasons(error: string, errorCode: 'schema_mismatch' | 'parse_error' | typeof POLICY_NOT_FOUND): Reasons {
  const at = errorCode === 'parse_error' ? /line (\d+), column (\d+)/.exec(error) : null;
  const line = at === null ? 0 : Number(at[1]);
  const column = at === null ? 0 : Number(at[2]);
  return { result: false, sentence: error, because: [{ kind: 'error', rule: '', text: '', holds: false, error, line, column }] };
}

/** The answer of a run that never reaches its rule: data breaking the schema, or a rule that does not parse. */
export function failedAnswer(
  error: string,
  errorCode: 'schema_mismatch' | 'parse_error',
  run: Pick<ResolvedRun, 'trace'> & Partial<Pick<ResolvedRun, 'reasons'>>,
): PolicyAnswer {
  const answer: PolicyAnswer = { result: false, trace: run.trace ? [error] : [], outcomes: {}, error, errorCode };
  if (run.reasons === true) answer.reasons = failedReasons(error, errorCode);
  return answer;
}

/**
 * One policy run on `data`: the schema checked first (`schema_mismatch`), a rule that does not
 * parse answers `parse_error`, then the evaluation within the step budget (past it,
 * `budget_exceeded`), its trace capped at the run's `maxTraceBytes`.
 */
export function answerPolicy(rule: CompiledRule, data: Record<string, unknown>, run: ResolvedRun, extras?: PolicyRunExtras): PolicyAnswer {
  if (extras !== undefined) {
    const mismatch = extras.schema?.mismatch(data) ?? null;
    if (mismatch !== null) return failedAnswer(mismatch, 'schema_mismatch', run);
  }
  if ('parseError' in rule) return failedAnswer(rule.parseError, 'parse_error', run);
  const r = rule.policy.evaluate(data, extras === undefined ? run.options : optionsOf(run, extras));
  const answer: PolicyAnswer = {
    result: r.result,
    trace: r.trace.length === 0 ? r.trace : capTrace(r.trace, run.maxTraceBytes),
    outcomes: r.outcomes,
  };
  if (r.error !== undefined) answer.error = r.error;
  if (r.errorCode !== undefined) answer.errorCode = r.errorCode;
  if (r.reasons !== undefined) answer.reasons = capReasons(r.reasons, run.maxReasonsBytes);
  return answer;
}

function optionsOf(run: ResolvedRun, extras: PolicyRunExtras): EvaluateOptions {
  if (extras.budget === undefined && extras.now === undefined) return run.options;
  const now = extras.now !== undefined ? new Date(extras.now) : run.now;
  return {
    trace: run.trace,
    stepBudget: extras.budget ?? run.stepBudget,
    ...(now !== undefined ? { now } : {}),
    ...(run.reasons ? { reasons: true } : {}),
  };
}

/** An unsaved rule's run: compiled (or found in `compiled`, a cache by text), then {@link answerPolicy}. */
export function answerRule(
  text: string,
  data: Record<string, unknown>,
  run: ResolvedRun,
  cache?: { get(text: string): CompiledRule | undefined; set(text: string, rule: CompiledRule): unknown },
): PolicyAnswer {
  let rule = cache?.get(text);
  if (rule === undefined) {
    rule = compileRule(text);
    cache?.set(text, rule);
  }
  return answerPolicy(rule, data, run);
}

/**
 * A flow's table node on one item within `budget` (whose `used` it advances), its trace and its
 * reasons capped like a policy's; `now` (ISO 8601) is this item's clock instead of the run's.
 */
export function answerTable(
  nodeId: string,
  node: FlowTableNode,
  data: Record<string, unknown>,
  run: ResolvedRun,
  budget: FlowStepBudget,
  now?: string,
): TableRun {
  const clock = now !== undefined ? new Date(now) : run.now;
  const answer = runTableNode(nodeId, node, data, budget, {
    trace: run.trace,
    ...(clock !== undefined ? { now: clock } : {}),
    ...(run.reasons ? { reasons: true } : {}),
  });
  if (answer.ok && answer.outcome.trace.length > 0) answer.outcome.trace = capTrace(answer.outcome.trace, run.maxTraceBytes);
  if (answer.ok && answer.outcome.reasons !== undefined) answer.outcome.reasons = capReasons(answer.outcome.reasons, run.maxReasonsBytes);
  return answer;
}

/** A flow's policy node run in process: the policy's answer within the flow's shared budget. */
export function policyNode(
  policyId: string,
  version: number | null,
  rule: CompiledRule,
  run: ResolvedRun,
  extras?: Omit<PolicyRunExtras, 'budget'>,
): ResolvedPolicy {
  return {
    policyId,
    version,
    run: (data, budget): PolicyRunResult => answerPolicy(rule, data, run, { ...extras, budget }),
  };
}

/** What a flow node whose policy cannot be found answers (`policy_not_found`): the flow stops there. */
export function missingPolicyAnswer(error: string, run: Pick<ResolvedRun, 'trace'>): PolicyRunResult {
  return { result: false, outcomes: {}, trace: run.trace ? [error] : [], error, errorCode: POLICY_NOT_FOUND };
}

/** A flow node naming a policy that cannot be found, as a resolved node answering {@link missingPolicyAnswer}. */
export function missingPolicyNode(
  policyId: string,
  version: number | null,
  error: string,
  run: Pick<ResolvedRun, 'trace'>,
): ResolvedPolicy {
  const missing = missingPolicyAnswer(error, run);
  return { policyId, version, run: () => missing };
}
