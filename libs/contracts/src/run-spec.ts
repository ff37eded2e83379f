import type { EvalSubject } from './exec.js';
import type { Principal } from './principal.js';
import { runFlagsOf, type RunFlags } from './run-flags.js';

/**
 * The defaults of every run, decided here once: the run layer (`@arbiter/run` `resolveRun`) applies
 * them, and every configuration variable that sets one of them takes its default from here. Kept in
 * contracts so that services which never evaluate (the gateway, the mcp service) read the same
 * numbers without depending on the rule language. docs/design/run-layer.md tells why each is what it is.
 */
export const RUN_DEFAULTS = {
  /** A run builds its human-readable trace unless told not to. */
  trace: true,
  /** Steps a run without a trace may take (`EXEC_STEP_BUDGET`). */
  stepBudget: 1_000_000,
  /** Steps a run with a trace may take (`EXEC_TRACE_STEP_BUDGET`): a traced step writes a line. */
  tracedStepBudget: 10_000,
  /** UTF-8 bytes of one run's trace; longer traces are cut (`MAX_TRACE_BYTES`). */
  maxTraceBytes: 262_144,
  /**
   * UTF-8 bytes the traces of one batch call share (`RUN_BATCH_TRACE_BYTES`): each item's trace is
   * cut at its share, so a traced batch answer stays bounded whatever its size (16 items or fewer
   * keep whole traces). A share is never below {@link RUN_DEFAULTS}.minItemTraceBytes.
   */
  batchTraceBytes: 4_194_304,
  /** A run says why its result came out (`reasons`) only when asked. */
  reasons: false,
  /**
   * UTF-8 bytes of one answer's reasons (their JSON); past it the deepest and last entries are left
   * out and `truncated: true` is added (LANGUAGE.md §10.4).
   */
  maxReasonsBytes: 65_536,
  /** The smallest share of a batch's trace bytes one item gets. */
  minItemTraceBytes: 4096,
  /** Nesting depth of a run's data in the execution service (`MAX_DATA_DEPTH`). */
  maxDataDepth: 64,
  /** How long one item may run once a worker starts it (`EXEC_TASK_TIMEOUT_MS`). */
  itemTimeoutMs: 1000,
  /** Longest wait for a worker thread in the execution service (`EXEC_QUEUE_WAIT_MS`). */
  queueWaitMs: 800,
  /**
   * How long the gateway waits for an evaluation (`ENGINE_TIMEOUT_MS`): longer than a queue wait
   * plus an item's run, so the execution service answers `timeout` or `dependency_unavailable`
   * itself before its caller gives up.
   */
  callerTimeoutMs: 2000,
} as const;

/**
 * One run as every door asks for it: what runs (an unsaved `rule`, or a stored record `id`, named
 * by `subject`), for whom, and how. Everything optional has its default in {@link RUN_DEFAULTS}.
 * The `exec.eval` wire group (`EvalGroup`) is this spec framed: the principal and rule by index,
 * the trace spelled out.
 */
export interface RunSpec {
  /** What runs: `exec.run` (the unsaved `rule`) or a stored run (`exec.stored.{policy,flow}.{base,record}` of `id`). */
  subject: EvalSubject;
  /** The caller; the execution service re-checks its `view` right. */
  principal: Principal;
  /** The rule text (`exec.run`). */
  rule?: string;
  /** The base or record id (stored runs). */
  id?: string;
  /** Build the human-readable trace; default {@link RUN_DEFAULTS}.trace. */
  trace?: boolean;
  /** The evaluation clock (ISO 8601 with offset); the current time when absent. */
  now?: string;
  /** Each item's evaluation clock instead (a replay of decisions made at different times): one per item. */
  nows?: readonly string[];
  /**
   * A stored run by base id: run the version that was runnable at this instant (ISO 8601 with
   * offset; docs/design/timeline.md), evaluated at it unless `now` is given too.
   */
  asOf?: string;
  /** The HTTP request id, forwarded so logs can be followed across services. */
  requestId?: string;
  /** A replay of recorded decisions (impact analysis): low priority, not counted or recorded, masked reads reported. */
  replay?: boolean;
  /** How long the caller waits for the answers; work not started by then is dropped. */
  timeoutMs?: number;
  /** UTF-8 bytes each item's trace may take, below the execution service's own cap: a batch item's share ({@link itemTraceBytes}). */
  traceBytes?: number;
  /** What the run's answer adds or how it evaluates ({@link RunFlags}), carried unchanged to the run layer. */
  flags?: RunFlags;
}

/** What a door passes along with a run it forwards: the parts of a {@link RunSpec} that are not what runs. */
export type RunOptions = Pick<RunSpec, 'trace' | 'requestId' | 'traceBytes' | 'flags' | 'asOf' | 'now'>;

/** Each item's share of a batch call's trace bytes: `batchTraceBytes / items`, at least {@link RUN_DEFAULTS}.minItemTraceBytes. */
export function itemTraceBytes(items: number, batchTraceBytes: number = RUN_DEFAULTS.batchTraceBytes): number {
  return Math.max(RUN_DEFAULTS.minItemTraceBytes, Math.floor(batchTraceBytes / Math.max(1, items)));
}

/** Whether a run builds its trace: the one place the trace default is applied. */
export function tracesOf(spec: { readonly trace?: boolean | undefined } | undefined): boolean {
  return spec?.trace ?? RUN_DEFAULTS.trace;
}

/**
 * The options a door forwards for a run body it was sent (`trace` and the answer's flags), under
 * `requestId`: one reading of the body for every door that runs an unsaved rule.
 */
export function runOptionsOf(
  requestId: string,
  body: Readonly<{ trace?: boolean | undefined }> & Parameters<typeof runFlagsOf>[0],
): Pick<RunOptions, 'requestId' | 'trace' | 'flags'> {
  const flags = runFlagsOf(body);
  return { requestId, trace: tracesOf(body), ...(flags !== undefined ? { flags } : {}) };
}
