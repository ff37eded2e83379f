import type { ArbiterError } from '@arbiter/contracts';
import type { DeadlineSignal } from '../workers/deadlines.js';

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

/** One API key's (or bearer user's) queue: its entries in order, and what it has in progress. */
export interface Key {
  readonly id: string;
  readonly person: Person;
  /** FIFO of entries (`head` is the next); entries gone are skipped. */
  entries: Entry[];
  head: number;
  /** Live entries waiting (an eval job with items not handed out counts until its last chunk goes). */
  queued: number;
  /** Tasks and chunks running. */
  running: number;
  /** Entries not over (waiting or running): what `perKeyMax` bounds. */
  jobs: number;
  /** Items of its eval jobs not over: what `perKeyItemsMax` bounds. */
  items: number;
  /** Whether it is in its person's ring (while it has entries waiting). */
  inRing: boolean;
}

/**
 * A person (a key's owner, or a bearer's user): the unit of fair shares. Persons take turns by
 * deficit round robin of worker time; within a person, its keys take turns in order.
 */
export interface Person {
  readonly id: string;
  readonly keys: Map<string, Key>;
  /** Its keys with entries waiting, in turn order. */
  ring: Key[];
  nextKey: number;
  queued: number;
  running: number;
  jobs: number;
  items: number;
  /** Worker time (ms) it may still use before skipping turns. */
  deficit: number;
  /** Whether it is in the queue's ring (while it has work waiting or running). */
  inRing: boolean;
  /** Worker time (ms) of one of its items (moving average over its chunks); 0 until one is done. */
  perItemMs: number;
}
