/**
 * The evaluation queue of the execution service: bounded, per caller, served by deficit round robin.
 *
 * Why: the worker pool is small (cores − 1 threads). With piscina's single FIFO queue, one caller
 * sending slow rules back to back filled it, and everyone else's requests waited behind them (and,
 * with the deadline counted from submission, timed out). Here every caller (API key, else user)
 * has its own queue; the pool is handed at most as many tasks as it has threads, and each free
 * thread takes the next task of the next caller in turn, so a caller waits for at most one task of
 * each other caller, however many they sent.
 *
 * Deficit round robin by worker time: each caller has a deficit (ms of worker time it may still
 * use); a caller whose deficit is not positive skips its turn and earns `quantumMs`; a finished task
 * charges its measured run time. A caller whose tasks are slow (up to its step budget) therefore
 * gets proportionally fewer turns than one whose tasks take microseconds, while the pool never idles
 * when there is work. A caller's state goes when it has nothing queued or running (bounded by the
 * number of callers with work, itself bounded by `maxQueued`).
 *
 * Limits (DESIGN-like decisions, docs/architecture.md "Runaway rules and fair scheduling"):
 * - per caller, at most `perKeyMax` tasks queued or running: past it `rate_limited` (429, the
 *   caller's own excess; the gateway adds `retry-after: 1`);
 * - in all, at most `maxQueued` tasks waiting: past it `dependency_unavailable` (503: the service
 *   is overloaded, `retry-after`);
 * - a task waits at most `maxWaitMs` for a thread: past it `dependency_unavailable` (503), so the
 *   caller hears back before its own deadline. The run deadline starts when a thread takes it.
 * - a chunked job (one `exec.run.many` message: many items, {@link FairQueue.submitChunked}) counts
 *   as one task against `perKeyMax` and `maxQueued`, and its items count against `perKeyItemsMax`
 *   and `maxQueuedItems` (past them `rate_limited` / `dependency_unavailable`), so one call of many
 *   items runs while what waits stays bounded. It runs a chunk at a time, each chunk one turn
 *   charged its worker time, so other callers' tasks go between its chunks.
 */

import { ArbiterError } from '@arbiter/contracts';
import { Deadlines, type DeadlineSignal } from './deadlines.js';

/** Options of {@link FairQueue}. */
export interface FairQueueOptions {
  /** Tasks running at once (the pool's ready threads; see {@link FairQueue.setSlots}). */
  slots: number;
  /** Tasks one caller may have queued or running. */
  perKeyMax: number;
  /** Tasks waiting in all. */
  maxQueued: number;
  /** Longest wait for a thread. */
  maxWaitMs: number;
  /** Worker time (ms) a caller earns per turn; default 1. */
  quantumMs?: number;
  /** The clock (ms); default `performance.now`. */
  now?: () => number;
  /**
   * Coalescing of jobs (see {@link FairQueue.submitJob}): when a slot frees, up to `max` waiting
   * jobs, taken in the same fair order as single tasks, start together as one `run` call, which
   * settles each job as soon as it is done (`settle`, with the worker time it took, charged to its
   * caller); the batch's slot frees when the promise `run` returns settles (a job it left unsettled
   * then fails with that promise's error, or `internal`).
   */
  batch?: { max: number; maxCostMs: number; run: (jobs: unknown[], settle: (index: number, outcome: JobOutcome) => void) => Promise<void> };
  /** Items of chunked jobs one caller may have queued or running; default unbounded. */
  perKeyItemsMax?: number;
  /** Items of chunked jobs queued or running in all; default unbounded. */
  maxQueuedItems?: number;
  /**
   * Chunks of a chunked job: at most `maxItems` items, the first `firstItems`, later ones as many
   * as the job's measured time per item says fit in `targetMs` of worker time; default 256, 16, 20.
   */
  chunk?: { maxItems: number; firstItems: number; targetMs: number };
}

/** A job of many items run a chunk at a time (see {@link FairQueue.submitChunked}). */
interface Chunked {
  readonly total: number;
  /** The first item not yet handed out. */
  next: number;
  /** Chunks started and not settled. */
  running: number;
  /** Worker time (ms) of one item, from the last chunk done; 0 until one is. */
  perItemMs: number;
  readonly run: (from: number, to: number) => Promise<void>;
  /** Set once the job's promise was settled. */
  settled: boolean;
  /** Set once its items no longer count against the limits. */
  released: boolean;
}

