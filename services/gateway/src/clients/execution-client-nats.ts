import {
  ExecSubject,
  ExplainResponse,
  OperatorsResponse,
  ValidateResponse,
  type ExecOperatorsRequest,
  type ExecRuleRequest,
  type Principal,
  type RuleOnlyRequest,
  type RunOptions,
} from '@arbiter/contracts';
import type { Bus, EvalClient, FrameItem } from '@arbiter/service-kit';
import type { ExecutionAnswer, ExecutionClient } from './execution-client.js';
import { executionAnswer } from './execution-retry.js';

/**
 * The production {@link ExecutionClient}: evaluations go to the execution service as `exec.eval`
 * groups (service-kit `EvalClient`: coalesced per event-loop turn, answers back as raw JSON), the
 * rest as request/reply on `<prefix>.exec.*`. `Bus.request` turns "no replica listening" into
 * `dependency_unavailable` (503) and a missed deadline into `timeout` (504).
 */
export class NatsExecutionClient implements ExecutionClient {
  constructor(
    private readonly evals: Pick<EvalClient, 'many'>,
    private readonly bus: Pick<Bus, 'request'>,
    private readonly timeoutMs: number,
  ) {}

  /** One group of items for the caller, whom the execution service re-checks; a batch call's items go in messages of at most 256. */
  run(principal: Principal, rule: string, items: readonly FrameItem[], options: RunOptions): Promise<ExecutionAnswer[]> {
    return this.evals.many({ ...options, subject: ExecSubject.run, principal, rule, timeoutMs: this.timeoutMs }, items);
  }

  /** Sends `exec.validate`. */
  validate(principal: Principal, body: RuleOnlyRequest, ctx?: RunOptions): Promise<ValidateResponse> {
    const payload: ExecRuleRequest = { principal, rule: body.rule };
    return executionAnswer(this.bus.request(ExecSubject.validate, payload, ValidateResponse, this.options(ctx)));
  }

  /** Sends `exec.explain`. */
  explain(principal: Principal, body: RuleOnlyRequest, ctx?: RunOptions): Promise<ExplainResponse> {
    const payload: ExecRuleRequest = { principal, rule: body.rule };
    return executionAnswer(this.bus.request(ExecSubject.explain, payload, ExplainResponse, this.options(ctx)));
  }

  /** Sends `exec.operators`. */
  operators(principal: Principal, ctx?: RunOptions): Promise<OperatorsResponse> {
    const payload: ExecOperatorsRequest = { principal };
    return executionAnswer(this.bus.request(ExecSubject.operators, payload, OperatorsResponse, this.options(ctx)));
  }

  private options(ctx: RunOptions | undefined) {
    return { timeoutMs: this.timeoutMs, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
  }
}
