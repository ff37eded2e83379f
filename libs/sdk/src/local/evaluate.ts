import type { FlowPolicyNode, FlowRunResponse, RunFlags, StoredPolicyRunResponse } from '@arbiter/contracts';
import { runFlow, type ResolvedPolicy } from '@arbiter/flow';
import { answerPolicy, answerTable, missingPolicyNode, policyNode, type ResolvedRun } from '@arbiter/run';
import type { PolicyEntry, RunnableState } from './state.js';

/**
 * One stored policy run, answered exactly as `POST /run/policy/{baseId}` answers it: the run
 * layer's answer (`answerPolicy`: schema, parse error, budget, trace cap), then the record that
 * ran. Keys in the service's order.
 */
export function runPolicyEntry(entry: PolicyEntry, data: Record<string, unknown>, run: ResolvedRun): StoredPolicyRunResponse {
  const answer = answerPolicy(entry.compiled, data, run, entry.schema === null ? undefined : { schema: entry.schema });
  return { ...answer, policyId: entry.policyId, baseId: entry.baseId, version: entry.version };
}

/**
 * The instant a flow's base-following nodes pick at: the run's clock (`at`, epoch ms), or its
 * `asOf` (then, as the service does, on the base's whole timeline: `RunnableState.policyAsOf`).
 */
export type NodeInstant = { at: number } | { asOf: number };

/** The policy a flow node runs in `state` (a base-following node: the version in effect at `when`), or the `policy_not_found` answer the service gives for one it cannot find. */
function resolveNode(state: RunnableState, node: FlowPolicyNode, run: ResolvedRun, when: NodeInstant): ResolvedPolicy {
  let entry: PolicyEntry | undefined;
  let error: string;
  if (node.policyId !== undefined) {
    entry = state.records.get(node.policyId);
    error = `policy \`${node.policyId}\` not found`;
  } else if (node.version !== undefined) {
    entry = state.versions.get(`${node.baseId!}:${node.version}`);
    error =
      state.policies.has(node.baseId!) || state.timedPolicies.has(node.baseId!)
        ? `policy \`${node.baseId!}\` has no version ${node.version}`
        : `policy \`${node.baseId!}\` not found`;
  } else {
    const picked = 'asOf' in when ? state.policyAsOf(node.baseId!, when.asOf) : state.policyAt(node.baseId!, when.at);
    entry = typeof picked === 'string' ? undefined : picked;
    error = typeof picked === 'string' ? picked : `policy \`${node.baseId!}\` not found`;
  }
  if (entry === undefined) return missingPolicyNode(node.policyId ?? node.baseId!, node.version ?? null, error, run);
  return policyNode(entry.policyId, entry.version, entry.compiled, run, entry.schema === null ? undefined : { schema: entry.schema });
}

/** A flow run in `state` (one state for the whole run), answered as `POST /run/flow/{baseId}` answers it, without the flow's ids. */
export function runFlowDefinition(
  state: RunnableState,
  definition: Parameters<typeof runFlow>[0],
  data: Record<string, unknown>,
  trace: boolean,
  flags?: RunFlags,
  now?: string,
  when: NodeInstant = { at: Date.now() },
): Promise<FlowRunResponse> {
  const run = state.runOf(trace, flags, now);
  // Table nodes run as the service's workers run them (answerTable: the trace and the reasons capped alike).
  return runFlow(definition, data, (node) => Promise.resolve(resolveNode(state, node, run, when)), run.stepBudget, {
    trace: run.trace,
    runTable: (nodeId, node, budget) => answerTable(nodeId, node, data, run, budget),
  });
}
