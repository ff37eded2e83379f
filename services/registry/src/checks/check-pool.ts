import {
  ArbiterError,
  type ErrorReason,
  type FlowDefinition,
  type FlowChecksReply,
  type PolicyChecksReply,
  type TestRunReport,
} from '@arbiter/contracts';
import { builtWorkerFile } from '@arbiter/service-kit';
import { Piscina } from 'piscina';
import type { FlowContent, FoundTarget, NodeTarget } from '../domain/flow-checks.js';
import type { PolicyContent } from '../domain/policy-checks.js';
import type { CheckResult, CheckTask, TestRunTask } from './tasks.js';

const WARM_UP_RULE = 'A **thing** is ok if the __size__ of the **thing** is 1.';

/** Options of {@link PublishChecks}. */
export interface PublishChecksOptions {
  /** Worker threads. */
  threads: number;
  /** Time allowed per saved test, and once more for compiling the rules (the evaluation time-out). */
  timeoutMs: number;
  /** Steps each saved test may take (`EXEC_STEP_BUDGET`, as in a run; a flow test's nodes share it). */
  stepBudget: number;
  /** The worker module; the compiled one next to this module (or in `dist/` when running from sources) unless a test needs another. */
  workerFile?: URL;
}

/**
 * Runs the rule-compiling and test-running part of publish checks in worker threads, with a
 * deadline: a saved test whose rule and data take too long (a quantifier nested over a large
 * array can take seconds) costs the publish a `test_failed` reason, never the registry's event loop.
 * Past the deadline the worker is terminated and replaced, and the replacement loads the rule engine
 * before the next check's deadline starts: a cold worker must not fail the next publish.
 */
export class PublishChecks {
  private readonly pool: Piscina<CheckTask, CheckResult>;
  /** Set while replacement workers load the engine after a deadline terminated one. */
  private rewarming: Promise<void> | undefined;

  constructor(private readonly opts: PublishChecksOptions) {
    this.pool = new Piscina({
      filename: (opts.workerFile ?? builtWorkerFile(import.meta.url, './worker.js')).href,
      minThreads: opts.threads,
      maxThreads: opts.threads,
      recordTiming: false,
    });
  }

  /** Starts every worker (loading the rule engine) with a generous deadline of its own; call before serving. */
  async warmUp(bootTimeoutMs = 30_000): Promise<void> {
    const probe: CheckTask = { kind: 'policy', content: { rule: WARM_UP_RULE, schema: null, tests: [] }, stepBudget: this.opts.stepBudget };
    await Promise.all(
      Array.from({ length: this.opts.threads }, () => this.pool.run(probe, { signal: AbortSignal.timeout(bootTimeoutMs) })),
    );
  }

  /** Why ajv cannot use `schema` (reason `invalid_schema`, path `schema`); empty when it compiles. */
  schema(schema: Record<string, unknown>): Promise<ErrorReason[]> {
    return this.run({ kind: 'schema', schema }, 0, (ms) => ({
      code: 'invalid_schema',
      message: `the schema did not compile within ${ms} ms: simplify it`,
      path: 'schema',
    }));
  }

  /**
   * Every structural problem of each definition (`validateDefinition`, its codes and order), in a
   * worker: it compiles the decision tables, long for a big one, while this thread keeps serving.
   * No deadline: the work is bounded by a definition's size limits, as it was on the main thread.
   */
  async definitions(definitions: FlowDefinition[]): Promise<ErrorReason[][]> {
    if (definitions.length === 0) return [];
    if (this.rewarming) await this.rewarming;
    return (await this.pool.run({ kind: 'definitions', definitions })) as ErrorReason[][];
  }

  /** The reasons `content` cannot be published as a policy (see `policyPublishProblems`). */
  policy(content: PolicyContent): Promise<ErrorReason[]> {
    return this.run({ kind: 'policy', content, stepBudget: this.opts.stepBudget }, content.tests.length, testsTooSlow(this.opts.timeoutMs));
  }

