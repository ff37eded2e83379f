import { explain, listOperators, validate } from '@arbiter/rule-lang';
import { answerRule, resolveRun, type CompiledRule } from '@arbiter/run';
import type { ExplainResponse, OperatorsResponse, RunOptions, ValidateResponse } from '@arbiter/contracts';
import type { FrameItem } from '@arbiter/service-kit';
import type { ExecutionAnswer, ExecutionClient } from '../../src/clients/execution-client.js';
import { answerOf } from './stub-execution.js';

const decoder = new TextDecoder();

/**
 * The rule engine run in-process through the run layer (`@arbiter/run`, as the execution service's
 * workers run it), for route tests without the execution service (the NATS path is covered by
 * execution-nats.test.ts). Answers are written as the execution service writes them: raw JSON in the
 * contract's key order.
 */
export class InProcessExecution implements ExecutionClient {
  private readonly compiled = new Map<string, CompiledRule>();
  /** Every item evaluated, as it was handed over (bytes, or a text written from a parsed value). */
  readonly received: FrameItem[] = [];

  async run(_p: unknown, rule: string, items: readonly FrameItem[], options: RunOptions): Promise<ExecutionAnswer[]> {
    const run = resolveRun(options);
    return items.map((item) => {
      this.received.push(item);
      const data = JSON.parse(typeof item === 'string' ? item : decoder.decode(item)) as Record<string, unknown>;
      return answerOf(answerRule(rule, data, run, this.compiled));
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
