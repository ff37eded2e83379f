import type {
  Reasons,
  FlowDefinition,
  FlowNodeRun,
  FlowPathStep,
  FlowPolicyNode,
  FlowRunResponse,
  FlowTableNode,
  TableResult,
} from '@arbiter/contracts';
import { compileTable, routeKey, routeOnOf } from './table/compile.js';
import { evaluateTable, type TableOutcome, type TableRunOptions } from './table/evaluate.js';

/** What running one policy gives (the shape of a rule-lang evaluation). */
export interface PolicyRunResult {
  result: boolean;
  outcomes: Record<string, boolean>;
  trace: string[];
  error?: string;
  errorCode?: string;
  /** Why the result came out (LANGUAGE.md §10.4): only when the run asked. */
  reasons?: Reasons;
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

/** Options of {@link runFlow}. */
export interface FlowRunOptions {
  /** Trace table nodes (lines and cells); default true. Policy nodes trace as their resolver decides. */
  trace?: boolean;
  /** The clock of table cells (`is within 30 days`): defaults to now. */
  now?: Date | number;
  /** Table nodes say why (their `reasons`); policy nodes give reasons as their resolver decides. */
  reasons?: boolean;
  /**
   * Evaluates the table nodes: by default here, on the run's `data` ({@link runTableNode}). The
   * execution service runs them in its worker threads instead, where the data's bytes are read.
   */
  runTable?: TableRunner;
}

/** A table node's evaluation: its outcome, or the first problem that keeps the table from compiling. */
export type TableRun = { ok: true; outcome: TableOutcome } | { ok: false; problem: string };

/** Evaluates table node `nodeId` of a run within what is left of `budget` (advancing `budget.used`). */
export type TableRunner = (
  nodeId: string,
  node: FlowTableNode,
  budget: FlowStepBudget,
  options: TableRunOptions,
) => TableRun | Promise<TableRun>;

/** Compiles (once per node object) and evaluates table node `nodeId` on `data`: what a table runner does. */
export function runTableNode(
  nodeId: string,
  node: FlowTableNode,
  data: unknown,
  budget: FlowStepBudget,
  options: TableRunOptions,
): TableRun {
  const compiled = compileTable(nodeId, node);
  if (!compiled.ok) return { ok: false, problem: compiled.problems[0].message };
  return { ok: true, outcome: evaluateTable(nodeId, compiled.table, data, budget, options) };
}

/** Engine error code of a table node whose routed value has no route and no `default`. */
export const NO_ROUTE = 'no_route';

/**
 * Where the flow goes after table `id`: null when the node ends the flow (no `next`, no
 * `routes`), else the next node id, or an error when the routed value has no route and no default.
 */
function tableNext(id: string, node: FlowTableNode, result: TableResult): { id: string } | { error: string } | null {
  if (node.next !== undefined) return { id: node.next };
  if (node.routes === undefined) return null;
  const routeOn = routeOnOf(node);
  const value = Array.isArray(result) || routeOn === null ? null : (result[routeOn] ?? null);
  const key = routeKey(value);
  if (Object.hasOwn(node.routes, key)) return { id: node.routes[key] };
  if (node.default !== undefined) return { id: node.default };
  return { error: `node \`${id}\`: no route for \`${routeOn ?? ''}\` = ${JSON.stringify(value)}, and no \`default\`` };
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
 * each table node evaluates its rules and goes to `next` or routes on an output's value, until a
 * `return` (its value), a `custom` node (its outcome) or a table node that ends the flow (its
 * result) gives the result. A node's error
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
  options: FlowRunOptions = {},
): Promise<FlowRunResponse> {
  const traced = options.trace !== false;
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
    if (node.type === 'table') {
      const tableOptions: TableRunOptions = {
        trace: traced,
        ...(options.now !== undefined ? { now: options.now } : {}),
        ...(options.reasons === true ? { reasons: true } : {}),
      };
      const pending = options.runTable
        ? options.runTable(id, node, budget, tableOptions)
        : runTableNode(id, node, data, budget, tableOptions);
      // The in-process runner answers at once: no await (a turn of the event loop) for it.
      const run = pending instanceof Promise ? await pending : pending;
      if (!run.ok) return fail(`node \`${id}\`: ${run.problem}`, 'invalid_flow');
      const out = run.outcome;
      nodes.push({
        nodeId: id,
        type: 'table',
        result: out.result,
        matched: out.matched,
        cells: out.cells,
        trace: out.trace,
        error: out.error ?? null,
        ...(out.errorCode ? { errorCode: out.errorCode } : {}),
        ...(out.reasons !== undefined ? { reasons: out.reasons } : {}),
      });
      path.push({ nodeId: id, type: 'table', result: out.result, matched: out.matched });
      if (out.error !== undefined) return fail(`node \`${id}\`: ${out.error}`, out.errorCode ?? 'node_error');
      const next = tableNext(id, node, out.result);
      if (next === null) return { result: out.result, path, nodes };
      if ('error' in next) return fail(next.error, NO_ROUTE);
      id = next.id;
      continue;
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
      ...(run.reasons !== undefined ? { reasons: run.reasons } : {}),
    });
    path.push({ nodeId: id, type: 'policy', policyId: policy.policyId, version: policy.version, result: run.result });
    if (run.error !== undefined) return fail(`node \`${id}\`: ${run.error}`, run.errorCode ?? 'node_error');
    const branch = run.result ? 'onTrue' : 'onFalse';
    const next: string | undefined = node[branch];
    if (next === undefined) return fail(`policy node \`${id}\` has no \`${branch}\` branch`, 'invalid_flow');
    id = next;
  }
}