/** How one job of a batch ended, and the worker time (ms) it took. */
export type JobOutcome = { ok: true; value: unknown; ms: number } | { ok: false; error: unknown; ms: number };

interface Waiting {
  /** A task started on its own; `null` for a job. */
  readonly start: (() => Promise<unknown>) | null;
  /** What a job hands to `batch.run` (set when `start` is null). */
  readonly job: unknown;
  /** A chunked job (`start` is null then too). */
  readonly chunked: Chunked | null;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
  /** Its wait limit (a chunked job gets a new one while its caller's other work runs). */
  wait: DeadlineSignal;
  /** Set when it left the queue early (its wait expired). */
  gone: boolean;
}

interface Caller {
  readonly key: string;
  /** FIFO of waiting tasks (`head` is the next); entries that expired are skipped. */
  items: Waiting[];
  head: number;
  /** Live waiting tasks (items not gone). */
  queued: number;
  running: number;
  /** Worker time (ms) it may still use before skipping turns. */
  deficit: number;
  /** Whether it is in the round-robin ring (while it has tasks waiting or running). */
  inRing: boolean;
  /** Recent worker time (ms) of one of its jobs (moving average): what a job prepays when batched. */
  costMs: number;
  /** Items of its chunked jobs queued or running. */
  itemLoad: number;
  /** Its chunked jobs not over; of them, those still in its queue; and their chunks running. */
  chunkedJobs: number;
  chunkedQueued: number;
  chunksRunning: number;
}

/** A snapshot for metrics and tests. */
export interface FairQueueStats {
  queued: number;
  running: number;
  callers: number;
}

export class FairQueue {
  private readonly callers = new Map<string, Caller>();
  /** Callers with tasks waiting or running, in turn order. */
  private ring: Caller[] = [];
  private next = 0;
  private queued = 0;
  private running = 0;
  /** Items of chunked jobs queued or running. */
  private items = 0;
  private readonly quantum: number;
  private readonly now: () => number;
  private readonly waits: Deadlines;
  private closed = false;
  private slots: number;
  /** Set while a deferred pump is scheduled (jobs submitted in one turn wait for it, so they start together). */
  private pumpScheduled = false;

  constructor(private readonly opts: FairQueueOptions) {
    this.slots = opts.slots;
    this.quantum = opts.quantumMs ?? 1;
    this.now = opts.now ?? (() => performance.now());
    this.waits = new Deadlines(opts.maxWaitMs, this.now);
  }

  /**
   * Runs `start` for caller `key` when its turn comes and a slot is free; resolves or rejects as the
   * promise `start` returns does. Rejects at once with `rate_limited` (the caller has `perKeyMax`
   * tasks) or `dependency_unavailable` (queue full, or closed), later with `dependency_unavailable`
   * when no slot freed within `maxWaitMs`.
   */
  submit<T>(key: string, start: () => Promise<T>): Promise<T> {
    const refused = this.refusal(key);
    if (refused !== undefined) return Promise.reject(refused);
    return this.enqueue<T>(key, this.callers.get(key), start, undefined, null);
  }

  /**
   * Queues one job of `total` items for caller `key`, run by `run(from, to)` a chunk of items at a
   * time, each chunk a turn of its own (so other callers' tasks run between them) charged its
   * worker time. Resolves when every chunk's `run` resolved; rejects with the first chunk's error
   * (chunks not started then are dropped), or as {@link submit} refuses, counting the job once
   * against `perKeyMax` and its items against `perKeyItemsMax` and `maxQueuedItems`. The wait limit
   * applies until its first chunk starts, and only while none of its caller's work runs: behind the
   * same caller's earlier jobs it waits on.
   */
  submitChunked(key: string, total: number, run: (from: number, to: number) => Promise<void>): Promise<void> {
    const refused = this.refusal(key, total);
    if (refused !== undefined) return Promise.reject(refused);
    const chunked: Chunked = { total, next: 0, running: 0, perItemMs: 0, run, settled: false, released: false };
    const caller = this.callers.get(key) ?? this.addCaller(key);
    caller.itemLoad += total;
    caller.chunkedJobs++;
    caller.chunkedQueued++;
    this.items += total;
    return this.enqueue<void>(key, caller, null, undefined, chunked);
  }

