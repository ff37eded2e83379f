import type { ExplainResponse, OperatorsResponse, RunResponse, ValidateResponse } from '@arbiter/contracts';

/**
 * A run's step budget as it travels to a worker (LANGUAGE.md §8.1): `limit` steps in all, `used`
 * already taken (by earlier nodes of the same flow run).
 */
export interface StepBudgetState {
  limit: number;
  used: number;
}

/** A message from the main thread to a pool worker. */
export type EngineTask =
  | { op: 'run'; rule: string; data: Record<string, unknown>; trace: boolean; now?: string; budget: StepBudgetState }
  | StoredRunTask
  | { op: 'validate'; rule: string }
  | { op: 'explain'; rule: string }
  | { op: 'operators' };

/**
 * One rule on many data objects (a chunk of an `exec.run.many` message): the worker compiles or
 * finds the rule once, then evaluates each item in order with its own step budget of `budgetLimit`
 * steps and its own error; an item that took longer than `itemTimeoutMs` answers `timeout`.
 */
export interface RunManyTask {
  op: 'runMany';
  rule: string;
  items: Array<Record<string, unknown>>;
  trace: boolean;
  now?: string;
  budgetLimit: number;
  itemTimeoutMs: number;
}

/** One item's answer of a {@link RunManyTask}, and the worker time (ms) it took. */
export type RunManyItem = { ok: true; response: RunResponse; steps: number; ms: number } | { ok: false; error: ItemFailure; ms: number };

/** What a worker returns for a {@link RunManyTask}. */
export interface RunManyResult {
  hash: string;
  cache: CacheUse;
  threadId: number;
  results: RunManyItem[];
}

/** A single task of any kind (what a {@link BatchTask} carries). */
export type SingleTask = EngineTask;

/**
 * Several tasks handed to one worker as one piscina task (the pool's coalescing): the worker runs
 * them in order, each with its own deadline of `itemTimeoutMs` counted from when it starts it, and
 * answers each one's result or error.
 */
export interface BatchTask {
  op: 'batch';
  /** Names the batch in its progress messages. */
  id: number;
  tasks: EngineTask[];
  itemTimeoutMs: number;
}

/** A failure of one batch item, as it crosses the thread boundary (rebuilt as an `ArbiterError`). */
export interface ItemFailure {
  code: 'timeout' | 'internal' | 'dependency_unavailable';
  message: string;
}

/** One batch item's answer and the worker time (ms) it took, which the fair queue charges its caller. */
export type BatchItemResult = { ok: true; value: unknown; ms: number } | { ok: false; error: ItemFailure; ms: number };

/**
 * Answers of a batch's items `from`, `from + 1`, …: posted by the worker (`parentPort`, with
 * `batch` set) as soon as items are done when a batch runs long, so their callers need not wait
 * for the rest; the task's own result carries the items not posted.
 */
export interface BatchProgress {
  batch?: number;
  from: number;
  results: BatchItemResult[];
}

/**
 * A run of a stored policy: the worker looks its compiled policy up by `hash` (the sha256 of
 * `rule` computed by the registry) and only parses `rule` on a miss; when `schema` is given the
 * data is validated against it first (validators are cached by `schema.hash`).
 */
export interface StoredRunTask {
  op: 'runStored';
  hash: string;
  rule: string;
  schema: { hash: string; schema: Record<string, unknown> } | null;
  data: Record<string, unknown>;
  trace: boolean;
  budget: StepBudgetState;
}

/** Whether a worker compiled the rule for this task or found it in its cache. */
export type CacheUse = 'compile' | 'hit';

/** What a worker returns for a `run` task. */
export interface RunOutcome {
  response: RunResponse;
  /** sha256 (hex) of the rule text: the cache and index key. */
  hash: string;
  cache: CacheUse;
  /** The worker thread that ran the task. */
  threadId: number;
  /** The budget's `used` after the evaluation (as it came when nothing was evaluated). */
  steps: number;
}

/** The result type of each task kind. */
export interface EngineTaskResult {
  run: RunOutcome;
  runStored: RunOutcome;
  validate: ValidateResponse;
  explain: ExplainResponse;
  operators: OperatorsResponse;
}

/** `workerData` each pool worker starts with. */
export interface WorkerConfig {
  cacheSize: number;
}
