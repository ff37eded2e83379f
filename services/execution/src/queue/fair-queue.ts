/**
 * The evaluation queue of the execution service: bounded, per caller, served by deficit round robin
 * over persons.
 *
 * Why: the worker pool is small (cores − 1 threads). With piscina's single FIFO queue, one caller
 * sending slow rules back to back filled it, and everyone else's requests waited behind them. Here
 * work waits in the service, per key, and the pool is handed at most as many tasks as it has
 * threads; each free thread takes the next work of the next person in turn.
 *
 * Shares are per person (a key's owner, or a bearer's user), not per key, so minting keys buys no
 * bigger share: persons take turns by deficit round robin of worker time (a person whose
 * deficit is not positive skips its turn and earns `quantumMs`; work charges the worker time it
 * took), and within a person its keys take turns. Limits count per key and per person.
 *
 * Two kinds of entry (`queue/jobs.ts`): a `task` (validate, explain, operators) runs on its own; an
 * `eval` job of n items (a single evaluation is a job of one) is handed out a chunk at a time, and
 * chunks of several persons' jobs make one worker task (`queue/assembly.ts`) that aims at
 * `chunk.targetMs` of worker time (`queue/chunking.ts`), each chunk prepaid at its expected cost
 * and charged what it really took. So a flood of slow batch items gets one person's share in short
 * tasks, and the others wait behind at most one such task.
 *
 * Limits (docs/architecture.md "Runaway rules and fair scheduling"):
 * - per key at most `perKeyMax` entries (tasks, eval jobs) not over, per person `perPersonMax`:
 *   past either `rate_limited` (429, the caller's own excess; the gateway adds `retry-after: 1`);
 * - items of eval jobs not over: per key `perKeyItemsMax`, per person `perPersonItemsMax`
 *   (`rate_limited`), in all `maxQueuedItems` (`dependency_unavailable`);
 * - in all, at most `maxQueued` entries waiting: past it `dependency_unavailable` (503);
 * - an entry waits at most `maxWaitMs` for its first work to start (then `dependency_unavailable`,
 *   so its caller hears back before its own deadline); a job of several items waits on while its
 *   own key's work runs (the other messages of the same batch call);
 * - an eval job carries its caller's deadline: items not started by then are dropped (`timeout`),
 *   never run for a caller who has gone.
 */

import { ArbiterError } from '@arbiter/contracts';
import { Deadlines } from '../workers/deadlines.js';
import { assembleTask, type Handout } from './assembly.js';
import { Scheduler } from './callers.js';
import { DEFAULT_CHUNK_POLICY, learn, type ChunkPolicy } from './chunking.js';
import type { CallerId, Chunk, ChunkRunner, Entry, EvalEntry, Key, Person, TaskEntry } from './jobs.js';

export type { CallerId, Chunk, ChunkRunner } from './jobs.js';
export type { ChunkPolicy } from './chunking.js';

/** Options of {@link FairQueue}. */
export interface FairQueueOptions {
  /** Tasks running at once (the pool's ready threads; see {@link FairQueue.setSlots}). */
  slots: number;
  /** Entries (tasks, eval jobs) one key may have not over. */
  perKeyMax: number;
  /** Entries one person may have not over; default `perKeyMax`. */
  perPersonMax?: number;
  /** Entries waiting in all. */
  maxQueued: number;
  /** Longest wait for the first work of an entry to start. */
  maxWaitMs: number;
  /** Worker time (ms) a person earns per turn; default 1. */
  quantumMs?: number;
  /** The clock (ms); default `performance.now`. */
  now?: () => number;
  /** Runs the worker tasks made of eval jobs' chunks; needed by {@link FairQueue.submitEval}. */
  runner?: ChunkRunner;
  /** Items of eval jobs one key may have not over; default unbounded. */
  perKeyItemsMax?: number;
  /** Items of eval jobs one person may have not over; default `perKeyItemsMax`. */
  perPersonItemsMax?: number;
  /** Items of eval jobs not over in all; default unbounded. */
  maxQueuedItems?: number;
  /** How work is cut into worker tasks; default {@link DEFAULT_CHUNK_POLICY}. */
  chunk?: Partial<ChunkPolicy>;
}

/** A snapshot for metrics and tests. */
export interface FairQueueStats {
  /** Entries waiting. */
  queued: number;
  /** Worker tasks running. */
  running: number;
  /** Keys with work waiting or running. */
  callers: number;
  /** Persons with work waiting or running. */
  persons: number;
}

