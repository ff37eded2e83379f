import {
  FlowRunResponse,
  StoredFlowRunResponse,
  StoredPolicyRunResponse,
  StoredRunSubject,
  type FlowTestBody,
  type FlowTestInput,
  type Principal,
  type RunData,
  type StoredRunInput,
} from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';
import type { EngineCallContext } from './engine-client.js';
import { engineAnswer } from './engine-retry.js';

/** What a stored run names: a base (its current runnable record) or an exact record. */
export type RunBy = 'base' | 'record';

/**
 * Runs of stored policies and flows and of ad hoc flow definitions (spec §4.3). Failures are
 * thrown as `ArbiterError`s: `not_found` for unknown, deleted or other-org ids,
 * `dependency_unavailable` when no execution replica answers, `timeout` on time-out. Engine
 * outcomes (parse error, missing data, schema mismatch, a flow node's deleted policy) are results.
 */
export interface RunnerClient {
  /** `POST /run/policy/{baseId}` (`by: 'base'`) or `POST /run/policy_version/{policyId}` (`by: 'record'`). */
  runPolicy(principal: Principal, by: RunBy, id: string, data: RunData, ctx?: EngineCallContext): Promise<StoredPolicyRunResponse>;
  /** `POST /run/flow/{baseId}` or `POST /run/flow_version/{flowId}`. */
  runFlow(principal: Principal, by: RunBy, id: string, data: RunData, ctx?: EngineCallContext): Promise<StoredFlowRunResponse>;
  /** `POST /flow/test`. */
  testFlow(principal: Principal, body: FlowTestBody, ctx?: EngineCallContext): Promise<FlowRunResponse>;
}

/** The production {@link RunnerClient}: request/reply to the execution service on `<prefix>.exec.stored.*` and `exec.flow.test`. */
export class NatsRunnerClient implements RunnerClient {
  constructor(
    private readonly bus: Pick<Bus, 'request'>,
    private readonly timeoutMs: number,
  ) {}

  runPolicy(principal: Principal, by: RunBy, id: string, data: RunData, ctx?: EngineCallContext): Promise<StoredPolicyRunResponse> {
    const payload: StoredRunInput = { principal, id, data };
    const subject = by === 'base' ? StoredRunSubject.policyByBase : StoredRunSubject.policyByRecord;
    return engineAnswer(this.bus.request(subject, payload, StoredPolicyRunResponse, this.options(ctx)));
  }

  runFlow(principal: Principal, by: RunBy, id: string, data: RunData, ctx?: EngineCallContext): Promise<StoredFlowRunResponse> {
    const payload: StoredRunInput = { principal, id, data };
    const subject = by === 'base' ? StoredRunSubject.flowByBase : StoredRunSubject.flowByRecord;
    return engineAnswer(this.bus.request(subject, payload, StoredFlowRunResponse, this.options(ctx)));
  }

  testFlow(principal: Principal, body: FlowTestBody, ctx?: EngineCallContext): Promise<FlowRunResponse> {
    const payload: FlowTestInput = { principal, definition: body.definition, data: body.data };
    return engineAnswer(this.bus.request(StoredRunSubject.flowTest, payload, FlowRunResponse, this.options(ctx)));
  }

  private options(ctx: EngineCallContext | undefined) {
    return { timeoutMs: this.timeoutMs, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
  }
}
