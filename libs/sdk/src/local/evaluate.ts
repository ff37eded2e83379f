import type { FlowPolicyNode, FlowRunResponse, StoredPolicyRunResponse } from '@arbiter/contracts';
import { runFlow, type PolicyRunResult, type ResolvedPolicy } from '@arbiter/flow';
import type { StepBudgetLike } from '@arbiter/rule-lang';
import { capTrace, type RunModes } from './limits.js';
import type { PolicyEntry, RunnableState } from './state.js';

/** `errorCode` of a flow node whose policy is deleted, unknown or of another org (as the execution service answers it). */
export const POLICY_NOT_FOUND = 'policy_not_found';

/**
 * One stored policy run, answered exactly as `POST /run/policy/{baseId}` answers it: the schema
 * checked first (`schema_mismatch`), a rule that does not parse answers `parse_error`, the trace
 * capped at `maxTraceBytes`, then the record that ran. Keys in the service's order.
 */
export function runPolicyEntry(
  entry: PolicyEntry,
  data: Record<string, unknown>,
  trace: boolean,
  modes: RunModes,
  maxTraceBytes: number,
): StoredPolicyRunResponse {
  if (!entry.plain) {
    const failed = engineFailure(entry, data, trace);
    if (failed !== null) {
      return {
        result: false,
        trace: failed.trace,
        outcomes: {},
        error: failed.error,
        errorCode: failed.errorCode,
        policyId: entry.policyId,
        baseId: entry.baseId,
        version: entry.version,
      };
    }
  }
  const r = entry.policy!.evaluate(data, trace ? modes.traced : modes.untraced);
  const lines = trace ? capTrace(r.trace, maxTraceBytes) : r.trace;
  if (r.error === undefined) {
    return { result: r.result, trace: lines, outcomes: r.outcomes, policyId: entry.policyId, baseId: entry.baseId, version: entry.version };
  }
  return {
    result: r.result,
    trace: lines,
    outcomes: r.outcomes,
    error: r.error,
    ...(r.errorCode !== undefined ? { errorCode: r.errorCode } : {}),
    policyId: entry.policyId,
    baseId: entry.baseId,
    version: entry.version,
  };
}

/** The answer of a run that never reaches the rule: data breaking the schema, or a rule that does not parse. */
function engineFailure(
  entry: PolicyEntry,
  data: Record<string, unknown>,
  trace: boolean,
): { trace: string[]; error: string; errorCode: 'schema_mismatch' | 'parse_error' } | null {
  const mismatch = entry.schema?.mismatch(data) ?? null;
  if (mismatch !== null) return { trace: trace ? [mismatch] : [], error: mismatch, errorCode: 'schema_mismatch' };
  if (entry.parseError !== null) return { trace: trace ? [entry.parseError] : [], error: entry.parseError, errorCode: 'parse_error' };
  return null;
}

/** A policy node's run within the flow's shared budget, as the execution service runs it. */
function nodeRun(
  entry: PolicyEntry,
  data: Record<string, unknown>,
  trace: boolean,
  budget: StepBudgetLike,
  maxTraceBytes: number,
): PolicyRunResult {
  const failed = engineFailure(entry, data, trace);
  if (failed !== null) return { result: false, outcomes: {}, trace: failed.trace, error: failed.error, errorCode: failed.errorCode };
  const r = entry.policy!.evaluate(data, { trace, stepBudget: budget });
  return {
    result: r.result,
    outcomes: r.outcomes ?? {},
    trace: capTrace(r.trace, maxTraceBytes),
    ...(r.error !== undefined ? { error: r.error } : {}),
    ...(r.errorCode !== undefined ? { errorCode: r.errorCode } : {}),
  };
}

/** The policy a flow node runs in `state`, or the `policy_not_found` answer the service gives for one it cannot find. */
function resolveNode(state: RunnableState, node: FlowPolicyNode, trace: boolean, maxTraceBytes: number): ResolvedPolicy {
  let entry: PolicyEntry | undefined;
  let error: string;
  if (node.policyId !== undefined) {
    entry = state.records.get(node.policyId);
    error = `policy \`${node.policyId}\` not found`;
  } else if (node.version !== undefined) {
    entry = state.versions.get(`${node.baseId!}:${node.version}`);
    error = state.policies.has(node.baseId!)
      ? `policy \`${node.baseId!}\` has no version ${node.version}`
      : `policy \`${node.baseId!}\` not found`;
  } else {
    entry = state.policies.get(node.baseId!);
    error = `policy \`${node.baseId!}\` not found`;
  }
  if (entry === undefined) {
    const missing: PolicyRunResult = { result: false, outcomes: {}, trace: trace ? [error] : [], error, errorCode: POLICY_NOT_FOUND };
    return { policyId: node.policyId ?? node.baseId!, version: node.version ?? null, run: () => missing };
  }
  const found = entry;
  return {
    policyId: found.policyId,
    version: found.version,
    run: (data, budget) => nodeRun(found, data, trace, budget, maxTraceBytes),
  };
}

/** A flow run in `state` (one state for the whole run), answered as `POST /run/flow/{baseId}` answers it, without the flow's ids. */
export function runFlowDefinition(
  state: RunnableState,
  definition: Parameters<typeof runFlow>[0],
  data: Record<string, unknown>,
  trace: boolean,
): Promise<FlowRunResponse> {
  const { limits } = state;
  return runFlow(
    definition,
    data,
    (node) => Promise.resolve(resolveNode(state, node, trace, limits.maxTraceBytes)),
    trace ? limits.traceStepBudget : limits.stepBudget,
    { trace },
  );
}
