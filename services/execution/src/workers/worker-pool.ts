import {
  ArbiterError,
  RUN_DEFAULTS,
  tracesOf,
  type FlowDefinition,
  type Principal,
  type RunnableRollout,
  type RunSpec,
} from '@arbiter/contracts';
import { resolveRun } from '@arbiter/run';
import { tableSource } from '@arbiter/run/caches';
import { builtWorkerFile } from '@arbiter/service-kit';
import { Piscina } from 'piscina';
import { Deadlines } from './deadlines.js';
import { LOW_PRIORITY } from '../queue/callers.js';
import { FairQueue, type CallerId, type Chunk, type FairQueueStats } from '../queue/fair-queue.js';
import {
  ITEM_OK,
  type ChunkResult,
  type WorkerTask,
  type WorkerTaskResult,
  type EvalProgress,
  type EvalTask,
  type ReplyForm,
  type TableSource,
  type TaskChunk,
  type TaskSource,
  type WorkerConfig,
} from './tasks.js';

/** Options of {@link WorkerPool}. */
export interface WorkerPoolOptions {
  /** Worker threads (fixed: they start at once and stay, keeping their caches warm). */
  size: number;
  /** Deadline of one item, from when a worker starts it; past it the answer is `timeout` (a task far past it: the worker is replaced). */
  taskTimeoutMs: number;
  /** Compiled policies each worker keeps. */
  cacheSize: number;
  /** Limits each worker applies: trace bytes and data depth. */
  maxTraceBytes?: number;
  maxDataDepth?: number;
  /** Steps a run without a trace may take (LANGUAGE.md §8.1); default 1,000,000. */
  stepBudget?: number;
  /** Steps a run with a trace may take; default 10,000. */
  traceStepBudget?: number;
  /** Jobs (an evaluation call, a batch message's group) one key may have in progress (past it `rate_limited`); default 64. */
  perCallerMax?: number;
  /** The same, over all keys of one person; default `perCallerMax`. */
  perPersonMax?: number;
  /** Jobs waiting in all (past it `dependency_unavailable`); default 1000. */
  queueMax?: number;
  /** Longest wait for a thread (then `dependency_unavailable`); default 800 ms. */
  queueWaitMs?: number;
  /** Items one worker task carries at most (1 turns sharing tasks off); default 256. */
  batchMax?: number;
  /** Worker time (ms) one task aims at: how long others may wait behind it; default 5. */
  taskTargetMs?: number;
  /** Items in progress per key (past it `rate_limited`); default 4096. */
  perCallerItemsMax?: number;
  /** The same, over all keys of one person; default `perCallerItemsMax`. */
  perPersonItemsMax?: number;
  /** Items in progress in all (past it `dependency_unavailable`); default 16384. */
  queueItemsMax?: number;
  /** The worker module; the built `worker.js` beside this module unless a test needs another. */
  workerFile?: URL;
}

/** Defaults of the limits (the service's config has the same; the run's own are `RUN_DEFAULTS`). */
export const POOL_DEFAULTS = {
  stepBudget: RUN_DEFAULTS.stepBudget,
  traceStepBudget: RUN_DEFAULTS.tracedStepBudget,
  perCallerMax: 64,
  queueMax: 1000,
  queueWaitMs: 800,
  batchMax: 256,
  taskTargetMs: 5,
  perCallerItemsMax: 4096,
  queueItemsMax: 16_384,
  maxTraceBytes: RUN_DEFAULTS.maxTraceBytes,
  maxDataDepth: RUN_DEFAULTS.maxDataDepth,
} as const;

/** The caller a job is queued for: its API key (else its user), sharing with its person (the key's owner or the user). */
export function callerOf(principal: Principal | undefined): CallerId {
  if (principal === undefined) return { key: 'anonymous', person: 'anonymous' };
  const person = `${principal.orgId}:${principal.userId}`;
  return { key: principal.apiKeyId !== undefined ? `key:${principal.apiKeyId}` : `user:${person}`, person };
}

/** One item's answer: its raw JSON (`json` replies) or object (`value`), with its worker time, steps and flags (`tasks.ts` ITEM_*). */
export interface ItemAnswer {
  json?: Uint8Array;
  value?: unknown;
  flags: number;
  steps: number;
  ms: number;
  /** The worker thread that ran it. */
  threadId: number;
}