  /**
   * Like {@link submit}, for a job run by the `batch` option: the queue does not start it at once
   * but after the current event-loop turn (`setImmediate`, no timer delay), so jobs submitted in
   * the same turn start together in one batch. Needs the `batch` option.
   */
  submitJob<T>(key: string, job: unknown): Promise<T> {
    if (this.opts.batch === undefined) throw new Error('FairQueue.submitJob needs the `batch` option');
    const refused = this.refusal(key);
    if (refused !== undefined) return Promise.reject(refused);
    return this.enqueue<T>(key, this.callers.get(key), null, job, null);
  }

  /** Tasks of `c` against `perKeyMax`: a chunked job counts once, however many of its chunks run. */
  private load(c: Caller): number {
    return c.queued - c.chunkedQueued + c.running - c.chunksRunning + c.chunkedJobs;
  }

  private refusal(key: string, items = 0): ArbiterError | undefined {
    if (this.closed) return new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down');
    const caller = this.callers.get(key);
    const perKeyItems = this.opts.perKeyItemsMax ?? Infinity;
    if (items > 0 && (caller?.itemLoad ?? 0) + items > perKeyItems) {
      return new ArbiterError('rate_limited', `too many items in progress for this caller (at most ${perKeyItems} at a time)`);
    }
    if (items > 0 && this.items + items > (this.opts.maxQueuedItems ?? Infinity)) {
      return new ArbiterError('dependency_unavailable', 'the evaluation queue is full; try again shortly');
    }
    if (caller !== undefined && this.load(caller) >= this.opts.perKeyMax) {
      return new ArbiterError(
        'rate_limited',
        `too many evaluations in progress for this caller (at most ${this.opts.perKeyMax} at a time)`,
      );
    }
    if (this.queued >= this.opts.maxQueued && this.running >= this.slots) {
      return new ArbiterError('dependency_unavailable', 'the evaluation queue is full; try again shortly');
    }
    return undefined;
  }

