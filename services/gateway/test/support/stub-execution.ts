import {
  ArbiterError,
  type ErrorCode,
  type ExplainResponse,
  type OperatorsResponse,
  type RunOptions,
  type RunResponse,
  type ValidateResponse,
} from '@arbiter/contracts';
import type { FrameItem } from '@arbiter/service-kit';
import type { ExecutionAnswer, ExecutionClient } from '../../src/clients/execution-client.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A JSON answer as the execution service sends it: raw bytes the gateway forwards. */
export function answerOf(body: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(body));
}

/**
 * A stand-in engine for route tests (PostgreSQL and Redis stay real): answers fixed,
 * schema-valid results, records the calls, and can be told to fail with a bus error code.
 */
export class StubExecution implements ExecutionClient {
  readonly calls: Array<{ op: string; body?: unknown; requestId?: string; trace?: boolean }> = [];
  /** A catalogue code to fail with, or `crash` to throw a plain (unexpected) Error. */
  failWith: ErrorCode | 'crash' | undefined;

  async run(_p: unknown, rule: string, items: readonly FrameItem[], ctx: RunOptions): Promise<ExecutionAnswer[]> {
    return items.map((item) => {
      const data = JSON.parse(typeof item === 'string' ? item : decoder.decode(item)) as Record<string, unknown>;
      try {
        this.record('run', { rule, data }, ctx);
      } catch (err) {
        if (err instanceof ArbiterError) return err;
        throw err;
      }
      const trace = ctx.trace === false ? [] : ['rule 1: true'];
      if (rule.includes('@@')) {
        const error = 'Parse error: line 1, column 1: unexpected `@@`';
        return answerOf({
          result: false,
          trace: ctx.trace === false ? [] : [error],
          error,
          errorCode: 'parse_error',
        } satisfies RunResponse);
      }
      return answerOf({ result: true, trace, outcomes: { ok: true } } satisfies RunResponse);
    });
  }

  async validate(_p: unknown, body: { rule: string }, ctx?: RunOptions): Promise<ValidateResponse> {
    this.record('validate', body, ctx);
    return { valid: !body.rule.includes('@@'), error: body.rule.includes('@@') ? 'Parse error' : null };
  }

  async explain(_p: unknown, body: { rule: string }, ctx?: RunOptions): Promise<ExplainResponse> {
    this.record('explain', body, ctx);
    return { rule_count: 0, rules: [], error: null };
  }

  async operators(_p: unknown, ctx?: RunOptions): Promise<OperatorsResponse> {
    this.record('operators', undefined, ctx);
    return [{ operator: 'equals', forms: ['is equal to'] }];
  }

  private record(op: string, body: unknown, ctx: RunOptions | undefined): void {
    this.calls.push({
      op,
      body,
      ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}),
      ...(ctx?.trace !== undefined ? { trace: ctx.trace } : {}),
    });
    if (this.failWith === 'crash') throw new Error('engine exploded: secret internals');
    if (this.failWith !== undefined) throw new ArbiterError(this.failWith, `engine failed: ${this.failWith}`);
  }
}
