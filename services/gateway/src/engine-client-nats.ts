import {
  ArbiterError,
  ExecBatchReply,
  ExecSubject,
  isArbiterError,
  type ExecRunManyInput,
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
import { engineAnswer, engineError } from './engine-retry.js';

/**
 * The production {@link EngineClient}: request/reply to the execution service on
 * `<prefix>.exec.*`. `Bus.request` turns "no replica listening" into `dependency_unavailable`
 * (503) and a missed deadline into `timeout` (504).
 */
export class NatsEngineClient implements EngineClient {
  constructor(
    private readonly bus: Pick<Bus, 'request'>,
    private readonly timeoutMs: number,
    /** Items per `exec.run.many` message (and so in flight per batch call). */
    private readonly chunkItems = 32,
    /** Bytes of data per `exec.run.many` message, under NATS's max payload (1 MiB by default) with the rule. */
    private readonly chunkBytes = 512 * 1024,
  ) {}

  /** Sends `exec.run` with the caller, whom the execution service re-checks. */
  run(principal: Principal, body: RunRequest, ctx?: EngineCallContext): Promise<RunResponse> {
    const payload: ExecRunInput = { principal, rule: body.rule, data: body.data };
    return engineAnswer(this.bus.request(ExecSubject.run, payload, RunResponse, this.options(ctx)));
  }

  /**
   * Sends the items in chunks of at most `chunkItems` items and about `chunkBytes` bytes of data,
   * one `exec.run.many` message each (the rule crosses the bus once per chunk), one chunk at a
   * time so a call has at most `chunkItems` evaluations in the execution service's queue. An
   * answer too large for its chunk's reply is asked for again alone.
   */
  async runMany(
    principal: Principal,
    rule: string,
    items: readonly RunRequest['data'][],
    ctx?: EngineCallContext,
  ): Promise<Array<RunResponse | ArbiterError>> {
    const results: Array<RunResponse | ArbiterError> = [];
    for (const chunk of chunksOf(items, this.chunkItems, this.chunkBytes)) {
      const payload: ExecRunManyInput = { principal, rule, items: chunk };
      let reply: ExecBatchReply;
      try {
        reply = await engineAnswer(this.bus.request(ExecSubject.runMany, payload, ExecBatchReply, this.options(ctx)));
      } catch (err) {
        // The whole chunk failed (e.g. time-out, no replica, a rule too large): each item answers that.
        const error = toError(err);
        for (let i = 0; i < chunk.length; i++) results.push(error);
        continue;
      }
      for (const [i, result] of reply.results.entries()) {
        if (result.ok) {
          const parsed = RunResponse.safeParse(result.data);
          results.push(parsed.success ? parsed.data : new ArbiterError('internal', `malformed reply from \`${ExecSubject.runMany}\``));
        } else if (result.error.code === 'result_too_large') {
          results.push(await this.run(principal, { rule, data: chunk[i] }, ctx).catch((err: unknown) => toError(err)));
        } else {
          results.push(engineError(ArbiterError.fromWire(result.error)));
        }
      }
    }
    return results;
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

function toError(err: unknown): ArbiterError {
  return isArbiterError(err) ? err : new ArbiterError('internal', 'internal error', undefined, { cause: err });
}

/** Consecutive runs of `items` of at most `maxItems` items and about `maxBytes` bytes of JSON (an item larger goes alone). */
function* chunksOf<T>(items: readonly T[], maxItems: number, maxBytes: number): Generator<T[]> {
  let chunk: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = JSON.stringify(item)?.length ?? 0;
    if (chunk.length > 0 && (chunk.length >= maxItems || bytes + size > maxBytes)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(item);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}
