import { evaluate, explain, listOperators, validate } from '@arbiter/rule-lang';
import type { ExplainResponse, OperatorsResponse, RunResponse, ValidateResponse } from '@arbiter/contracts';
import type { EngineClient } from '../../src/engine-client.js';

/**
 * The rule engine run in-process through `@arbiter/rule-lang`, for route tests without the
 * execution service (the NATS path is covered by engine-nats.test.ts).
 */
export class InProcessEngine implements EngineClient {
  async run(_p: unknown, body: { rule: string; data: Record<string, unknown> }): Promise<RunResponse> {
    const r = evaluate(body.rule, body.data, { trace: true });
    return {
      result: r.result,
      trace: r.trace,
      outcomes: r.outcomes,
      ...(r.error !== undefined ? { error: r.error } : {}),
      ...(r.errorCode !== undefined ? { errorCode: r.errorCode as NonNullable<RunResponse['errorCode']> } : {}),
    };
  }

  async runMany(p: unknown, rule: string, items: readonly Record<string, unknown>[]): Promise<RunResponse[]> {
    return Promise.all(items.map((data) => this.run(p, { rule, data })));
  }

  async validate(_p: unknown, body: { rule: string }): Promise<ValidateResponse> {
    return validate(body.rule);
  }

  async explain(_p: unknown, body: { rule: string }): Promise<ExplainResponse> {
    return explain(body.rule);
  }

  async operators(): Promise<OperatorsResponse> {
    return listOperators();
  }
}
