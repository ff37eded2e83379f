import {
  ArbiterError,
  ExecOperatorsRequest,
  ExecRuleRequest,
  ExecRunManyRequest,
  ExecRunRequest,
  ExecSubject,
  FlowTestRequest,
  isArbiterError,
  StoredRunRequest,
  StoredRunSubject,
  type ExecBatchResult,
  type OperatorsResponse,
} from '@arbiter/contracts';
import { defineEndpoint, type EndpointDef, type ServiceDef } from '@arbiter/service-kit';
import { requireView } from './access.js';
import { batchEndpoint, fitReply } from './batch-endpoint.js';
import type { EnginePool } from './engine-pool.js';
import { capTrace, checkDataDepth, checkRuleSize, type Limits } from './limits.js';
import type { ExecMetrics } from './metrics.js';
import type { RuleIndex } from './rule-index.js';
import type { StoredRunner } from './stored-runner.js';

/** What the `exec` endpoints need. */
export interface ExecDeps {
  pool: EnginePool;
  limits: Limits;
  metrics: ExecMetrics;
  index: RuleIndex;
  /** Runs of stored policies and flows (`exec.stored.*`, `exec.flow.test`). */
  stored: StoredRunner;
  version: string;
  /** The bus's max payload: an `exec.batch` reply stays under it. */
  maxReplyBytes?: number;
}

/**
 * The `exec` service in one queue group: `exec.run`, `exec.validate`, `exec.explain`,
 * `exec.operators`, the stored runs `exec.stored.{policy,flow}.{base,record}` and `exec.flow.test`, and
 * `exec.batch` (several evaluations in one message) and `exec.run.many` (one rule, many data objects).
 */
export function execService(deps: ExecDeps): ServiceDef {
  const { pool, limits, metrics, index, stored } = deps;
  let operators: Promise<OperatorsResponse> | undefined;

  const ruleSize = (rule: string): number => {
    try {
      return checkRuleSize(rule, limits.maxRuleBytes);
    } catch (err) {
      metrics.refused.inc({ reason: 'rule_size' });
      throw err;
    }
  };
  const countTimeout = (err: unknown): never => {
    if (isArbiterError(err, 'timeout')) metrics.timeouts.inc();
    throw err;
  };
  /** Runs one evaluation whose caller and rule size were checked. */
  const runChecked = async ({ principal, ...req }: ExecRunRequest, size: number) => {
    try {
      checkDataDepth(req.data, limits.maxDataDepth);
    } catch (err) {
      metrics.refused.inc({ reason: 'data_depth' });
      throw err;
    }
    // Queued under its caller: the fair queue serves callers in turn.
    const outcome = await pool.run({ principal, ...req }).catch(countTimeout);
    metrics.countCache(outcome.cache);
    if (outcome.response.errorCode === 'budget_exceeded') metrics.budgetExceeded.inc();
    index.note(outcome.hash, size, outcome.cache === 'compile');
    return { ...outcome.response, trace: capTrace(outcome.response.trace, limits.maxTraceBytes) };
  };

  const endpoints: Record<string, EndpointDef> = {
    run: defineEndpoint({
      subject: ExecSubject.run,
      request: ExecRunRequest,
      handler: async (req) => {
        requireView(req.principal);
        return runChecked(req, ruleSize(req.rule));
      },
    }),
    run_many: defineEndpoint({
      subject: ExecSubject.runMany,
      request: ExecRunManyRequest,
      handler: async ({ items, ...req }) => {
        requireView(req.principal);
        const size = ruleSize(req.rule);
        const results = new Array<ExecBatchResult>(items.length);
        const runnable: number[] = [];
        items.forEach((data, i) => {
          try {
            checkDataDepth(data, limits.maxDataDepth);
            runnable.push(i);
          } catch (err) {
            metrics.refused.inc({ reason: 'data_depth' });
            results[i] = { ok: false, error: (err as ArbiterError).toWire() };
          }
        });
        if (runnable.length > 0) {
          // One queue job for the whole message: the rule compiled once per worker task, the items evaluated in a loop.
          const outcome = await pool.runMany({ ...req, items: runnable.map((i) => items[i]) });
          metrics.countCache(outcome.cache);
          index.note(outcome.hash, size, outcome.cache === 'compile');
          outcome.results.forEach((r, k) => {
            if (r.ok) {
              if (r.response.errorCode === 'budget_exceeded') metrics.budgetExceeded.inc();
              results[runnable[k]] = { ok: true, data: { ...r.response, trace: capTrace(r.response.trace, limits.maxTraceBytes) } };
            } else {
              if (r.error.code === 'timeout') metrics.timeouts.inc();
              results[runnable[k]] = { ok: false, error: new ArbiterError(r.error.code, r.error.message).toWire() };
            }
          });
        }
        return fitReply(results, deps.maxReplyBytes ?? 1024 * 1024);
      },
    }),
    validate: defineEndpoint({
      subject: ExecSubject.validate,
      request: ExecRuleRequest,
      handler: async (req) => {
        requireView(req.principal);
        ruleSize(req.rule);
        return pool.validate(req.principal, req.rule).catch(countTimeout);
      },
    }),
    explain: defineEndpoint({
      subject: ExecSubject.explain,
      request: ExecRuleRequest,
      handler: async (req) => {
        requireView(req.principal);
        ruleSize(req.rule);
        return pool.explain(req.principal, req.rule).catch(countTimeout);
      },
    }),
    stored_policy_base: defineEndpoint({
      subject: StoredRunSubject.policyByBase,
      request: StoredRunRequest,
      handler: (req) => (requireView(req.principal), stored.runPolicy(req, 'base').catch(countTimeout)),
    }),
    stored_policy_record: defineEndpoint({
      subject: StoredRunSubject.policyByRecord,
      request: StoredRunRequest,
      handler: (req) => (requireView(req.principal), stored.runPolicy(req, 'record').catch(countTimeout)),
    }),
    stored_flow_base: defineEndpoint({
      subject: StoredRunSubject.flowByBase,
      request: StoredRunRequest,
      handler: (req) => (requireView(req.principal), stored.runFlow(req, 'base').catch(countTimeout)),
    }),
    stored_flow_record: defineEndpoint({
      subject: StoredRunSubject.flowByRecord,
      request: StoredRunRequest,
      handler: (req) => (requireView(req.principal), stored.runFlow(req, 'record').catch(countTimeout)),
    }),
    flow_test: defineEndpoint({
      subject: StoredRunSubject.flowTest,
      request: FlowTestRequest,
      handler: (req) => (requireView(req.principal), stored.testFlow(req).catch(countTimeout)),
    }),
    operators: defineEndpoint({
      subject: ExecSubject.operators,
      request: ExecOperatorsRequest,
      handler: async (req) => {
        requireView(req.principal);
        operators ??= pool.operators(req.principal).catch((err: unknown) => {
          operators = undefined;
          throw err;
        });
        return operators;
      },
    }),
  };
  const batchable = new Map<string, EndpointDef>(
    [
      endpoints.run,
      endpoints.stored_policy_base,
      endpoints.stored_policy_record,
      endpoints.stored_flow_base,
      endpoints.stored_flow_record,
    ].map((e) => [e.subject, e]),
  );
  endpoints.batch = batchEndpoint(batchable, deps.maxReplyBytes ?? 1024 * 1024);
  return {
    name: 'exec',
    version: deps.version,
    description: 'Evaluates, validates and explains policy rules in a worker pool',
    endpoints,
  };
}