  /**
   * The static checks of a policy text (warnings), in a worker with the rule's deadline: a big
   * policy takes long to parse. Past the deadline the answer has no findings and `checksComplete: false`.
   */
  staticChecks(rule: string): Promise<PolicyChecksReply> {
    return this.findings<PolicyChecksReply>({ kind: 'staticChecks', rule });
  }

  /**
   * The static checks of a flow definition's decision tables (errors and warnings), in a worker with
   * the same deadline: a big table takes long. Past it, no findings and `checksComplete: false`.
   */
  tableChecks(definition: FlowDefinition): Promise<FlowChecksReply> {
    return this.findings<FlowChecksReply>({ kind: 'tableChecks', definition });
  }

  private async findings<T extends { checksComplete: boolean }>(task: CheckTask): Promise<T> {
    if (this.rewarming) await this.rewarming;
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    try {
      return (await this.pool.run(task, { signal })) as unknown as T;
    } catch (err) {
      if (!signal.aborted) throw err;
      this.rewarming ??= this.warmUp()
        .catch(() => undefined)
        .finally(() => (this.rewarming = undefined));
      return { checks: [], checksComplete: false } as unknown as T;
    }
  }

  /** The saved tests of a flow whose nodes resolved to `targets` that do not pass. */
  flowTests(content: FlowContent, targets: Map<string, FoundTarget>): Promise<ErrorReason[]> {
    return this.run(
      { kind: 'flowTests', content, targets: [...targets], stepBudget: this.opts.stepBudget },
      content.tests.length,
      testsTooSlow(this.opts.timeoutMs),
    );
  }

  /** Runs a policy's saved tests with coverage; 504 `timeout` past the deadline. */
  policyTestRun(content: PolicyContent): Promise<TestRunReport> {
    return this.testRun({ kind: 'policyTestRun', content, stepBudget: this.opts.stepBudget }, content.tests.length);
  }

  /** Runs a flow's saved tests with coverage against the records its nodes resolved to; 504 `timeout` past the deadline. */
  flowTestRun(content: FlowContent, targets: Map<string, NodeTarget>): Promise<TestRunReport> {
    return this.testRun({ kind: 'flowTestRun', content, targets: [...targets], stepBudget: this.opts.stepBudget }, content.tests.length);
  }

  /** Lets running checks finish, then ends the threads. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private async run(task: CheckTask, tests: number, late: (deadlineMs: number) => ErrorReason): Promise<ErrorReason[]> {
    const out = await this.withDeadline(task, tests);
    return out.late ? [late(out.deadlineMs)] : (out.result as ErrorReason[]);
  }

  private async testRun(task: TestRunTask, tests: number): Promise<TestRunReport> {
    const out = await this.withDeadline(task, tests);
    if (out.late) {
      throw new ArbiterError(
        'timeout',
        `the saved tests did not finish within ${out.deadlineMs} ms (${this.opts.timeoutMs} ms per saved test, and as much for the rule): a saved test runs too long`,
      );
    }
    return out.result as TestRunReport;
  }

  /** Runs `task` within the time allowed for `tests` saved tests and the rule; past it the worker is replaced. */
  private async withDeadline(
    task: CheckTask,
    tests: number,
  ): Promise<{ late: false; result: CheckResult } | { late: true; deadlineMs: number }> {
    if (this.rewarming) await this.rewarming;
    const deadlineMs = this.opts.timeoutMs * (tests + 1);
    const signal = AbortSignal.timeout(deadlineMs);
    try {
      return { late: false, result: await this.pool.run(task, { signal }) };
    } catch (err) {
      if (!signal.aborted) throw err;
      this.rewarming ??= this.warmUp()
        .catch(() => undefined)
        .finally(() => (this.rewarming = undefined));
      return { late: true, deadlineMs };
    }
  }
}

/** The reason of publish checks past their deadline. */
function testsTooSlow(timeoutMs: number): (deadlineMs: number) => ErrorReason {
  return (deadlineMs) => ({
    code: 'test_failed',
    message: `the checks did not finish within ${deadlineMs} ms (${timeoutMs} ms per saved test, and as much for the rule): a saved test runs too long`,
    path: 'tests',
  });
}