  private enqueue<T>(
    key: string,
    caller: Caller | undefined,
    start: (() => Promise<unknown>) | null,
    job: unknown,
    chunked: Chunked | null,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const c = caller ?? this.addCaller(key);
      const item: Waiting = {
        start,
        job,
        chunked,
        resolve: resolve as (value: unknown) => void,
        reject,
        wait: this.waits.start(),
        gone: false,
      };
      item.wait.addEventListener('abort', () => this.expire(c, item));
      c.items.push(item);
      c.queued++;
      this.queued++;
      if (!c.inRing) {
        c.inRing = true;
        this.ring.push(c);
      }
      if (start !== null || chunked !== null) this.pump();
      else this.schedulePump();
    });
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Changes how many tasks may run at once (threads that are ready); more start at once if there is work. */
  setSlots(slots: number): void {
    this.slots = Math.max(0, slots);
    this.pump();
  }

  /** Queued and running tasks, and callers with any. */
  stats(): FairQueueStats {
    return { queued: this.queued, running: this.running, callers: this.callers.size };
  }

  /** Refuses new tasks and fails the waiting ones; running ones finish. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.ring) {
      for (let i = c.head; i < c.items.length; i++) {
        const item = c.items[i];
        if (item.gone) continue;
        item.gone = true;
        item.wait.settle();
        item.reject(new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down'));
      }
    }
    this.ring = [];
    this.callers.clear();
    this.queued = 0;
    this.items = 0;
    this.waits.close();
  }

  private addCaller(key: string): Caller {
    const c: Caller = {
      key,
      items: [],
      head: 0,
      queued: 0,
      running: 0,
      deficit: this.quantum,
      inRing: false,
      costMs: 0,
      itemLoad: 0,
      chunkedJobs: 0,
      chunkedQueued: 0,
      chunksRunning: 0,
    };
    this.callers.set(key, c);
    return c;
  }

  private expire(c: Caller, item: Waiting): void {
    if (item.gone) return;
    if (item.chunked !== null && c.running > 0 && !this.closed) {
      // Waiting behind its caller's own running work (e.g. the other messages of the same batch
      // call), not for a thread: the caller is being served, so the job waits on.
      item.wait = this.waits.start();
      item.wait.addEventListener('abort', () => this.expire(c, item));
      return;
    }
    item.gone = true;
    c.queued--;
    this.queued--;
    if (item.chunked !== null) {
      c.chunkedQueued--;
      item.chunked.settled = true;
      this.release(c, item.chunked);
    }
    item.reject(
      new ArbiterError('dependency_unavailable', `no evaluation thread was free within ${this.opts.maxWaitMs} ms; try again shortly`),
    );
    this.compact(c);
    this.forgetIfIdle(c);
  }

  /** Starts waiting tasks while slots are free, the next caller in turn first; waiting jobs start in batches. */
  private pump(): void {
    while (this.running < this.slots && this.queued > 0 && !this.closed) {
      const c = this.pick();
      const head = this.peek(c);
      if (head.chunked !== null) {
        this.startChunk(c, head, head.chunked);
        continue;
      }
      const item = this.take(c);
      if (item.start === null) {
        this.startBatch(c, item);
        continue;
      }
      this.running++;
      c.running++;
      item.wait.settle();
      const started = this.now();
      let task: Promise<unknown>;
      try {
        task = item.start();
      } catch (err) {
        task = Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      void task.then(item.resolve, item.reject).finally(() => {
        this.running--;
        c.running--;
        c.deficit -= this.now() - started;
        this.forgetIfIdle(c);
        this.pump();
      });
    }
  }

  /**
   * Starts the next chunk of `job` (the head of `c`'s queue) as one turn. The job leaves the queue
   * with its last chunk; it settles when all its chunks have, or at the first that failed.
   */
  private startChunk(c: Caller, item: Waiting, job: Chunked): void {
    const chunk = this.opts.chunk ?? { maxItems: 256, firstItems: 16, targetMs: 20 };
    const size = job.perItemMs > 0 ? Math.max(1, Math.min(chunk.maxItems, Math.floor(chunk.targetMs / job.perItemMs))) : chunk.firstItems;
    const from = job.next;
    const to = Math.min(job.total, from + size);
    job.next = to;
    if (to === job.total) {
      this.take(c);
      c.chunkedQueued--;
    }
    item.wait.settle();
    this.running++;
    c.running++;
    c.chunksRunning++;
    job.running++;
    const started = this.now();
    let run: Promise<void>;
    try {
      run = job.run(from, to);
    } catch (err) {
      run = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    void run
      .then(
        () => undefined,
        (err: unknown) => this.failChunked(c, item, job, err),
      )
      .then(() => {
        const ms = this.now() - started;
        this.running--;
        c.running--;
        c.chunksRunning--;
        job.running--;
        c.deficit -= ms;
        job.perItemMs = ms / (to - from);
        if (job.next === job.total && job.running === 0) {
          this.release(c, job);
          if (!job.settled) item.resolve(undefined);
          job.settled = true;
        }
        this.forgetIfIdle(c);
        this.pump();
      });
  }

  /** A chunk failed: the job rejects, and its chunks not started leave the queue. */
  private failChunked(c: Caller, item: Waiting, job: Chunked, err: unknown): void {
    if (job.next < job.total && !item.gone) {
      item.gone = true;
      c.queued--;
      c.chunkedQueued--;
      this.queued--;
      this.compact(c);
    }
    job.next = job.total;
    if (!job.settled) item.reject(err);
    job.settled = true;
  }

  /** Gives back the item counts of a chunked job that is over. */
  private release(c: Caller, job: Chunked): void {
    if (job.released || this.closed) return;
    job.released = true;
    c.chunkedJobs--;
    c.itemLoad -= job.total;
    this.items -= job.total;
  }

  /**
   * Starts `first` with up to `batch.max − 1` more waiting jobs as one slot's work. The others are
   * taken in turn from callers whose deficit is still positive (no turns are earned for a batch),
   * each prepaying its caller's recent cost per job, and gathering stops once the batch's expected
   * cost reaches `batch.maxCostMs`: a caller with slow jobs cannot fill a batch that others' fast
   * jobs wait in. Each job settles alone and charges its caller its own worker time.
   */
  private startBatch(firstCaller: Caller, first: Waiting): void {
    const batch = this.opts.batch!;
    const members: Array<{ c: Caller; item: Waiting; prepaid: number }> = [];
    const add = (c: Caller, item: Waiting) => {
      members.push({ c, item, prepaid: c.costMs });
      c.deficit -= c.costMs;
      return c.costMs;
    };
    let expected = add(firstCaller, first);
    while (members.length < batch.max && this.queued > 0 && expected < batch.maxCostMs) {
      const c = this.pickReady();
      if (c === undefined) break;
      expected += add(c, this.take(c));
    }
    this.running++;
    for (const { c, item } of members) {
      c.running++;
      item.wait.settle();
    }
    const settled = new Array<boolean>(members.length).fill(false);
    const settle = (index: number, outcome: JobOutcome) => {
      const member = members[index];
      if (member === undefined || settled[index]) return;
      settled[index] = true;
      const { c, item, prepaid } = member;
      c.deficit -= outcome.ms - prepaid;
      c.costMs = c.costMs === 0 ? outcome.ms : (3 * c.costMs + outcome.ms) / 4;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    };
    let run: Promise<void>;
    try {
      run = batch.run(
        members.map((m) => m.item.job),
        settle,
      );
    } catch (err) {
      run = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    void run
      .then(
        () => new ArbiterError('internal', 'evaluation failed: the batch left a job unanswered'),
        (err: unknown) => err,
      )
      .then((unanswered) => {
        members.forEach(({ item }, i) => {
          if (!settled[i]) {
            settled[i] = true;
            item.reject(unanswered);
          }
        });
        this.running--;
        for (const { c } of members) {
          c.running--;
          this.forgetIfIdle(c);
        }
        this.pump();
      });
  }

  /** The next caller in turn whose deficit is positive and whose next task is a job, if any (no turns earned). */
  private pickReady(): Caller | undefined {
    for (let n = 0; n < this.ring.length; n++) {
      if (this.next >= this.ring.length) this.next = 0;
      const c = this.ring[this.next++];
      if (c.queued > 0 && c.deficit > 0) {
        const head = this.peek(c);
        if (head.start === null && head.chunked === null) return c;
      }
    }
    return undefined;
  }

  /**
   * The caller whose task starts next (deficit round robin). INVARIANT: some caller in the ring
   * has a live waiting task (`queued > 0`); callers with tasks only running are passed over.
   */
  private pick(): Caller {
    for (;;) {
      // One pass: the first caller in turn with a positive deficit; the others earn a quantum.
      let bestRounds = Infinity;
      for (let n = 0; n < this.ring.length; n++) {
        if (this.next >= this.ring.length) this.next = 0;
        const c = this.ring[this.next];
        if (c.queued === 0) {
          // Only running: it keeps its place in turn, but has nothing to start.
          this.next++;
          continue;
        }
        if (c.deficit > 0) {
          // Its turn: the next caller goes first next time.
          this.next++;
          return c;
        }
        c.deficit += this.quantum;
        bestRounds = Math.min(bestRounds, Math.floor(-c.deficit / this.quantum) + 1);
        this.next++;
      }
      // Nobody could go: give every caller the rounds the closest one needs at once, rather than loop.
      if (Number.isFinite(bestRounds) && bestRounds > 1) for (const c of this.ring) c.deficit += (bestRounds - 1) * this.quantum;
    }
  }

  /** `c`'s next live task, left in place. */
  private peek(c: Caller): Waiting {
    let at = c.head;
    while (c.items[at].gone) at++;
    return c.items[at];
  }

  /** Removes and returns `c`'s next live task. */
  private take(c: Caller): Waiting {
    let item = c.items[c.head++];
    while (item.gone) item = c.items[c.head++];
    c.queued--;
    this.queued--;
    this.compact(c);
    return item;
  }

  /** Drops consumed entries. */
  private compact(c: Caller): void {
    if (c.queued === 0) {
      c.items = [];
      c.head = 0;
    } else if (c.head > 64 && c.head * 2 > c.items.length) {
      c.items = c.items.slice(c.head);
      c.head = 0;
    }
  }

  /**
   * A caller with nothing waiting or running leaves the ring and is forgotten (its deficit with it).
   * While a task of it runs it keeps its place, so a caller sending one request after another
   * does not rejoin ahead of callers already waiting.
   */
  private forgetIfIdle(c: Caller): void {
    if (c.queued !== 0 || c.running !== 0) return;
    if (c.inRing) {
      c.inRing = false;
      const at = this.ring.indexOf(c);
      this.ring.splice(at, 1);
      if (at < this.next) this.next--;
    }
    if (this.callers.get(c.key) === c) this.callers.delete(c.key);
  }
}
