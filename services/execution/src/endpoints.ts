import {
  ArbiterError,
  ExecOperatorsRequest,
  ExecRuleRequest,
  ExecRunRequest,
  ExecSubject,
  FlowTestRequest,
  isArbiterError,
  StoredRunRequest,
  StoredRunSubject,
  type EvalSubject,
  type OperatorsResponse,
  type Principal,
} from '@arbiter/contracts';
import { defineEndpoint, type EndpointDef, type RawEndpointDef, type ServiceDef } from '@arbiter/service-kit';
import { requireView } from './access.js';
import type { EnginePool } from './engine-pool.js';
import { evalEndpoint, runGroup, type EvalDeps } from './eval-endpoint.js';
import { checkRuleSize, type Limits } from './limits.js';
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
  /** The bus's max payload: an `exec.eval` reply stays under it. */
  maxReplyBytes?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The `exec` service in one queue group: `exec.eval` (evaluations in framed messages: the one road
 * the gateway and the mcp service take), the single-request forms of the same evaluations
 * (`exec.run`, the stored runs `exec.stored.{policy,flow}.{base,record}`; JSON in, JSON out, run
 * the same way), `exec.flow.test`, `exec.validate`, `exec.explain` and `exec.operators`.
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
  /** A single evaluation request, run as a group of one: its answer decoded for the JSON envelope. */
  const single = async (group: {
    subject: EvalSubject;
    principal: Principal;
    data: unknown;
    trace: boolean;
    rule?: string;
    id?: string;
    now?: string;
  }) => {
    const { data, ...rest } = group;
    const [answer] = await runGroup(evalDeps, { ...rest, items: [encoder.encode(JSON.stringify(data))] });
    if (answer instanceof ArbiterError) throw answer;
    return JSON.parse(decoder.decode(answer)) as unknown;
  };

  const endpoints: Record<string, EndpointDef | RawEndpointDef> = {
    eval: evalEndpoint(evalDeps, deps.maxReplyBytes ?? 1024 * 1024),
    run: defineEndpoint({
      subject: ExecSubject.run,
      request: ExecRunRequest,
      handler: (req) => single({ subject: ExecSubject.run, ...req }),
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
      handler: (req) => single({ subject: StoredRunSubject.policyByBase, ...req }),
    }),
    stored_policy_record: defineEndpoint({
      subject: StoredRunSubject.policyByRecord,
      request: StoredRunRequest,
      handler: (req) => single({ subject: StoredRunSubject.policyByRecord, ...req }),
    }),
    stored_flow_base: defineEndpoint({
      subject: StoredRunSubject.flowByBase,
      request: StoredRunRequest,
      handler: (req) => single({ subject: StoredRunSubject.flowByBase, ...req }),
    }),
    stored_flow_record: defineEndpoint({
      subject: StoredRunSubject.flowByRecord,
      request: StoredRunRequest,
      handler: (req) => single({ subject: StoredRunSubject.flowByRecord, ...req }),
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
