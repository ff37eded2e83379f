import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ErrorReason } from '@arbiter/contracts';
import { Piscina } from 'piscina';
import type { FlowContent, FoundTarget } from '../domain/flow-checks.js';
import type { PolicyContent } from '../domain/policy-checks.js';
import type { CheckResult, CheckTask } from './tasks.js';

/** Options of {@link PublishChecks}. */
export interface PublishChecksOptions {
  /** Worker threads. */
  threads: number;
  /** Time allowed per saved test, and once more for compiling the rules (the evaluation time-out). */
  timeoutMs: number;
  /** The worker module; the compiled one next to this module (or in `dist/` when running from sources) unless a test needs another. */
  workerFile?: URL;
}

function defaultWorkerFile(): URL {
  const sibling = new URL('./worker.js', import.meta.url);
  return existsSync(fileURLToPath(sibling)) ? sibling : new URL('../../dist/checks/worker.js', import.meta.url);
}

/**
 * Runs the rule-compiling and test-running part of publish checks in worker threads, with a
 * deadline: a saved test whose rule and data take too long (a quantifier nested over a large
 * array can take seconds) costs the publish a `test_failed` reason, never the registry's event loop.
 * Past the deadline the worker is terminated and replaced.
 */
export class PublishChecks {
  private readonly pool: Piscina<CheckTask, CheckResult>;

  constructor(private readonly opts: PublishChecksOptions) {
    this.pool = new Piscina({
      filename: (opts.workerFile ?? defaultWorkerFile()).href,
      minThreads: opts.threads,
      maxThreads: opts.threads,
      recordTiming: false,
    });
  }

  /** The reasons `content` cannot be published as a policy (see `policyPublishProblems`). */
  policy(content: PolicyContent): Promise<ErrorReason[]> {
    return this.run({ kind: 'policy', content }, content.tests.length);
  }

  /** The saved tests of a flow whose nodes resolved to `targets` that do not pass. */
  flowTests(content: FlowContent, targets: Map<string, FoundTarget>): Promise<ErrorReason[]> {
    return this.run({ kind: 'flowTests', content, targets: [...targets] }, content.tests.length);
  }

  /** Lets running checks finish, then ends the threads. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private async run(task: CheckTask, tests: number): Promise<ErrorReason[]> {
    const deadlineMs = this.opts.timeoutMs * (tests + 1);
    const signal = AbortSignal.timeout(deadlineMs);
    try {
      return await this.pool.run(task, { signal });
    } catch (err) {
      if (!signal.aborted) throw err;
      return [
        {
          code: 'test_failed',
          message: `the checks did not finish within ${deadlineMs} ms (${this.opts.timeoutMs} ms per saved test, and as much for the rule): a saved test runs too long`,
          path: 'tests',
        },
      ];
    }
  }
}
