import {
  ArbiterError,
  type ErrorCode,
  type ExplainResponse,
  type OperatorsResponse,
  type RunResponse,
  type ValidateResponse,
} from '@arbiter/contracts';
import type { EngineClient } from '../../src/engine-client.js';

/**
 * A stand-in engine for route tests (PostgreSQL and Redis stay real): answers fixed,
 * schema-valid results, records the calls, and can be told to fail with a bus error code.
 */
export class StubEngine implements EngineClient {
  readonly calls: Array<{ op: string; body?: unknown; requestId?: string }> = [];
  /** A catalogue code to fail with, or `crash` to throw a plain (unexpected) Error. */
  failWith: ErrorCode | 'crash' | undefined;

  async run(_p: unknown, body: { rule: string; data: Record<string, unknown> }, ctx?: { requestId?: string }): Promise<RunResponse> {
    this.record('run', body, ctx);
    if (body.rule.includes('@@')) {
      return { result: false, trace: [], error: 'Parse error: line 1, column 1: unexpected `@@`', errorCode: 'parse_error' };
    }
    return { result: true, trace: ['rule 1: true'], outcomes: { ok: true } };
  }

  async runMany(
    p: unknown,
    rule: string,
    items: readonly Record<string, unknown>[],
    ctx?: { requestId?: string },
  ): Promise<Array<RunResponse | ArbiterError>> {
    const answers: Array<RunResponse | ArbiterError> = [];
    for (const data of items) answers.push(await this.run(p, { rule, data }, ctx).catch((err: unknown) => err as ArbiterError));
    return answers;
  }

  async validate(_p: unknown, body: { rule: string }, ctx?: { requestId?: string }): Promise<ValidateResponse> {
    this.record('validate', body, ctx);
    return { valid: !body.rule.includes('@@'), error: body.rule.includes('@@') ? 'Parse error' : null };
  }

  async explain(_p: unknown, body: { rule: string }, ctx?: { requestId?: string }): Promise<ExplainResponse> {
    this.record('explain', body, ctx);
    return { rule_count: 0, rules: [], error: null };
  }

  async operators(_p: unknown, ctx?: { requestId?: string }): Promise<OperatorsResponse> {
    this.record('operators', undefined, ctx);
    return [{ operator: 'equals', forms: ['is equal to'] }];
  }

  private record(op: string, body: unknown, ctx: { requestId?: string } | undefined): void {
    this.calls.push({ op, body, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) });
    if (this.failWith === 'crash') throw new Error('engine exploded: secret internals');
    if (this.failWith !== undefined) throw new ArbiterError(this.failWith, `engine failed: ${this.failWith}`);
  }
}