/** An eval job as submitted: what the runner needs, its size, deadline, and how its items are settled. */
export interface EvalSubmission<S> {
  spec: S;
  total: number;
  /** When its caller stops waiting (queue clock); default never. */
  deadline?: number;
  /** Items `from`…`to − 1` will not run: settle them with `err`. */
  drop: (from: number, to: number, err: ArbiterError) => void;
  /** Asked before each chunk is handed out: an error means the rest of the job will not run (its items dropped with it). */
  stop?: () => ArbiterError | undefined;
}

export class FairQueue {
  private readonly scheduler: Scheduler;
  private running = 0;
  private queued = 0;
  /** Items of eval jobs not over. */
  private items = 0;
  private closed = false;
  private readonly now: () => number;
  private readonly waits: Deadlines;
  private slots: number;
  private readonly policy: ChunkPolicy;
  /** Set while a deferred pump is scheduled (jobs submitted in one turn wait for it, so they start together). */
  private pumpScheduled = false;

  constructor(private readonly opts: FairQueueOptions) {
    this.slots = opts.slots;
    this.scheduler = new Scheduler(opts.quantumMs ?? 1);
    this.now = opts.now ?? (() => performance.now());
    this.waits = new Deadlines(opts.maxWaitMs, this.now);
    this.policy = { ...DEFAULT_CHUNK_POLICY, ...opts.chunk };
  }

  /** The queue's clock (what deadlines are measured in). */
  clock(): number {
    return this.now();
  }

  /**
   * Runs `start` for `caller` when its turn comes and a slot is free; resolves or rejects as the
   * promise `start` returns does. Rejects at once as the limits refuse (see the module comment),
   * later with `dependency_unavailable` when no slot freed within `maxWaitMs`.
   */
  submit<T>(caller: CallerId, start: () => Promise<T>): Promise<T> {
    const refused = this.refusal(caller, 0);
    if (refused !== undefined) return Promise.reject(refused);
    return new Promise<T>((resolve, reject) => {
      const entry: TaskEntry = {
        kind: 'task',
        key: this.admit(caller, 0),
        start,
        resolve: resolve as (value: unknown) => void,
        reject,
        wait: this.waits.start(),
        gone: false,
      };
      this.enqueue(entry);
      this.pump();
    });
  }

  /**
   * Queues an eval job of `total` items for `caller`; resolves when every item is settled (by the
   * runner, or through `drop`). Rejects at once, running nothing, as the limits refuse. The job
   * does not start within the current event-loop turn (`setImmediate`, no timer delay), so jobs
   * submitted in the same turn can share worker tasks. Needs the `runner` option.
   */
  submitEval<S>(caller: CallerId, job: EvalSubmission<S>): Promise<void> {
    if (this.opts.runner === undefined) throw new Error('FairQueue.submitEval needs the `runner` option');
    const refused = this.refusal(caller, job.total);
    if (refused !== undefined) return Promise.reject(refused);
    return new Promise<void>((resolve) => {
      const entry: EvalEntry<S> = {
        kind: 'eval',
        key: this.admit(caller, job.total),
        spec: job.spec,
        total: job.total,
        next: 0,
        running: 0,
        deadline: job.deadline ?? Infinity,
        perItemMs: 0,
        drop: job.drop,
        ...(job.stop !== undefined ? { stop: job.stop } : {}),
        finish: resolve,
        wait: this.waits.start(),
        gone: false,
      };
      this.enqueue(entry);
      this.schedulePump();
    });
  }

