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
import { engineAnswer } from './engine-retry.js';

/**
 * The production {@link EngineClient}: request/reply to the execution service on
 * `<prefix>.exec.*`. `Bus.request` turns "no replica listening" into `dependency_unavailable`
 * (503) and a missed deadline into `timeout` (504).
 */
export class NatsEngineClient implements EngineClient {
  constructor(
    private readonly bus: Pick<Bus, 'request'>,
    private readonly timeoutMs: number,
  ) {}

  /** Sends `exec.run` with the caller, whom the execution service re-checks. */
  run(principal: Principal, body: RunRequest, ctx?: EngineCallContext): Promise<RunResponse> {
    const payload: ExecRunInput = { principal, rule: body.rule, data: body.data };
    return engineAnswer(this.bus.request(ExecSubject.run, payload, RunResponse, this.options(ctx)));
  }

  /** Sends `exec.validate`. */
  validate(principal: Principal, body: RuleOnlyRequest, ctx?: EngineCallContext): Promise<ValidateResponse> {
    const payload: ExecRuleRequest = { principal, rule: body.rule };
    return engineAnswer(this.bus.request(ExecSubject.validate, payload, ValidateResponse, this.options(ctx)));
  }

  /** Sends `exec.explain`. */
  explain(principal: Principal, body: RuleOnlyRequest, ctx?: EngineCallContext): Promise<ExplainResponse> {
    const payload: ExecRuleRequest = { principal, rule: body.rule };
    return engineAnswer(this.bus.request(ExecSubject.explain, payload, ExplainResponse, this.options(ctx)));
  }

  /** Sends `exec.operators`. */
  operators(principal: Principal, ctx?: EngineCallContext): Promise<OperatorsResponse> {
    const payload: ExecOperatorsRequest = { principal };
    return engineAnswer(this.bus.request(ExecSubject.operators, payload, OperatorsResponse, this.options(ctx)));
  }

  private options(ctx: EngineCallContext | undefined) {
    return { timeoutMs: this.timeoutMs, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
  }
}
