import {
  ArbiterError,
  isArbiterError,
  type FlowDefinition,
  type FlowPolicyNode,
  type FlowRunResponse,
  type LivePolicyRecordEntry,
  type Principal,
  type StoredFlowRunResponse,
  type StoredPolicyRunResponse,
} from '@arbiter/contracts';
import { runFlow, validateDefinition, type FlowStepBudget, type PolicyRunResult, type ResolvedPolicy } from '@arbiter/flow';
import type { EnginePool } from './engine-pool.js';
import type { ExecutedEvents } from './executed-events.js';
import { capTrace, checkDataDepth, type Limits } from './limits.js';
import type { ExecMetrics } from './metrics.js';
import type { RunnableResolver } from './runnable-resolver.js';

/** How a run named its resource: a base id (current runnable record) or an exact record id. */
export type RunBy = 'base' | 'record';

/** One stored run's input. */
export interface StoredRun {
  principal: Principal;
  id: string;
  data: Record<string, unknown>;
  trace: boolean;
}

/** Dependencies of {@link StoredRunner}. */
export interface StoredRunnerDeps {
  resolver: RunnableResolver;
  pool: EnginePool;
  events: ExecutedEvents;
  metrics: ExecMetrics;
  limits: Limits;
}

/** `errorCode` of a flow node whose policy is deleted, unknown or of another org. */
export const POLICY_NOT_FOUND = 'policy_not_found';

/**
 * Runs stored policies and flows (spec §4.3): resolves the record from the runnable index, runs
 * the policy in the pool (compiled policy looked up by hash, data checked against the schema) and
 * counts the run for the `executed` events. Flow policy nodes resolve the same way.
 */
export class StoredRunner {
  constructor(private readonly deps: StoredRunnerDeps) {}

  /** Runs a policy by base id or exact record id; not_found for unknown, deleted or other-org ids. */
  async runPolicy(req: StoredRun, by: RunBy): Promise<StoredPolicyRunResponse> {
    this.checkData(req.data);
    const entry = await this.deps.resolver.resolve('policy', req.principal, by === 'base' ? { baseId: req.id } : { recordId: req.id });
    const response = await this.evaluate(req.principal, entry, req.data, req.trace, this.deps.pool.budgetFor(req.trace));
    this.deps.events.record(req.principal, {
      resource: { type: 'policy', id: entry.recordId, baseId: entry.baseId },
      version: entry.version,
      via: by,
      result: response.result,
      error: response.error !== undefined,
    });
    return { ...response, policyId: entry.recordId, baseId: entry.baseId, version: entry.version };
  }

  /** Runs a flow by base id or exact record id; its policy nodes resolve like {@link runPolicy}. */
  async runFlow(req: StoredRun, by: RunBy): Promise<StoredFlowRunResponse> {
    this.checkData(req.data);
    const entry = await this.deps.resolver.resolve('flow', req.principal, by === 'base' ? { baseId: req.id } : { recordId: req.id });
    const response = await this.flow(entry.definition, req.principal, req.data, req.trace);
    this.deps.events.record(req.principal, {
      resource: { type: 'flow', id: entry.recordId, baseId: entry.baseId },
      version: entry.version,
      via: by,
      result: response.result,
      error: response.error !== undefined,
    });
    return { ...response, flowId: entry.recordId, baseId: entry.baseId, version: entry.version };
  }

  /** Runs an ad hoc definition (`POST /flow/test`): `validation_failed` with every structural problem. No event: nothing stored ran as a flow. */
  async testFlow(req: {
    principal: Principal;
    definition: FlowDefinition;
    data: Record<string, unknown>;
    trace: boolean;
  }): Promise<FlowRunResponse> {
    const problems = validateDefinition(req.definition);
    if (problems.length > 0) {
      throw new ArbiterError('validation_failed', `invalid flow definition: ${problems.map((p) => p.message).join('; ')}`, problems);
    }
    this.checkData(req.data);
    return this.flow(req.definition, req.principal, req.data, req.trace);
  }

  /**
   * Runs a flow; its policy and table nodes share one step budget (LANGUAGE.md §8.1). Table nodes
   * run here, in this thread: their cells were compiled once per parsed definition (the
   * resolver's entry cache) and their steps are bounded by the same budget as the policies'.
   */
  private flow(definition: FlowDefinition, principal: Principal, data: Record<string, unknown>, trace: boolean): Promise<FlowRunResponse> {
    const { limit } = this.deps.pool.budgetFor(trace);
    return runFlow(definition, data, (node) => this.resolveNode(node, principal, trace), limit, { trace });
  }

  /**
   * The policy a node runs. A deleted, unknown or other-org policy is not thrown: the node answers
   * an error result (`policy_not_found`), so the flow stops there with `path` and `nodes` so far.
   */
  private async resolveNode(node: FlowPolicyNode, principal: Principal, trace: boolean): Promise<ResolvedPolicy> {
    try {
      const entry = await this.deps.resolver.resolve(
        'policy',
        principal,
        node.policyId !== undefined
          ? { recordId: node.policyId }
          : { baseId: node.baseId!, ...(node.version !== undefined ? { version: node.version } : {}) },
      );
      return {
        policyId: entry.recordId,
        version: entry.version,
        run: (data, budget) => this.evaluate(principal, entry, data, trace, budget),
      };
    } catch (err) {
      if (!isArbiterError(err, 'not_found')) throw err;
      const error = err.message;
      const missing: PolicyRunResult = { result: false, outcomes: {}, trace: trace ? [error] : [], error, errorCode: POLICY_NOT_FOUND };
      return { policyId: node.policyId ?? node.baseId!, version: node.version ?? null, run: () => missing };
    }
  }

  /** Runs one policy record within what is left of `budget` (advancing its `used`). */
  private async evaluate(
    principal: Principal,
    entry: LivePolicyRecordEntry,
    data: Record<string, unknown>,
    trace: boolean,
    budget: FlowStepBudget,
  ) {
    const outcome = await this.deps.pool.runStored(
      principal,
      {
        hash: entry.ruleHash,
        rule: entry.rule,
        schema: entry.schema !== null && entry.schemaHash !== null ? { hash: entry.schemaHash, schema: entry.schema } : null,
        data,
        trace,
      },
      budget,
    );
    this.deps.metrics.countCache(outcome.cache);
    const response = outcome.response;
    if (response.errorCode === 'budget_exceeded') this.deps.metrics.budgetExceeded.inc();
    return { ...response, trace: capTrace(response.trace, this.deps.limits.maxTraceBytes), outcomes: response.outcomes ?? {} };
  }

  private checkData(data: unknown): void {
    try {
      checkDataDepth(data, this.deps.limits.maxDataDepth);
    } catch (err) {
      this.deps.metrics.refused.inc({ reason: 'data_depth' });
      throw err;
    }
  }
}