  private refusal(caller: CallerId, items: number): ArbiterError | undefined {
    if (this.closed) return new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down');
    const key = this.scheduler.peekKey(caller.person, caller.key);
    const person = this.scheduler.persons.get(caller.person);
    const perKeyItems = this.opts.perKeyItemsMax ?? Infinity;
    const perPersonItems = this.opts.perPersonItemsMax ?? perKeyItems;
    if (items > 0 && (key?.items ?? 0) + items > perKeyItems) {
      return new ArbiterError('rate_limited', `too many items in progress for this caller (at most ${perKeyItems} at a time)`);
    }
    if (items > 0 && (person?.items ?? 0) + items > perPersonItems) {
      return new ArbiterError(
        'rate_limited',
        `too many items in progress for this person, over all their keys (at most ${perPersonItems} at a time)`,
      );
    }
    if (items > 0 && this.items + items > (this.opts.maxQueuedItems ?? Infinity)) {
      return new ArbiterError('dependency_unavailable', 'the evaluation queue is full; try again shortly');
    }
    if ((key?.jobs ?? 0) >= this.opts.perKeyMax) {
      return new ArbiterError(
        'rate_limited',
        `too many evaluations in progress for this caller (at most ${this.opts.perKeyMax} at a time)`,
      );
    }
    const perPerson = this.opts.perPersonMax ?? this.opts.perKeyMax;
    if ((person?.jobs ?? 0) >= perPerson) {
      return new ArbiterError(
        'rate_limited',
        `too many evaluations in progress for this person, over all their keys (at most ${perPerson} at a time)`,
      );
    }
    if (this.queued >= this.opts.maxQueued && this.running >= this.slots) {
      return new ArbiterError('dependency_unavailable', 'the evaluation queue is full; try again shortly');
    }
    return undefined;
  }

  /** Counts an admitted entry of `items` items against its key and person. */
  private admit(caller: CallerId, items: number): Key {
    const key = this.scheduler.keyOf(caller.person, caller.key);
    key.jobs++;
    key.person.jobs++;
    key.items += items;
    key.person.items += items;
    this.items += items;
    return key;
  }