/** What {@link WorkerPool.runJob} answers: each item's answer or error, in order, the rule's hash and the worker compiles it took. */
export interface EvalOutcome {
  hash: string;
  compiles: number;
  answers: Array<ItemAnswer | ArbiterError>;
}

/** The items a run runs on (JSON texts as UTF-8), and what bounds their answers. */
export interface RunItems {
  items: Uint8Array[];
  /** When the caller stops waiting (the queue's clock, {@link WorkerPool.clock}): items not started by then answer `timeout`, unrun. */
  deadline?: number;
  /**
   * Bytes left in the reply the answers go back in (shared by the jobs of one message): once the
   * answers have used them up, items not started answer `result_too_large`, unrun (the caller
   * asks for them again in a message of their own).
   */
  replyBudget?: { left: number };
}

/**
 * An evaluation job: the {@link RunSpec} options of the run (a replay is queued as the caller's
 * low-priority work, masked reads reported), its items, and what the workers run them with.
 */
export type EvalJob = Pick<RunSpec, 'trace' | 'traceBytes' | 'flags' | 'now' | 'nows' | 'replay'> &
  RunItems & {
    principal: Principal | undefined;
    /** The policy the items run, or a flow's table node. */
    source: TaskSource;
    reply: ReplyForm;
    /** Steps already used by the run (flow nodes share one budget); default 0. */
    budgetUsed?: number;
    /** Queued as the caller's low-priority work like a replay, without a replay's masked-read watch (shadow runs). */
    lowPriority?: boolean;
  };

/** What an item not run because its message's reply was full answers. */
const REPLY_FULL = new ArbiterError('result_too_large', 'this answer did not fit in the batch reply; send the request on its own');
/** Bytes a reply spends on an answer beyond its JSON (its offset in the header). */
const ANSWER_OVERHEAD_BYTES = 12;
/**
 * Worker time (ms) charged per byte of answer, on top of the time it took: moving an answer
 * (copied into the reply, sent over NATS, forwarded by the gateway) costs the services' main
 * threads about a millisecond a megabyte, so an item with a huge trace pays for it.
 */
const MS_PER_ANSWER_BYTE = 1 / 1_000_000;

/** The queue's view of a job: the request and where its answers go. */
interface JobSpec {
  req: EvalJob;
  budgetLimit: number;
  outcome: EvalOutcome;
}

/**
 * A piscina pool of rule-engine workers behind a {@link FairQueue}: work waits in the service, per
 * caller, and piscina is handed at most `size` tasks at a time, so a deadline (from when a worker
 * starts an item) never counts time spent behind other callers' work. Evaluations are jobs of items
 * (a single run is a job of one); the queue cuts them into chunks and packs chunks of several
 * callers into one worker task (`queue/assembly.ts`). Every run carries a step budget, so a runaway
 * rule stops itself with `budget_exceeded`; the deadline is the last resort.
 */
export class WorkerPool {
  private readonly pool: Piscina<WorkerTask | EvalTask, unknown>;
  private readonly deadlines: Deadlines;
  private readonly queue: FairQueue;
  /** Steps a run may take in each trace mode, as the run layer decides them under this pool's limits. */
  private readonly budgets: { traced: number; untraced: number };
  private closed = false;
  /** Where a running task's early answers go, by task id. */
  private readonly progress = new Map<number, (progress: EvalProgress) => void>();
  private nextTask = 0;
  /** Evaluation tasks handed to workers, and the items they carried. */
  private readonly batches = { tasks: 0, items: 0 };
  /** Threads ready to take a task. */
  private ready = 0;

