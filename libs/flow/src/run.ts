import type { FlowDefinition, FlowNodeRun, FlowPathStep, FlowPolicyNode, FlowRunResponse } from '@arbiter/contracts';

/** What running one policy gives (the shape of a rule-lang evaluation). */
export interface PolicyRunResult {
  result: boolean;
  outcomes: Record<string, boolean>;
  trace: string[];
  error?: string;
  errorCode?: string;
}

/**
 * The step budget of one flow run (LANGUAGE.md §8.1), shared by its policy nodes: each node's
 * evaluation starts at `used` and advances it; past `limit` a node stops with `budget_exceeded`,
 * and so does the flow.
 */
export interface FlowStepBudget {
  readonly limit: number;
  used: number;
}

/** Steps a flow run may take when the caller names no budget (rule-lang's untraced default). */
export const DEFAULT_FLOW_STEP_BUDGET = 1_000_000;

/** A policy node resolved to a concrete record. */
export interface ResolvedPolicy {
  policyId: string;
  version: number | null;
  /** Runs the policy on `data` within what is left of the run's `budget`, advancing `budget.used`. */
  run(data: Record<string, unknown>, budget: FlowStepBudget): PolicyRunResult | Promise<PolicyRunResult>;
}

/** Finds the record a policy node runs (its base's runnable record, the pinned version, or the exact id). */
export type PolicyResolver = (node: FlowPolicyNode, nodeId: string) => Promise<ResolvedPolicy>;

/**
 * Runs a flow from its start: each policy node runs on `data` and follows `onTrue` or `onFalse`,
 * until a `return` (its value) or `custom` node (its outcome) gives the result. A node's error
 * stops the flow: `result` false and `error` naming the node. A rejection of `resolvePolicy`
 * (e.g. a deleted policy) rejects the run. Guards against a cycle even if the definition was not
 * validated. The policy nodes share one step budget (`stepBudget`, default
 * {@link DEFAULT_FLOW_STEP_BUDGET}): a node that exceeds it stops the flow with `budget_exceeded`.
 */
export async function runFlow(
  def: FlowDefinition,
  data: Record<string, unknown>,
  resolvePolicy: PolicyResolver,
  stepBudget: number = DEFAULT_FLOW_STEP_BUDGET,
): Promise<FlowRunResponse> {
  const budget: FlowStepBudget = { limit: stepBudget, used: 0 };
  const path: FlowPathStep[] = [];
  const nodes: FlowNodeRun[] = [];
  const fail = (error: string, errorCode: string): FlowRunResponse => ({ result: false, path, nodes, error, errorCode });
  const limit = Object.keys(def.nodes).length;
  let id: string = def.start;
  for (let step = 0; ; step++) {
    if (step >= limit) return fail(`flow does not end: node \`${id}\` visited again`, 'invalid_flow');
    const node = Object.hasOwn(def.nodes, id) ? def.nodes[id] : undefined;
    if (node === undefined) return fail(`node \`${id}\` does not exist`, 'invalid_flow');
    if (node.type === 'return') {
      path.push({ nodeId: id, type: 'return', result: node.value });
      return { result: node.value, path, nodes };
    }
    if (node.type === 'custom') {
      path.push({ nodeId: id, type: 'custom', result: node.outcome });
      return { result: node.outcome, path, nodes };
    }
    const policy = await resolvePolicy(node, id);
    const run = await policy.run(data, budget);
    nodes.push({
      nodeId: id,
      result: run.result,
      outcomes: run.outcomes,
      trace: run.trace,
      error: run.error ?? null,
      ...(run.errorCode ? { errorCode: run.errorCode } : {}),
    });
    path.push({ nodeId: id, type: 'policy', policyId: policy.policyId, version: policy.version, result: run.result });
    if (run.error !== undefined) return fail(`node \`${id}\`: ${run.error}`, run.errorCode ?? 'node_error');
    const branch = run.result ? 'onTrue' : 'onFalse';
    const next: string | undefined = node[branch];
    if (next === undefined) return fail(`policy node \`${id}\` has no \`${branch}\` branch`, 'invalid_flow');
    id = next;
  }
}
