import { evaluate, explain, listOperators, validate } from '@arbiter/rule-lang';
import type { ExplainResponse, OperatorsResponse, RunResponse, ValidateResponse } from '@arbiter/contracts';
import type { EngineAnswer, EngineCallContext, EngineClient } from '../../src/clients/engine-client.js';
import { answerOf } from './engines.js';

/**
 * The rule engine run in-process through `@arbiter/rule-lang`, for route tests without the
 * execution service (the NATS path is covered by engine-nats.test.ts). Answers are written as the
 * execution service writes them: raw JSON in the contract's key order.
 */
export class InProcessEngine implements EngineClient {
  async evaluate(_p: unknown, rule: string, items: readonly string[], ctx: EngineCallContext): Promise<EngineAnswer[]> {
    return items.map((item) => {
      const r = evaluate(rule, JSON.parse(item) as Record<string, unknown>, { trace: ctx.trace !== false });
      const body: RunResponse = {
        result: r.result,
        trace: r.trace,
        outcomes: r.outcomes,
        ...(r.error !== undefined ? { error: r.error } : {}),
        ...(r.errorCode !== undefined ? { errorCode: r.errorCode as NonNullable<RunResponse['errorCode']> } : {}),
      };
      return answerOf(body);
    });
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