  constructor(private readonly opts: WorkerPoolOptions) {
    const workerData: WorkerConfig = {
      cacheSize: opts.cacheSize,
      maxTraceBytes: opts.maxTraceBytes ?? POOL_DEFAULTS.maxTraceBytes,
      maxDataDepth: opts.maxDataDepth ?? POOL_DEFAULTS.maxDataDepth,
    };
    this.pool = new Piscina({
      filename: (opts.workerFile ?? builtWorkerFile(import.meta.url, './worker.js')).href,
      minThreads: opts.size,
      maxThreads: opts.size,
      workerData,
      // Per-task run/wait histograms: nothing reads them (the service keeps its own metrics).
      recordTiming: false,
    });
    // One timer for every task's last-resort deadline (a task of n items: n × the item deadline).
    this.deadlines = new Deadlines(opts.taskTimeoutMs);
    // Tasks go to threads that are ready: none until piscina reports them, and a thread terminated at
    // the deadline is not handed work again until its replacement has loaded the engine, so its boot
    // time never counts against another task's deadline.
    const perCallerItemsMax = opts.perCallerItemsMax ?? POOL_DEFAULTS.perCallerItemsMax;
    this.queue = new FairQueue({
      slots: 0,
      perKeyMax: opts.perCallerMax ?? POOL_DEFAULTS.perCallerMax,
      perPersonMax: opts.perPersonMax ?? opts.perCallerMax ?? POOL_DEFAULTS.perCallerMax,
      maxQueued: opts.queueMax ?? POOL_DEFAULTS.queueMax,
      maxWaitMs: opts.queueWaitMs ?? POOL_DEFAULTS.queueWaitMs,
      perKeyItemsMax: perCallerItemsMax,
      perPersonItemsMax: opts.perPersonItemsMax ?? perCallerItemsMax,
      maxQueuedItems: opts.queueItemsMax ?? POOL_DEFAULTS.queueItemsMax,
      chunk: {
        maxItems: Math.max(1, opts.batchMax ?? POOL_DEFAULTS.batchMax),
        targetMs: Math.min(opts.taskTargetMs ?? POOL_DEFAULTS.taskTargetMs, opts.taskTimeoutMs / 4),
      },
      runner: { run: (chunks, done) => this.runChunks(chunks as Array<Chunk<JobSpec>>, done) },
    });
    this.pool.on('workerCreate', () => this.queue.setSlots(++this.ready));
    this.pool.on('message', (message: EvalProgress) => {
      if (typeof message?.task === 'number') this.progress.get(message.task)?.(message);
    });
    this.pool.on('workerDestroy', () => this.queue.setSlots(--this.ready));
    const limits = {
      stepBudget: opts.stepBudget ?? POOL_DEFAULTS.stepBudget,
      tracedStepBudget: opts.traceStepBudget ?? POOL_DEFAULTS.traceStepBudget,
    };
    this.budgets = { traced: resolveRun({ trace: true }, limits).stepBudget, untraced: resolveRun({ trace: false }, limits).stepBudget };
  }

  /** Steps one run may take: fewer with a trace (a flow run shares them between its nodes). */
  budgetLimit(trace: boolean): number {
    return trace ? this.budgets.traced : this.budgets.untraced;
  }

  /** The clock deadlines are given in (ms). */
  clock(): number {
    return this.queue.clock();
  }

  /**
   * Evaluates a job of items as ONE fair-queue job (one against the caller's job limits, its items
   * against the item limits), run in chunks that may share worker tasks with other callers' work.
   * Rejects only as the queue refuses (`rate_limited`, `dependency_unavailable`); an item that
   * failed on its own (too deep, time-out, worker failure, dropped at the deadline) answers its error.
   */
  async runJob(req: EvalJob): Promise<EvalOutcome> {
    if (this.closed) throw new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down');
    const outcome: EvalOutcome = { hash: '', compiles: 0, answers: new Array<ItemAnswer | ArbiterError>(req.items.length) };
    const spec: JobSpec = { req, budgetLimit: this.budgetLimit(tracesOf(req)), outcome };
    const budget = req.replyBudget;
    const caller = callerOf(req.principal);
    // Replays and shadow runs wait behind the caller's own live work (`queue/callers.ts`): a key of its own, same person.
    const low = req.replay === true || req.lowPriority === true;
    await this.queue.submitEval(low ? { ...caller, key: `${LOW_PRIORITY}${caller.key}` } : caller, {
      spec,
      total: req.items.length,
      ...(req.deadline !== undefined ? { deadline: req.deadline } : {}),
      ...(budget !== undefined ? { stop: () => (budget.left <= 0 ? REPLY_FULL : undefined) } : {}),
      drop: (from, to, err) => {
        for (let i = from; i < to; i++) outcome.answers[i] ??= err;
      },
    });
    return outcome;
  }

  /** Checks a rule's syntax. */
  validate(principal: Principal | undefined, rule: string): Promise<WorkerTaskResult['validate']> {
    return this.task(principal, { op: 'validate', rule });
  }

  /** Describes a rule's structure. */
  explain(principal: Principal | undefined, rule: string): Promise<WorkerTaskResult['explain']> {
    return this.task(principal, { op: 'explain', rule });
  }

