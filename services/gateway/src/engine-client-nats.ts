import {
  ArbiterError,
  EXEC_BATCH_MAX_ITEMS,
  ExecBatchReply,
  ExecSubject,
  isArbiterError,
  isRuleTooLarge,
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
    /** Items per `exec.run.many` message (at most the contract's EXEC_BATCH_MAX_ITEMS, 256). */
    private readonly chunkItems = EXEC_BATCH_MAX_ITEMS,
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
   * one `exec.run.many` message each (the rule crosses the bus once per chunk), all chunks at
   * once: the execution service queues each message as one job (its items count against the
   * caller's item limit, not one by one against EXEC_CALLER_MAX), so a 1,000-item call is four
   * messages in flight. Answers too large for their message's reply are asked for again.
   */
  async runMany(
    principal: Principal,
    rule: string,
    items: readonly RunRequest['data'][],
    ctx?: EngineCallContext,
  ): Promise<Array<RunResponse | ArbiterError>> {
    const chunks = [...chunksOf(items, Math.min(this.chunkItems, EXEC_BATCH_MAX_ITEMS), this.chunkBytes)];
    const answers = await Promise.all(chunks.map((chunk) => this.runChunk(principal, rule, chunk, ctx)));
    return answers.flat();
  }

  /**
   * One chunk as `exec.run.many` messages, one after another: items whose answers did not fit in a
   * reply (`result_too_large`) are sent again, in messages of as many items as fitted the last one,
   * until each is answered; an item first in its message had the whole reply to itself, so its
   * `result_too_large` stands.
   */
  private async runChunk(
    principal: Principal,
    rule: string,
    chunk: readonly RunRequest['data'][],
    ctx: EngineCallContext | undefined,
  ): Promise<Array<RunResponse | ArbiterError>> {
    const results = new Array<RunResponse | ArbiterError>(chunk.length);
    let waiting = chunk.map((_, i) => i);
    let size = waiting.length;
    while (waiting.length > 0) {
      const pending = waiting.slice(0, size);
      const payload: ExecRunManyInput = { principal, rule, items: pending.map((i) => chunk[i]) };
      let reply: ExecBatchReply;
      try {
        reply = await engineAnswer(this.bus.request(ExecSubject.runMany, payload, ExecBatchReply, this.options(ctx)));
      } catch (err) {
        // A rule too large fails the whole call (one 413), not each item.
        if (isRuleTooLarge(err)) throw err;
        // The whole message failed (e.g. time-out, no replica): each item answers that.
        for (const i of waiting) results[i] = toError(err);
        break;
      }
      if (reply.results.length !== pending.length) {
        for (const i of waiting) results[i] = new ArbiterError('internal', `malformed reply from \`${ExecSubject.runMany}\``);
        break;
      }
      const again: number[] = [];
      for (const [k, result] of reply.results.entries()) {
        const i = pending[k];
        if (result.ok) {
          const parsed = RunResponse.safeParse(result.data);
          results[i] = parsed.success ? parsed.data : new ArbiterError('internal', `malformed reply from \`${ExecSubject.runMany}\``);
        } else if (result.error.code === 'result_too_large' && k > 0) {
          again.push(i);
        } else {
          results[i] = engineError(ArbiterError.fromWire(result.error));
        }
      }
      size = Math.max(1, Math.min(size, pending.length - again.length));
      waiting = [...again, ...waiting.slice(pending.length)];
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
