import { ArbiterError, type ExecRunRequest, type Principal } from '@arbiter/contracts';
import { builtWorkerFile } from '@arbiter/service-kit';
import { Piscina } from 'piscina';
import { Deadlines } from './deadlines.js';
import { FairQueue, type FairQueueStats, type JobOutcome } from './fair-queue.js';
import type {
  BatchProgress,
  BatchTask,
  EngineTask,
  EngineTaskResult,
  ItemFailure,
  RunManyItem,
  RunManyResult,
  RunManyTask,
  RunOutcome,
  StepBudgetState,
  StoredRunTask,
  WorkerConfig,
} from './tasks.js';

/** Options of {@link EnginePool}. */
export interface EnginePoolOptions {
  /** Worker threads (fixed: they start at once and stay, keeping their caches warm). */
  size: number;
  /** Deadline of one task, from when a worker starts it; past it the worker is terminated and replaced. */
  taskTimeoutMs: number;
  /** Compiled policies each worker keeps. */
  cacheSize: number;
  /** Steps a run without a trace may take (LANGUAGE.md §8.1); default 1,000,000. */
  stepBudget?: number;
  /** Steps a run with a trace may take; default 10,000. */
  traceStepBudget?: number;
  /** Tasks one caller may have queued or running (past it `rate_limited`); default 64. */
  perCallerMax?: number;
  /** Tasks waiting in all (past it `dependency_unavailable`); default 1000. */
  queueMax?: number;
  /** Longest wait for a thread (then `dependency_unavailable`); default 800 ms. */
  queueWaitMs?: number;
  /**
   * Evaluations (`run`, `runStored`) handed to one worker as one piscina task when several wait
   * for a free thread (1 turns coalescing off); default 32.
   */
  batchMax?: number;
  /** Items of `runMany` calls one caller may have queued or running (past it `rate_limited`); default 4096. */
  perCallerItemsMax?: number;
  /** Items of `runMany` calls queued or running in all (past it `dependency_unavailable`); default 16384. */
  queueItemsMax?: number;
  /** The worker module; the built `worker.js` beside this module unless a test needs another. */
  workerFile?: URL;
}

/** Defaults of the limits (the service's config has the same). */
export const POOL_DEFAULTS = {
  stepBudget: 1_000_000,
  traceStepBudget: 10_000,
  perCallerMax: 64,
  queueMax: 1000,
  queueWaitMs: 800,
  batchMax: 32,
  perCallerItemsMax: 4096,
  queueItemsMax: 16_384,
} as const;

/** Items of a `runMany` call per worker task: the first chunk, and the most; later ones aim at `RUN_MANY_TARGET_MS` of work. */
const RUN_MANY_FIRST_ITEMS = 16;
const RUN_MANY_MAX_ITEMS = 256;
const RUN_MANY_TARGET_MS = 20;

/** What {@link EnginePool.runMany} answers: each item's outcome in order, the rule's hash, and whether a worker compiled it. */
export interface RunManyOutcome {
  hash: string;
  cache: 'compile' | 'hit';
  results: RunManyItem[];
}

/** The caller a task is queued for: its API key, else its user; tasks without a principal share one queue. */
export function callerKey(principal: Principal | undefined): string {
  if (principal === undefined) return 'anonymous';
  return principal.apiKeyId !== undefined ? `key:${principal.apiKeyId}` : `user:${principal.orgId}:${principal.userId}`;
}

/**
 * A piscina pool of rule-engine workers behind a {@link FairQueue}: tasks wait in the service, per
 * caller, and piscina is handed at most `size` at a time, so the deadline (`timeout`, from when a
 * worker starts the task) never counts time spent behind other callers' work. Every run carries a
 * step budget, so a runaway rule stops itself with `budget_exceeded`; the deadline is the last
 * resort. `dependency_unavailable` once the pool is closed, `internal` when a worker fails.
 */