  /**
   * The structural problems of a flow definition (`validateDefinition`), checked in a worker as
   * the caller's work: compiling a big decision table takes long, and the main thread serves
   * everyone. Each table node crosses as the source its runs use (one string, not thousands of cells).
   */
  validateFlow(principal: Principal | undefined, definition: FlowDefinition): Promise<WorkerTaskResult['validateFlow']> {
    const tables: TableSource[] = [];
    const nodes = Object.entries(definition.nodes).map(([id, node]): [string, (typeof definition.nodes)[string] | number] =>
      node.type === 'table' ? [id, tables.push(tableSource(id, node)) - 1] : [id, node],
    );
    return this.task(principal, { op: 'validateFlow', start: definition.start, nodes, tables });
  }

  /**
   * Which of `items` get `rollout`'s new version (`choosesNew` of each), in a worker as the caller's
   * work: a rollout by a data path parses every item, which must not hold up the main thread.
   */
  rolloutChoices(principal: Principal | undefined, rollout: RunnableRollout, items: readonly Uint8Array[]): Promise<boolean[]> {
    const ends: number[] = [];
    let bytes = 0;
    for (const item of items) ends.push((bytes += item.byteLength));
    const data = new Uint8Array(bytes);
    items.forEach((item, i) => data.set(item, i === 0 ? 0 : ends[i - 1]));
    return this.task(principal, { op: 'rolloutChoices', rollout, data, ends });
  }

  /** The operator catalogue. */
  operators(principal?: Principal): Promise<WorkerTaskResult['operators']> {
    return this.task(principal, { op: 'operators' });
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
    await this.pool.run({ op: 'operators' } satisfies WorkerTask, { signal: AbortSignal.timeout(bootTimeoutMs) });
  }

  /** Evaluation tasks handed to workers so far, and the items they carried. */
  batchStats(): { tasks: number; items: number } {
    return { ...this.batches };
  }

  /** What the person of `principal` has in progress against its limits (the fair queue's `personLoad`). */
  personLoad(principal: Principal | undefined): ReturnType<FairQueue['personLoad']> {
    return this.queue.personLoad(callerOf(principal).person);
  }

  /** Work waiting and running, and callers with any. */
  stats(): FairQueueStats {
    return this.queue.stats();
  }

