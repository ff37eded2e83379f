import {
  ExecSubject,
  ExplainResponse,
  OperatorsResponse,
  RunResponse,
  ValidateResponse,
  type ExecOperatorsRequest,
  type ExecRuleRequest,
  type ExecRunInput,
  type Principal,
  type RuleOnlyRequest,
  type RunRequest,
} from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';
import type { EngineCallContext, EngineClient } from './engine-client.js';

/**
 * The production {@link EngineClient}: request/reply to the execution service on
 * `<prefix>.exec.*`. `Bus.request` turns "no replica listening" into `dependency_unavailable`
 * (503) and a missed deadline into `timeout` (504).
 */
export class NatsEngineClient implements EngineClient {
  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
  ) {}

  /** Sends `exec.run`. The principal is not part of the message: ad hoc runs need no authorization downstream. */
  run(_principal: Principal, body: RunRequest, ctx?: EngineCallContext): Promise<RunResponse> {
    const payload: ExecRunInput = { rule: body.rule, data: body.data };
    return this.bus.request(ExecSubject.run, payload, RunResponse, this.options(ctx));
  }

  /** Sends `exec.validate`. */
  validate(_principal: Principal, body: RuleOnlyRequest, ctx?: EngineCallContext): Promise<ValidateResponse> {
    const payload: ExecRuleRequest = { rule: body.rule };
    return this.bus.request(ExecSubject.validate, payload, ValidateResponse, this.options(ctx));
  }

  /** Sends `exec.explain`. */
  explain(_principal: Principal, body: RuleOnlyRequest, ctx?: EngineCallContext): Promise<ExplainResponse> {
    const payload: ExecRuleRequest = { rule: body.rule };
    return this.bus.request(ExecSubject.explain, payload, ExplainResponse, this.options(ctx));
  }

  /** Sends `exec.operators`. */
  operators(_principal: Principal, ctx?: EngineCallContext): Promise<OperatorsResponse> {
    const payload: ExecOperatorsRequest = {};
    return this.bus.request(ExecSubject.operators, payload, OperatorsResponse, this.options(ctx));
  }

  private options(ctx: EngineCallContext | undefined) {
    return { timeoutMs: this.timeoutMs, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
  }
}