export class EnginePool {
  private readonly pool: Piscina<EngineTask | BatchTask | RunManyTask, unknown>;
  private readonly batchMax: number;
  private readonly deadlines: Deadlines;
  private readonly queue: FairQueue;
  private readonly stepBudget: number;
  private readonly traceStepBudget: number;
  private closed = false;
  /** Where a running batch's early answers go, by batch id. */
  private readonly progress = new Map<number, (progress: BatchProgress) => void>();
  private nextBatch = 0;
  /** Batch tasks handed to workers, and the evaluations they carried. */
  private readonly batches = { tasks: 0, items: 0 };
  /** Threads ready to take a task. */
  private ready = 0;

  constructor(private readonly opts: EnginePoolOptions) {
    const workerData: WorkerConfig = { cacheSize: opts.cacheSize };
    this.pool = new Piscina({
      filename: (opts.workerFile ?? builtWorkerFile(import.meta.url, './worker.js')).href,
      minThreads: opts.size,
      maxThreads: opts.size,
      workerData,
      // Per-task run/wait histograms: nothing reads them (the service keeps its own metrics).
      recordTiming: false,
    });
    this.deadlines = new Deadlines(opts.taskTimeoutMs);
    // Tasks go to threads that are ready: none until piscina reports them, and a thread terminated at
    // the deadline is not handed work again until its replacement has loaded the engine, so its boot
    // time never counts against another task's deadline.
    this.batchMax = opts.batchMax ?? POOL_DEFAULTS.batchMax;
    this.queue = new FairQueue({
      slots: 0,
      perKeyMax: opts.perCallerMax ?? POOL_DEFAULTS.perCallerMax,
      maxQueued: opts.queueMax ?? POOL_DEFAULTS.queueMax,
      maxWaitMs: opts.queueWaitMs ?? POOL_DEFAULTS.queueWaitMs,
      perKeyItemsMax: opts.perCallerItemsMax ?? POOL_DEFAULTS.perCallerItemsMax,
      maxQueuedItems: opts.queueItemsMax ?? POOL_DEFAULTS.queueItemsMax,
      chunk: {
        maxItems: RUN_MANY_MAX_ITEMS,
        firstItems: RUN_MANY_FIRST_ITEMS,
        targetMs: Math.min(RUN_MANY_TARGET_MS, opts.taskTimeoutMs / 4),
      },
      ...(this.batchMax > 1
        ? {
            batch: {
              max: this.batchMax,
              maxCostMs: opts.taskTimeoutMs / 4,
              run: (jobs: unknown[], settle) => this.startBatch(jobs as EngineTask[], settle),
            },
          }
        : {}),
    });
    this.pool.on('workerCreate', () => this.queue.setSlots(++this.ready));
    this.pool.on('message', (message: BatchProgress) => {
      if (typeof message?.batch === 'number') this.progress.get(message.batch)?.(message);
    });
    this.pool.on('workerDestroy', () => this.queue.setSlots(--this.ready));
    this.stepBudget = opts.stepBudget ?? POOL_DEFAULTS.stepBudget;
    this.traceStepBudget = opts.traceStepBudget ?? POOL_DEFAULTS.traceStepBudget;
  }

  /** A fresh step budget for one run (a flow run shares it between its nodes). */
  budgetFor(trace: boolean): StepBudgetState {
    return { limit: trace ? this.traceStepBudget : this.stepBudget, used: 0 };
  }

  /** Evaluates a rule; the outcome says which worker ran it and whether it compiled or hit its cache. */
  run(req: Omit<ExecRunRequest, 'principal'> & { principal?: Principal }): Promise<RunOutcome> {
    const budget = this.budgetFor(req.trace);
    return this.evaluation(callerKey(req.principal), { op: 'run', rule: req.rule, data: req.data, trace: req.trace, now: req.now, budget });
  }

