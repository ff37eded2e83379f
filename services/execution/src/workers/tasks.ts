import type { ExplainResponse, FlowNode, OperatorsResponse, RunFlags, RunnableRollout, ValidateResponse } from '@arbiter/contracts';
import type { FlowProblem } from '@arbiter/flow';
import type { TableSource } from '@arbiter/run/caches';

/** `workerData` each pool worker starts with: its cache size and the limits it applies to every run. */
export interface WorkerConfig {
  cacheSize: number;
  /** UTF-8 bytes of one evaluation's trace (longer traces are cut, `capTrace`). */
  maxTraceBytes: number;
  /** Nesting depth of an item's data (deeper: `validation_failed`). */
  maxDataDepth: number;
}

/**
 * Where a chunk's policy comes from: an unsaved rule text (`text`, found by its hash or compiled
 * once per worker), or a stored record (`stored`: looked up by the registry's hash, parsed only on
 * a miss; its data checked against `schema` first).
 */
export type PolicySource =
  | { kind: 'text'; rule: string }
  | { kind: 'stored'; hash: string; rule: string; schema: { hash: string; schema: Record<string, unknown> } | null };

/**
 * A table node of a flow, evaluated in a worker like a policy node (`@arbiter/run/caches`
 * `tableSource`). Its chunks answer `value` replies: the node's `TableRun`.
 */
export type { TableSource };

/** What a chunk runs: a policy, or a table node of a flow. */
export type TaskSource = PolicySource | TableSource;

/**
 * How a chunk's answers come back: `json`, each answer's raw JSON (the body its single request
 * answers, keys in the contract's order, `extra` fields such as a stored run's `policyId` last),
 * ready to be forwarded without decoding; `value`, the answer object (flow nodes, whose results the
 * main thread walks).
 */
export type ReplyForm = { kind: 'json'; extra?: Record<string, unknown> } | { kind: 'value' };

/** `count` consecutive items of a task, run alike. */
export interface TaskChunk {
  /** Index of its policy or table in the task's `sources` (chunks of one rule share it: the text crosses once). */
  source: number;
  trace: boolean;
  /** UTF-8 bytes each item's trace may take, when below the service's cap (a batch item's share). */
  traceBytes?: number;
  /** The run's flags (contracts `RunFlags`), as its caller set them. */
  flags?: RunFlags;
  /** The evaluation clock (ISO 8601); the current time when absent. */
  now?: string;
  /** Each item's clock instead, `count` of them (a replay of decisions made at different times). */
  nows?: string[];
  /** Steps each item may take in all, and (flow nodes) those its run already took. */
  budgetLimit: number;
  budgetUsed: number;
  reply: ReplyForm;
  count: number;
  /** When its caller stops waiting (epoch ms, the clock threads share): an item not started by then answers `timeout`, unrun. */
  deadline?: number;
  /**
   * A replay of recorded decisions (impact analysis): a `"***"` value in the data is a masked one,
   * and an answer whose run read one carries `"maskedRead": true`.
   */
  replay?: boolean;
}

/**
 * A worker task of evaluations: the chunks of one or more jobs, their items' JSON texts back to
 * back in `data` (transferred, never copied twice), `ends[i]` the byte offset where item `i` ends.
 * Each item has its own step budget, error and deadline (`itemTimeoutMs` from when it starts).
 */
export interface EvalTask {
  op: 'eval';
  /** Names the task in its progress messages. */
  id: number;
  itemTimeoutMs: number;
  /** The policies and table nodes the chunks run, each once. */
  sources: TaskSource[];
  chunks: TaskChunk[];
  data: Uint8Array;
  ends: number[];
}

/**
 * A flow definition to check (`validateDefinition`) in a worker: the compile of its table nodes is
 * the costly part, so it never runs on the main thread. `nodes` keeps the definition's order (its
 * problems come in node order); a table node is the index of its source in `tables` (the same
 * source its runs use, so the worker that checks it caches it for them).
 */
export interface ValidateFlowTask {
  op: 'validateFlow';
  start: string;
  nodes: Array<[id: string, node: FlowNode | number]>;
  tables: TableSource[];
}

/**
 * Which items of a run get a rollout's new version, when the rollout picks by a data path: each
 * item's data must be parsed for that, which a large request must not cost the main thread. The
 * items' texts back to back in `data`, item `i` ending at byte `ends[i]`.
 */
export interface RolloutChoicesTask {
  op: 'rolloutChoices';
  rollout: RunnableRollout;
  data: Uint8Array;
  ends: number[];
}

/** A single task of the other kinds. */
export type WorkerTask =
  { op: 'validate'; rule: string } | { op: 'explain'; rule: string } | { op: 'operators' } | ValidateFlowTask | RolloutChoicesTask;

/** The result type of each single task kind. */
export interface WorkerTaskResult {
  validate: ValidateResponse;
  explain: ExplainResponse;
  operators: OperatorsResponse;
  validateFlow: FlowProblem[];
  /** Per item, whether it gets the new version. */
  rolloutChoices: boolean[];
}

/** A failure of one item, as it crosses the thread boundary (rebuilt as an `ArbiterError`). */
export interface ItemFailure {
  code: 'timeout' | 'internal' | 'dependency_unavailable' | 'validation_failed';
  message: string;
}

/** Bits of {@link ChunkResult.flags}: the item was answered; its result was `true`; the answer has an `error`; it hit the step budget. */
export const ITEM_OK = 1;
export const ITEM_TRUE = 2;
export const ITEM_ERROR = 4;
export const ITEM_BUDGET = 8;

/** What a worker answers for one chunk: per item its worker time, steps and flags, and the answers. */
export interface ChunkResult {
  /** sha256 of the rule text (the cache and index key), and whether this chunk compiled it. */
  hash: string;
  compiled: boolean;
  /** The worker thread that ran it. */
  threadId: number;
  ms: number[];
  steps: number[];
  flags: number[];
  /** Items that failed (not answered), by index in the chunk. */
  failures?: Record<number, ItemFailure>;
  /** `json` replies: the answers back to back, `jsonEnds[i]` where item `i`'s ends (empty for a failure). */
  json?: Uint8Array;
  jsonEnds?: number[];
  /** `value` replies: the answers (undefined for a failure). */
  values?: unknown[];
}

/**
 * Results of chunks `from`, `from + 1`, … of a task: posted by the worker (with `task` set) as
 * soon as chunks are done when the task runs long, so their callers need not wait for the rest;
 * the task's own result carries the chunks not posted.
 */
export interface EvalProgress {
  task?: number;
  from: number;
  chunks: ChunkResult[];
}
