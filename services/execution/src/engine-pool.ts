import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ArbiterError, type ExecRunRequest } from '@arbiter/contracts';
import { Piscina } from 'piscina';
import { Deadlines } from './deadlines.js';
import type { EngineTask, EngineTaskResult, RunOutcome, StoredRunTask, WorkerConfig } from './tasks.js';

/** Options of {@link EnginePool}. */
export interface EnginePoolOptions {
  /** Worker threads (fixed: they start at once and stay, keeping their caches warm). */
  size: number;
  /** Deadline of one task, from submission; past it a running worker is terminated and replaced. */
  taskTimeoutMs: number;
  /** Compiled policies each worker keeps. */
  cacheSize: number;
  /** The worker module; {@link defaultWorkerFile} unless a test needs another. */
  workerFile?: URL;
}

/** The compiled worker next to this module; when running from sources (tests), the one in `dist/`. */
export function defaultWorkerFile(): URL {
  const sibling = new URL('./worker.js', import.meta.url);
  return existsSync(fileURLToPath(sibling)) ? sibling : new URL('../dist/worker.js', import.meta.url);
}

/**
 * A piscina pool of rule-engine workers. Every method sends one task and applies the deadline:
 * `timeout` when it passes, `dependency_unavailable` once the pool is closed, `internal` when a
 * worker fails.
 */
export class EnginePool {
  private readonly pool: Piscina<EngineTask, unknown>;
  private readonly deadlines: Deadlines;
  private closed = false;

  constructor(private readonly opts: EnginePoolOptions) {
    const workerData: WorkerConfig = { cacheSize: opts.cacheSize };
    this.pool = new Piscina({
      filename: (opts.workerFile ?? defaultWorkerFile()).href,
      minThreads: opts.size,
      maxThreads: opts.size,
      workerData,
      // Per-task run/wait histograms: nothing reads them (the service keeps its own metrics).
      recordTiming: false,
    });
    this.deadlines = new Deadlines(opts.taskTimeoutMs);
  }

  /** Evaluates a rule; the outcome says which worker ran it and whether it compiled or hit its cache. */
  run(req: ExecRunRequest): Promise<RunOutcome> {
    return this.task({ op: 'run', rule: req.rule, data: req.data, trace: req.trace, now: req.now });
  }

  /** Runs a stored policy, compiled or found by its hash, after checking the data against its schema. */
  runStored(task: Omit<StoredRunTask, 'op'>): Promise<RunOutcome> {
    return this.task({ op: 'runStored', ...task });
  }

  /** Checks a rule's syntax. */
  validate(rule: string): Promise<EngineTaskResult['validate']> {
    return this.task({ op: 'validate', rule });
  }

  /** Describes a rule's structure. */
  explain(rule: string): Promise<EngineTaskResult['explain']> {
    return this.task({ op: 'explain', rule });
  }

  /** The operator catalogue. */
  operators(): Promise<EngineTaskResult['operators']> {
    return this.task({ op: 'operators' });
  }

  /** Live worker threads. */
  get threads(): number {
    return this.pool.threads.length;
  }

  /** Refuses new tasks, lets queued and running ones finish, then ends the threads. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.close();
    this.deadlines.close();
  }

  private async task<K extends EngineTask['op']>(task: EngineTask & { op: K }): Promise<EngineTaskResult[K]> {
    if (this.closed) throw new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down');
    const signal = this.deadlines.start();
    try {
      return (await this.pool.run(task, { signal })) as EngineTaskResult[K];
    } catch (err) {
      if (signal.aborted) {
        throw new ArbiterError('timeout', `evaluation took longer than ${this.opts.taskTimeoutMs} ms`, undefined, { cause: err });
      }
      if (this.closed) throw new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down', undefined, { cause: err });
      throw new ArbiterError('internal', `evaluation failed: ${task.op}`, undefined, { cause: err });
    } finally {
      signal.settle();
    }
  }
}