  private enqueue(entry: Entry): void {
    entry.wait.addEventListener('abort', () => this.expire(entry));
    this.scheduler.push(entry);
    this.queued++;
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

  /**
   * What one person has not over against its limits, and those limits: `jobs` of `perPersonMax`
   * entries, `items` of `perPersonItemsMax` (work that may queue only where it leaves the person's
   * own work room, e.g. shadow runs, asks first).
   */
  personLoad(personId: string): { jobs: number; items: number; maxJobs: number; maxItems: number } {
    const person = this.scheduler.persons.get(personId);
    return {
      jobs: person?.jobs ?? 0,
      items: person?.items ?? 0,
      maxJobs: this.opts.perPersonMax ?? this.opts.perKeyMax,
      maxItems: this.opts.perPersonItemsMax ?? this.opts.perKeyItemsMax ?? Infinity,
    };
  }

  /** Entries waiting, tasks running, keys and persons with work. */
  stats(): FairQueueStats {
    return { queued: this.queued, running: this.running, callers: this.scheduler.keyCount, persons: this.scheduler.persons.size };
  }

  /** Refuses new work and fails the waiting work; running tasks finish. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const shutDown = new ArbiterError('dependency_unavailable', 'the evaluation pool is shut down');
    for (const person of this.scheduler.ring) {
      for (const key of person.keys.values()) {
        for (let i = key.head; i < key.entries.length; i++) {
          const entry = key.entries[i];
          if (entry.gone) continue;
          entry.gone = true;
          entry.wait.settle();
          if (entry.kind === 'task') entry.reject(shutDown);
          else {
            entry.drop(entry.next, entry.total, shutDown);
            entry.next = entry.total;
            if (entry.running === 0) entry.finish();
          }
        }
      }
    }
    this.scheduler.clear();
    this.queued = 0;
    this.items = 0;
    this.waits.close();
  }

  /** An entry waited `maxWaitMs` without its first work starting. */
  private expire(entry: Entry): void {
    if (entry.gone) return;
    const key = entry.key;
    if (entry.kind === 'eval' && entry.total > 1 && key.running > 0 && !this.closed) {
      // Behind its own key's running work (e.g. the other messages of the same batch call), not
      // waiting for a thread: the caller is being served, so it waits on.
      entry.wait = this.waits.start();
      entry.wait.addEventListener('abort', () => this.expire(entry));
      return;
    }
    const err = new ArbiterError(
      'dependency_unavailable',
      `no evaluation thread was free within ${this.opts.maxWaitMs} ms; try again shortly`,
    );
    this.leave(entry);
    if (entry.kind === 'task') {
      this.over(key, 0);
      entry.reject(err);
    } else this.dropRest(entry, err);
    this.scheduler.forgetIfIdle(key);
  }

  /** Takes a waiting entry out of its key's line (it will not start again). */
  private leave(entry: Entry): void {
    entry.gone = true;
    entry.wait.settle();
    this.scheduler.unqueue(entry.key);
    this.queued--;
  }

  /** Drops the items of `job` not handed out; it is over once its running chunks are. */
  private dropRest(job: EvalEntry, err: ArbiterError): void {
    if (job.next < job.total) job.drop(job.next, job.total, err);
    job.next = job.total;
    if (job.running === 0) this.finishJob(job);
  }

  private finishJob(job: EvalEntry): void {
    this.over(job.key, job.total);
    job.finish();
  }

  /** An entry of `items` items is over: its counts are given back. */
  private over(key: Key, items: number): void {
    if (this.closed) return;
    key.jobs--;
    key.person.jobs--;
    key.items -= items;
    key.person.items -= items;
    this.items -= items;
  }

  /** Starts waiting work while slots are free, the next person in turn first; eval jobs' chunks go in shared tasks. */
  private pump(): void {
    while (this.running < this.slots && this.queued > 0 && !this.closed) {
      const person = this.scheduler.pick();
      const head = this.scheduler.peek(this.scheduler.nextKey(person, false));
      if (head.kind === 'task') {
        this.scheduler.nextKey(person);
        this.startTask(head);
        continue;
      }
      const handouts = assembleTask(
        this.scheduler,
        person,
        (p) => this.nextJob(p),
        (job, n) => this.cut(job, n),
        this.policy,
      );
      if (handouts.length > 0) this.startChunks(handouts);
    }
  }

  /** The eval job whose chunk `p` hands out next (its key's turn taken), dropping jobs whose caller has gone. */
  private nextJob(p: Person): EvalEntry | undefined {
    const now = this.now();
    while (p.queued > 0) {
      const key = this.scheduler.nextKey(p);
      const head = this.scheduler.peek(key);
      if (head.kind !== 'eval') return undefined;
      const stopped =
        head.deadline <= now ? new ArbiterError('timeout', 'the caller stopped waiting before this evaluation could start') : head.stop?.();
      if (stopped === undefined) return head;
      // Its caller has gone, or its answers could not be sent: nothing more of it runs.
      this.leave(head);
      this.dropRest(head, stopped);
      this.scheduler.forgetIfIdle(key);
    }
    return undefined;
  }

  /** Hands out the next `n` items of `job`; it leaves the waiting line with its last chunk. */
  private cut(job: EvalEntry, n: number): Chunk {
    const from = job.next;
    job.next = from + n;
    job.running++;
    job.key.running++;
    job.key.person.running++;
    job.wait.settle();
    if (job.next === job.total) this.leave(job);
    return { job, from, to: job.next };
  }

  private startChunks(handouts: Handout[]): void {
    this.running++;
    const done = new Array<boolean>(handouts.length).fill(false);
    const chunkDone = (index: number, ms: number) => {
      if (done[index]) return;
      done[index] = true;
      const { chunk, prepaid } = handouts[index];
      const job = chunk.job;
      const key = job.key;
      key.person.deficit -= ms - prepaid;
      if (ms > 0) learn(job, key, chunk.to - chunk.from, ms);
      job.running--;
      key.running--;
      key.person.running--;
      if (job.running === 0 && job.next === job.total) this.finishJob(job);
      this.scheduler.forgetIfIdle(key);
    };
    let run: Promise<void>;
    try {
      run = this.opts.runner!.run(
        handouts.map((h) => h.chunk),
        chunkDone,
      );
    } catch (err) {
      run = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const over = (failure: unknown) => {
      handouts.forEach(({ chunk }, i) => {
        if (done[i]) return;
        // Made only when a chunk was left unanswered: an error (and its stack) per task would be a cost of every task.
        const err =
          failure instanceof ArbiterError ? failure : new ArbiterError('internal', 'evaluation failed: the task left items unanswered');
        chunk.job.drop(chunk.from, chunk.to, err);
        chunkDone(i, 0);
      });
      this.running--;
      this.pump();
    };
    void run.then(() => over(undefined), over);
  }

  private startTask(entry: TaskEntry): void {
    this.leave(entry);
    const key = entry.key;
    this.running++;
    key.running++;
    key.person.running++;
    const started = this.now();
    let task: Promise<unknown>;
    try {
      task = entry.start();
    } catch (err) {
      task = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    void task.then(entry.resolve, entry.reject).finally(() => {
      this.running--;
      key.running--;
      key.person.running--;
      key.person.deficit -= this.now() - started;
      this.over(key, 0);
      this.scheduler.forgetIfIdle(key);
      this.pump();
    });
  }
}