  /** Refuses new work and fails the waiting work, lets running tasks finish, then ends the threads. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queue.close();
    await this.pool.close();
    this.deadlines.close();
  }

  private task<K extends WorkerTask['op']>(principal: Principal | undefined, task: WorkerTask & { op: K }): Promise<WorkerTaskResult[K]> {
    if (this.closed) return Promise.reject(new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down'));
    return this.queue.submit<WorkerTaskResult[K]>(callerOf(principal), () => this.start<K>(task));
  }

  /**
   * Hands `chunks` to one worker as one task: their items' texts copied once into a buffer that is
   * transferred, not cloned. Chunks are settled as their answers come (posted early when the task
   * runs long); the whole task is cut at `items × deadline` as the last resort, and the chunks not
   * answered by then answer `timeout` (the worker is replaced).
   */
  private async runChunks(chunks: Array<Chunk<JobSpec>>, done: (index: number, ms: number) => void): Promise<void> {
    const id = this.nextTask++;
    let bytes = 0;
    let count = 0;
    for (const { job, from, to } of chunks) {
      count += to - from;
      for (let i = from; i < to; i++) bytes += job.spec.req.items[i].byteLength;
    }
    const data = new Uint8Array(bytes);
    const ends = new Array<number>(count);
    const taskChunks = new Array<TaskChunk>(chunks.length);
    // Each policy (or table) crosses to the worker once per task, however many chunks run it.
    const sources: TaskSource[] = [];
    const byText = new Map<string, number>();
    const byHash = new Map<string, number>();
    const byTable = new Map<string, number>();
    const sourceIndex = (source: TaskSource): number => {
      const index = source.kind === 'text' ? byText : source.kind === 'stored' ? byHash : byTable;
      const id = source.kind === 'text' ? source.rule : source.hash;
      let at = index.get(id);
      if (at === undefined) {
        at = sources.push(source) - 1;
        index.set(id, at);
      }
      return at;
    };
    // Deadlines cross to the worker in epoch ms: each thread's `performance.now()` has its own origin.
    const toEpoch = Date.now() - this.queue.clock();
    let at = 0;
    let item = 0;
    for (const [c, { job, from, to }] of chunks.entries()) {
      const { req, budgetLimit } = job.spec;
      for (let i = from; i < to; i++) {
        data.set(req.items[i], at);
        at += req.items[i].byteLength;
        ends[item++] = at;
      }
      taskChunks[c] = {
        source: sourceIndex(req.source),
        trace: tracesOf(req),
        ...(req.traceBytes !== undefined ? { traceBytes: req.traceBytes } : {}),
        ...(req.flags !== undefined ? { flags: req.flags } : {}),
        ...(req.now !== undefined ? { now: req.now } : {}),
        ...(req.nows !== undefined ? { nows: req.nows.slice(from, to) } : {}),
        budgetLimit,
        budgetUsed: req.budgetUsed ?? 0,
        reply: req.reply,
        count: to - from,
        ...(req.deadline !== undefined && Number.isFinite(req.deadline) ? { deadline: req.deadline + toEpoch } : {}),
        ...(req.replay === true ? { replay: true } : {}),
      };
    }
    this.batches.tasks++;
    this.batches.items += count;
    let left = chunks.length;
    let allAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (allAnswered = resolve));
    const apply = ({ from, chunks: results }: EvalProgress) => {
      results.forEach((result, k) => {
        const chunk = chunks[from + k];
        done(from + k, settleChunk(chunk, result));
      });
      left -= results.length;
      if (left <= 0) allAnswered();
    };
    this.progress.set(id, apply);
    const limitMs = this.opts.taskTimeoutMs * count;
    const signal = this.deadlines.start(limitMs);
    try {
      const task: EvalTask = { op: 'eval', id, itemTimeoutMs: this.opts.taskTimeoutMs, sources, chunks: taskChunks, data, ends };
      apply((await this.pool.run(task, { signal, transferList: [data.buffer] })) as EvalProgress);
      // Answers posted before the task returned come on another port: wait for them.
      await answered;
    } catch (err) {
      const error = signal.aborted
        ? new ArbiterError('timeout', `evaluation took longer than ${this.opts.taskTimeoutMs} ms`, undefined, { cause: err })
        : this.closed
          ? new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down', undefined, { cause: err })
          : new ArbiterError('internal', 'evaluation failed: eval', undefined, { cause: err });
      // Items not answered: their worker time is unknown, each is charged an equal share of the limit.
      chunks.forEach(({ job, from, to }, c) => {
        for (let i = from; i < to; i++) job.spec.outcome.answers[i] ??= error;
        done(c, (limitMs * (to - from)) / count);
      });
    } finally {
      signal.settle();
      this.progress.delete(id);
    }
  }

  /** Hands a single task to a worker, its deadline starting now. */
  private async start<K extends WorkerTask['op']>(task: WorkerTask & { op: K }): Promise<WorkerTaskResult[K]> {
    const signal = this.deadlines.start();
    try {
      return (await this.pool.run(task, { signal })) as WorkerTaskResult[K];
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

/**
 * Writes a chunk's answers into its job's outcome (and spends their bytes from the reply budget);
 * returns what its items cost: their worker time, and their answers' bytes (MS_PER_ANSWER_BYTE).
 */
function settleChunk(chunk: Chunk<JobSpec>, result: ChunkResult): number {
  const { outcome, req } = chunk.job.spec;
  const bytes = result.json?.byteLength ?? 0;
  if (req.replyBudget !== undefined) req.replyBudget.left -= bytes + ANSWER_OVERHEAD_BYTES * result.flags.length;
  outcome.hash = result.hash;
  if (result.compiled) outcome.compiles++;
  let ms = 0;
  let jsonFrom = 0;
  for (let k = 0; k < result.flags.length; k++) {
    const i = chunk.from + k;
    ms += result.ms[k];
    const flags = result.flags[k];
    const jsonTo = result.jsonEnds?.[k] ?? 0;
    if (flags & ITEM_OK) {
      outcome.answers[i] ??= {
        flags,
        steps: result.steps[k],
        ms: result.ms[k],
        threadId: result.threadId,
        ...(result.json !== undefined ? { json: result.json.subarray(jsonFrom, jsonTo) } : { value: result.values?.[k] }),
      };
    } else {
      const failure = result.failures?.[k] ?? { code: 'internal', message: 'evaluation failed: run' };
      outcome.answers[i] ??= new ArbiterError(failure.code, failure.message);
    }
    jsonFrom = jsonTo;
  }
  return ms + bytes * MS_PER_ANSWER_BYTE;
}
