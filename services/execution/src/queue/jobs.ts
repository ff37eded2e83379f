import type { ArbiterError } from '@arbiter/contracts';
import type { DeadlineSignal } from '../deadlines.js';
import type { Key } from './callers.js';

/** Who a job is queued for: its API key (or, for a bearer caller, its user) and the person behind it. */
export interface CallerId {
  /** The key's own queue and limits (`key:<apiKeyId>`, or `user:<org>:<user>` for a bearer caller). */
  key: string;
  /** The person whose share it uses: the key's owner, or the bearer's user (`<org>:<user>`). */
  person: string;
}

interface EntryBase {
  readonly key: Key;
  /** Its wait limit until its first work starts. */
  wait: DeadlineSignal;
  /** Set when it left the queue (its wait expired, its deadline passed, the queue closed, or it is over). */
  gone: boolean;
}

/** Work run on its own as one slot's task (validate, explain, operators): `start` hands it to a worker. */
export interface TaskEntry extends EntryBase {
  readonly kind: 'task';
  readonly start: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * An evaluation job: `total` items run alike (one rule or record, one caller), handed out a chunk
 * at a time; chunks of several jobs, of several callers, make one worker task (`assembly.ts`).
 * The queue never reads `spec`; the runner does. Items are settled by the runner as chunks finish,
 * or through `drop` for items that never run (their caller's deadline passed, no thread was free
 * in time, the queue closed); `finish` is called once, when every item is settled one way or the other.
 */
export interface EvalEntry<S = unknown> extends EntryBase {
  readonly kind: 'eval';
  readonly spec: S;
  readonly total: number;
  /** The first item not yet handed out. */
  next: number;
  /** Chunks handed out and not done. */
  running: number;
  /** When its caller stops waiting (queue clock); items not started by then are dropped. */
  readonly deadline: number;
  /** Worker time (ms) of one of its items, from its last chunk; 0 until one is done. */
  perItemMs: number;
  readonly drop: (from: number, to: number, err: ArbiterError) => void;
  /** Asked before each chunk is handed out: an error stops the job (its items not handed out are dropped with it). */
  readonly stop?: () => ArbiterError | undefined;
  readonly finish: () => void;
}

/** What waits in a key's queue. */
export type Entry = TaskEntry | EvalEntry;

/** Items `from`…`to − 1` of an eval job, handed out as part of one worker task. */
export interface Chunk<S = unknown> {
  readonly job: EvalEntry<S>;
  readonly from: number;
  readonly to: number;
}

/**
 * Runs one worker task made of `chunks`: calls `done(i, ms)` when chunk `i` is over (its items
 * settled, `ms` the worker time they took); resolves when the task is over. A chunk not reported
 * done by then has its items dropped with the promise's error (or `internal`).
 */
export interface ChunkRunner<S = unknown> {
  run(chunks: Array<Chunk<S>>, done: (index: number, ms: number) => void): Promise<void>;
}