  /**
   * Evaluates one rule on each of `items` as ONE fair-queue job (one task against the caller's
   * limit, its items against the item limits), run in chunks: each chunk is one worker task that
   * compiles or finds the rule once and evaluates the items in a loop, each with its own step
   * budget, deadline and error, and is one turn of the caller's charged its worker time. Rejects
   * only as the queue refuses (`rate_limited`, `dependency_unavailable`); a chunk that failed in the
   * worker answers its error for each of its items.
   */
  async runMany(req: {
    principal?: Principal;
    rule: string;
    items: Array<Record<string, unknown>>;
    trace: boolean;
    now?: string;
  }): Promise<RunManyOutcome> {
    if (this.closed) throw new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down');
    const results = new Array<RunManyItem>(req.items.length);
    const out: RunManyOutcome = { hash: '', cache: 'hit', results };
    const budgetLimit = this.budgetFor(req.trace).limit;
    await this.queue.submitChunked(callerKey(req.principal), req.items.length, async (from, to) => {
      const task: RunManyTask = {
        op: 'runMany',
        rule: req.rule,
        items: req.items.slice(from, to),
        trace: req.trace,
        ...(req.now !== undefined ? { now: req.now } : {}),
        budgetLimit,
        itemTimeoutMs: this.opts.taskTimeoutMs,
      };
      const chunk = await this.startMany(task);
      if ('failure' in chunk) {
        for (let i = from; i < to; i++) results[i] = { ok: false, error: chunk.failure, ms: 0 };
        return;
      }
      out.hash = chunk.hash;
      if (chunk.cache === 'compile') out.cache = 'compile';
      chunk.results.forEach((r, i) => (results[from + i] = r));
    });
    return out;
  }

  /** Hands a chunk to a worker; cut at items × deadline as the last resort (the worker is replaced). */
  private async startMany(task: RunManyTask): Promise<RunManyResult | { failure: ItemFailure }> {
    this.batches.tasks++;
    this.batches.items += task.items.length;
    const signal = AbortSignal.timeout(this.opts.taskTimeoutMs * task.items.length);
    try {
      return (await this.pool.run(task, { signal })) as RunManyResult;
    } catch {
      if (signal.aborted) return { failure: { code: 'timeout', message: `evaluation took longer than ${this.opts.taskTimeoutMs} ms` } };
      if (this.closed) return { failure: { code: 'dependency_unavailable', message: 'the evaluation pool is shut down' } };
      return { failure: { code: 'internal', message: 'evaluation failed: run' } };
    }
  }

  /**
   * Runs a stored policy, compiled or found by its hash, after checking the data against its schema,
   * within what is left of `budget` (whose `used` it advances).
   */
  async runStored(
    principal: Principal | undefined,
    task: Omit<StoredRunTask, 'op' | 'budget'>,
    budget: StepBudgetState,
  ): Promise<RunOutcome> {
    const outcome = await this.evaluation(callerKey(principal), {
      op: 'runStored',
      ...task,
      budget: { limit: budget.limit, used: budget.used },
    });
    budget.used = outcome.steps;
    return outcome;
  }

  /** Checks a rule's syntax. */
  validate(principal: Principal | undefined, rule: string): Promise<EngineTaskResult['validate']> {
    return this.task(callerKey(principal), { op: 'validate', rule });
  }

  /** Describes a rule's structure. */
  explain(principal: Principal | undefined, rule: string): Promise<EngineTaskResult['explain']> {
    return this.task(callerKey(principal), { op: 'explain', rule });
  }

  /** The operator catalogue. */
  operators(principal?: Principal): Promise<EngineTaskResult['operators']> {
    return this.task(callerKey(principal), { op: 'operators' });
  }

  /** Live worker threads. */
  get threads(): number {
    return this.pool.threads.length;
  }

  /** Worker threads ready to take a task (a replacement counts once it has loaded the engine). */
  get readyThreads(): number {
    return this.ready;
  }

