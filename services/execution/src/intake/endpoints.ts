import {
  ExecOperatorsRequest,
  ExecRuleRequest,
  ExecSubject,
  FlowTestRequest,
  isArbiterError,
  StoredRunSubject,
  type OperatorsResponse,
} from '@arbiter/contracts';
import { defineEndpoint, type EndpointDef, type RawEndpointDef, type ServiceDef } from '@arbiter/service-kit';
import { requireView } from './access.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import { evalEndpoint, type EvalDeps } from './eval-endpoint.js';
import { checkRuleSize, type Limits } from './limits.js';
import type { ExecMetrics } from '../metrics.js';
import type { RuleIndex } from '../answers/rule-index.js';
import type { StoredRuns } from '../answers/stored-runs.js';

/** What the `exec` endpoints need. */
export interface ExecDeps {
  pool: WorkerPool;
  limits: Limits;
  metrics: ExecMetrics;
  index: RuleIndex;
  /** Runs of stored policies and flows (`exec.eval` groups, `exec.flow.test`). */
  stored: StoredRuns;
  version: string;
  /** The bus's max payload: an `exec.eval` reply stays under it. */
  maxReplyBytes?: number;
}

/**
 * The `exec` service in one queue group: `exec.eval` (evaluations in framed messages: the one road
 * of every run, an unsaved rule's or a stored record's, from the gateway, the mcp service and the
 * tests alike), `exec.flow.test`, `exec.validate`, `exec.explain` and `exec.operators`.
 */
export function execService(deps: ExecDeps): ServiceDef {
  const { pool, limits, metrics, stored } = deps;
  const evalDeps: EvalDeps = { pool, limits, metrics, index: deps.index, stored };
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
  const endpoints: Record<string, EndpointDef | RawEndpointDef> = {
    eval: evalEndpoint(evalDeps, deps.maxReplyBytes ?? 1024 * 1024),
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
  return {
    name: 'exec',
    version: deps.version,
    description: 'Evaluates, validates and explains policy rules in a worker pool',
    endpoints,
  };
}