  /**
   * Waits until a worker has loaded the engine (at start, before the service answers): the operator
   * catalogue, with `bootTimeoutMs` rather than the task deadline, as loading takes longer than a task.
   */
  async warmUp(bootTimeoutMs = 30_000): Promise<void> {
    await this.pool.run({ op: 'operators' } satisfies EngineTask, { signal: AbortSignal.timeout(bootTimeoutMs) });
  }

  /** Batch tasks handed to workers so far (several evaluations in one piscina task), and the evaluations they carried. */
  batchStats(): { tasks: number; items: number } {
    return { ...this.batches };
  }

  /** Tasks waiting and running, and callers with any. */
  stats(): FairQueueStats {
    return this.queue.stats();
  }

  /** Refuses new tasks and fails the waiting ones, lets running ones finish, then ends the threads. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queue.close();
    await this.pool.close();
    this.deadlines.close();
  }

  private task<K extends EngineTask['op']>(key: string, task: EngineTask & { op: K }): Promise<EngineTaskResult[K]> {
    if (this.closed) return Promise.reject(new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down'));
    return this.queue.submit<EngineTaskResult[K]>(key, () => this.start<K>(task));
  }

  /** An evaluation: coalesced with others waiting for a thread when batching is on. */
  private evaluation(key: string, task: EngineTask & { op: 'run' | 'runStored' }): Promise<RunOutcome> {
    if (this.batchMax <= 1) return this.task(key, task);
    if (this.closed) return Promise.reject(new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down'));
    return this.queue.submitJob<RunOutcome>(key, task);
  }

  /**
   * Hands waiting evaluations to one worker. One alone goes as a plain task (deadline as for any
   * task); several go as one batch task whose items each have the task deadline from when the
   * worker starts them. Items are settled as their answers come (posted early when the batch runs
   * long); the whole task is cut at `items × deadline` as the last resort, and the items not
   * answered by then answer `timeout` (the worker is replaced).
   */
  private async startBatch(tasks: EngineTask[], settle: (index: number, outcome: JobOutcome) => void): Promise<void> {
    if (tasks.length === 1) {
      const started = performance.now();
      try {
        settle(0, { ok: true, value: await this.start(tasks[0]), ms: performance.now() - started });
      } catch (err) {
        settle(0, { ok: false, error: err, ms: performance.now() - started });
      }
      return;
    }
    const id = this.nextBatch++;
    this.batches.tasks++;
    this.batches.items += tasks.length;
    let left = tasks.length;
    let allAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (allAnswered = resolve));
    const apply = ({ from, results }: BatchProgress) => {
      results.forEach((r, i) => {
        settle(
          from + i,
          r.ok ? { ok: true, value: r.value, ms: r.ms } : { ok: false, error: new ArbiterError(r.error.code, r.error.message), ms: r.ms },
        );
      });
      left -= results.length;
      if (left <= 0) allAnswered();
    };
    this.progress.set(id, apply);
    const limitMs = this.opts.taskTimeoutMs * tasks.length;
    const signal = AbortSignal.timeout(limitMs);
    try {
      apply(
        (await this.pool.run({ op: 'batch', id, tasks, itemTimeoutMs: this.opts.taskTimeoutMs } satisfies BatchTask, {
          signal,
        })) as BatchProgress,
      );
      // Answers posted before the task returned come on another port: wait for them.
      await answered;
    } catch (err) {
      const error = signal.aborted
        ? new ArbiterError('timeout', `evaluation took longer than ${this.opts.taskTimeoutMs} ms`, undefined, { cause: err })
        : this.closed
          ? new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down', undefined, { cause: err })
          : new ArbiterError('internal', 'evaluation failed: batch', undefined, { cause: err });
      // Items not answered: their worker time is unknown, each is charged an equal share of the limit.
      tasks.forEach((_, i) => settle(i, { ok: false, error, ms: limitMs / tasks.length }));
    } finally {
      this.progress.delete(id);
    }
  }

  /** Hands `task` to a worker, its deadline starting now. */
  private async start<K extends EngineTask['op']>(task: EngineTask & { op: K }): Promise<EngineTaskResult[K]> {
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
