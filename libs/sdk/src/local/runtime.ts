import {
  ArbiterError,
  ByBaseQuery,
  ErrorCode,
  isArbiterError,
  runFlagsOf,
  tracesOf,
  type RunFlags,
  type RunnableQuery,
  type RunnableSelection,
  type RunnableSnapshot,
  type RunReport,
  type RunReportReply,
  type StoredFlowRunResponse,
  type StoredPolicyRunResponse,
} from '@arbiter/contracts';
import { rolloutChoosesNew } from '@arbiter/run';
import { sleep } from '../http.js';
import type { ServerSentEvent } from '../streams.js';
import { decodeCache, encodeCache, fileCache, type LocalCacheStore } from './cache.js';
import { runFlowDefinition, runPolicyEntry } from './evaluate.js';
import { checkData, isAcceptedData } from './limits.js';
import { Reporter, unref, type ReportStats } from './reporter.js';
import { RunnableState, type PolicyEntry } from './state.js';

/**
 * What the runtime needs of its client (an `Arbiter`, whose `runnable` is this shape): the gateway's
 * address and the runnable endpoints. Declared here so the client and the runtime it loads on demand
 * do not import each other.
 */
export interface RuntimeClient {
  readonly baseUrl: string;
  readonly runnable: {
    snapshot(query: Partial<RunnableQuery>, opts?: { signal?: AbortSignal }): Promise<RunnableSnapshot>;
    changes(since: number, opts?: { heartbeatMs?: number; signal?: AbortSignal }): AsyncIterable<ServerSentEvent>;
    report(report: RunReport): Promise<RunReportReply>;
  };
}

/** Options of {@link Arbiter.local}. Without `bases`, `group` or `all`, every base the caller sees is loaded (`all`). */
export interface LocalOptions {
  /** Base ids (policies or flows) to hold: any live base of the org, as runs may name them (at most 200). */
  bases?: string[];
  /** A group: its members the caller sees. */
  group?: string;
  /** Every base the caller sees in lists (published ones, and never-published ones it created). */
  all?: boolean;
  /** A file (Node only) the state is saved to after each change, and answered from on a cold start while the service is unreachable. */
  cacheFile?: string;
  /** A store of your own for that (e.g. in a browser); `cacheFile` wins when both are given. */
  cache?: LocalCacheStore;
  /** How old the last confirmation that the held revision is current may get before the runtime counts as stale. */
  maxStalenessMs?: number;
  /** Past `maxStalenessMs`, answer runs with an error (503 `dependency_unavailable`) instead of from the stale state. */
  failClosed?: boolean;
  /** How often the service confirms the revision while nothing changes (default 5000 ms, or a third of `maxStalenessMs` when smaller). */
  heartbeatMs?: number;
  /** How often run counts are reported (default 1000 ms). */
  reportIntervalMs?: number;
  /** Reports kept while the service cannot be reached; beyond it the oldest are dropped (default 100 reports). */
  maxPendingReports?: number;
  /** Told when the sync stops for good: the key was revoked or expired, or lost its `view` right, or the group was deleted. */
  onSyncError?: (err: ArbiterError) => void;
  /** Told after each change is swapped in, with the new revision. */
  onUpdate?: (revision: number) => void;
}

/** What a runtime holds and how current it is. */
export interface LocalStats {
  /** The org revision held. */
  revision: number;
  /** Where the held state came from: the service, or the cache (cold start while the service was unreachable). */
  source: 'service' | 'cache';
  /** Bases held, by kind, and policy records (current and pinned). */
  policies: number;
  flows: number;
  records: number;
  /** Named bases the service does not run (unknown, deleted, another org's). */
  missing: string[];
  /** Whether the change stream is open. */
  connected: boolean;
  /** When the service last confirmed the held revision current (ISO 8601), null if never. */
  confirmedAt: string | null;
  /** Milliseconds since then. */
  stalenessMs: number;
  /** Past `maxStalenessMs`. */
  stale: boolean;
  /** Whether runs answer an error while stale. */
  failClosed: boolean;
  /** Whether the sync is still running (false once stopped by an error, or closed). */
  syncing: boolean;
  /** Why the sync stopped, or the last failure it retries after. */
  syncError: ArbiterError | null;
  /** Local runs answered (policies and flows). */
  runs: number;
  reports: ReportStats;
}

/**
 * A local run's switches: the trace and the reasons as for the service; `now` (ISO 8601 with an
 * offset) sets the evaluation clock and picks the version in effect at it, as `?now=` does;
 * `asOf` (ISO 8601 with an offset) runs the version runnable at that instant, evaluated at it unless
 * `now` is given too, as `?asOf=` does (docs/design/timeline.md). An as-of run reaching back before
 * what the runtime holds throws `not_found` naming the first version it holds: ask the service.
 */
export type LocalRunOptions = { trace?: boolean; now?: string; asOf?: string } & RunFlags;

/** A run's clock in epoch ms: its `now`, else the current time. */
function clockOf(opts: LocalRunOptions | undefined): number {
  if (opts?.now === undefined) return Date.now();
  const at = Date.parse(opts.now);
  if (Number.isNaN(at)) throw new ArbiterError('validation_failed', `\`now\` must be an ISO 8601 instant: \`${opts.now}\``);
  return at;
}

/** A run's `asOf` in epoch ms, checked as the service checks `?asOf=`; undefined without one. */
function asOfOf(opts: LocalRunOptions | undefined): number | undefined {
  const asOf = opts?.asOf;
  if (asOf === undefined) return undefined;
  if (!ByBaseQuery.shape.asOf.safeParse(asOf).success) {
    throw new ArbiterError('validation_failed', `\`asOf\` must be an ISO 8601 instant with an offset: \`${String(asOf)}\``);
  }
  return Date.parse(asOf);
}

/** Statuses after which the sync stops (the answer would not change by asking again). */
const FATAL = new Set([400, 401, 403, 404]);
const MAX_RECONNECT_MS = 30_000;
/** How long `close()` waits for the last reports. */
const CLOSE_REPORT_WAIT_MS = 5000;

/**
 * Runs stored policies and flows in-process, answering exactly as `POST /run/policy/{baseId}` and
 * `POST /run/flow/{baseId}` would for the same data, and kept current by the service's change
 * stream. Made by {@link Arbiter.local}.
 */
export class LocalRuntime {
  private state: RunnableState;
  private source: 'service' | 'cache' = 'service';
  private confirmedAt: number | null = null;
  private expired = false;
  private expiry: ReturnType<typeof setTimeout> | undefined;
  private connected = false;
  private syncing = true;
  private closed = false;
  private syncError: ArbiterError | null = null;
  /** The last base run and its entry in the state it was found in: a loop over one base skips the map. */
  private hotState: RunnableState | null = null;
  private hotBaseId = '';
  private hotEntry: PolicyEntry | undefined;
  private readonly stop = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private saving: Promise<void> = Promise.resolve();
  private readonly maxStalenessMs: number;
  private readonly failClosed: boolean;
  private readonly heartbeatMs: number;

  /** @internal Use {@link Arbiter.local}. */
  constructor(
    private readonly client: RuntimeClient,
    private readonly selection: RunnableSelection,
    private readonly options: LocalOptions,
    private readonly reporter: Reporter,
    private readonly cache: LocalCacheStore | null,
    private readonly cacheKey: string,
  ) {
    this.maxStalenessMs = options.maxStalenessMs ?? Number.POSITIVE_INFINITY;
    this.failClosed = options.failClosed === true;
    this.heartbeatMs = Math.min(60_000, Math.max(500, options.heartbeatMs ?? Math.min(5000, Math.floor(this.maxStalenessMs / 3))));
    this.state = RunnableState.from(
      {
        revision: 0,
        full: true,
        bases: [],
        removed: [],
        missing: [],
        limits: { stepBudget: 1, traceStepBudget: 1, maxTraceBytes: 1 },
      },
      null,
      reporter,
    );
  }

  /** The org revision held. */
  get revision(): number {
    return this.state.revision;
  }

  /**
   * Runs the current runnable policy of a base on `data` (trace on unless `trace: false`; the run's
   * flags as the service takes them: `reasons: true` adds `reasons`, docs/LANGUAGE.md §10.4). Engine
   * outcomes are results (`error`, `errorCode`), as from the service. Throws an {@link ArbiterError}
   * where the service answers a problem: `not_found` (a base not held: unknown, deleted, another
   * org's, not chosen), `validation_failed` (data not an object, or holding an unpaired UTF-16
   * surrogate), and
   * `dependency_unavailable` when stale with `failClosed`.
   */
  run(baseId: string, data: Record<string, unknown>, opts?: LocalRunOptions): StoredPolicyRunResponse {
    const state = this.state;
    let entry: PolicyEntry | undefined;
    // A base in a staged rollout: the version its data chooses, as the service chooses (docs/design/canary.md); an as-of run picks by its instant.
    const rollout = state.rollouts.size === 0 || opts?.asOf !== undefined ? undefined : state.rollouts.get(baseId);
    if (rollout !== undefined) entry = rolloutChoosesNew(rollout.split, data) ? rollout.next : rollout.previous;
    else if (this.hotState === state && this.hotBaseId === baseId) entry = this.hotEntry;
    else {
      entry = state.policies.get(baseId);
      if (entry !== undefined) {
        this.hotState = state;
        this.hotBaseId = baseId;
        this.hotEntry = entry;
      }
    }
    // INVARIANT: the fast path (trace off, no schema, compiled, not stale, data checkData accepts)
    // loads `this.state` once and allocates only the answer; it answers exactly as the general path
    // below (bench:sdk).
    if (
      entry !== undefined &&
      entry.plain &&
      !this.expired &&
      opts !== undefined &&
      opts.trace === false &&
      runFlagsOf(opts) === undefined &&
      opts.now === undefined &&
      opts.asOf === undefined &&
      isAcceptedData(data)
    ) {
      const r = entry.policy!.evaluate(data, state.runs.untraced.options);
      if (r.error === undefined) {
        entry.counter.addBoolean(r.result);
        return {
          result: r.result,
          trace: r.trace,
          outcomes: r.outcomes,
          policyId: entry.policyId,
          baseId: entry.baseId,
          version: entry.version,
        };
      }
    }
    if (this.expired && this.failClosed) throw this.staleError();
    const asOf = asOfOf(opts);
    if (asOf !== undefined || entry === undefined || opts?.now !== undefined) {
      // An as-of run, a base on a timeline (docs/design/timeline.md), or a run at its own clock: picked by that instant.
      const clock = clockOf(opts);
      const picked = asOf !== undefined ? state.policyAsOf(baseId, asOf) : state.policyAt(baseId, clock);
      if (typeof picked === 'string') throw new ArbiterError('not_found', picked);
      entry = picked;
    }
    if (entry === undefined) throw new ArbiterError('not_found', `policy \`${baseId}\` not found`);
    checkData(data);
    const answer = runPolicyEntry(entry, data, state.runOf(tracesOf(opts), runFlagsOf(opts), opts?.now ?? opts?.asOf));
    entry.counter.add(answer.result, answer.error !== undefined);
    return answer;
  }

  /** Runs the current runnable flow of a base on `data`, its policy nodes resolved in the same held state. Throws as {@link run}. */
  async runFlow(baseId: string, data: Record<string, unknown>, opts?: LocalRunOptions): Promise<StoredFlowRunResponse> {
    if (this.expired && this.failClosed) throw this.staleError();
    const state = this.state;
    const asOf = asOfOf(opts);
    const clock = clockOf(opts);
    // A base in a staged rollout: the version its data chooses, as the service chooses (docs/design/canary.md); else the one in
    // effect at the run's clock, or runnable at its `asOf` (then its base-following nodes pick at that instant too).
    const rollout =
      state.flowRollouts.size === 0 || opts?.now !== undefined || asOf !== undefined ? undefined : state.flowRollouts.get(baseId);
    const flow =
      rollout !== undefined
        ? rolloutChoosesNew(rollout.split, data)
          ? rollout.next
          : rollout.previous
        : asOf !== undefined
          ? state.flowAsOf(baseId, asOf)
          : state.flowAt(baseId, clock);
    if (typeof flow === 'string') throw new ArbiterError('not_found', flow);
    if (flow === undefined) throw new ArbiterError('not_found', `flow \`${baseId}\` not found`);
    checkData(data);
    const r = await runFlowDefinition(
      state,
      flow.record.definition,
      data,
      tracesOf(opts),
      runFlagsOf(opts),
      opts?.now ?? opts?.asOf,
      asOf !== undefined ? { asOf } : { at: clock },
    );
    flow.counter.add(r.result, r.error !== undefined);
    const ids = { flowId: flow.record.flowId, baseId: flow.record.baseId, version: flow.record.version };
    if (r.error === undefined) return { result: r.result, path: r.path, nodes: r.nodes, ...ids };
    return {
      result: r.result,
      path: r.path,
      nodes: r.nodes,
      error: r.error,
      ...(r.errorCode !== undefined ? { errorCode: r.errorCode } : {}),
      ...ids,
    };
  }

  /** What is held and how current it is. */
  stats(): LocalStats {
    const state = this.state;
    const reports = this.reporter.stats();
    return {
      revision: state.revision,
      source: this.source,
      policies: state.policies.size,
      flows: state.flows.size,
      records: state.records.size,
      missing: [...state.missing],
      connected: this.connected,
      confirmedAt: this.confirmedAt === null ? null : new Date(this.confirmedAt).toISOString(),
      stalenessMs: this.confirmedAt === null ? Number.POSITIVE_INFINITY : Date.now() - this.confirmedAt,
      stale: this.expired,
      failClosed: this.failClosed,
      syncing: this.syncing,
      syncError: this.syncError,
      runs: reports.countedRuns,
      reports,
    };
  }

  /** Stops syncing, sends the last run counts (waiting up to 5 s) and saves the cache. Runs answered after this still use the last state. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.syncing = false;
    this.connected = false;
    this.stop.abort(new ArbiterError('dependency_unavailable', 'the local runtime was closed'));
    clearTimeout(this.expiry);
    await this.loop;
    await this.reporter.close(CLOSE_REPORT_WAIT_MS);
    this.save();
    await this.saving;
  }

  /** @internal Loads the state (from the service, else from the cache) and starts the sync. */
  async start(): Promise<void> {
    const cached = this.cache === null ? null : decodeCache(this.cacheKey, await this.cache.load().catch(() => null));
    try {
      this.apply(await this.client.runnable.snapshot(this.selection, { signal: this.stop.signal }), true);
    } catch (err) {
      if (cached === null || !isArbiterError(err) || FATAL.has(err.status)) {
        await this.reporter.close(0);
        throw err;
      }
      this.apply(cached.snapshot, false, cached.confirmedAt);
      this.source = 'cache';
      this.confirm(cached.confirmedAt);
      this.syncError = err;
    }
    this.loop = this.follow();
  }

  /** Follows the change stream until closed or stopped: each new revision is fetched (`since` the one held) and swapped in. */
  private async follow(): Promise<void> {
    let delay = 0;
    while (!this.closed && this.syncing) {
      try {
        for await (const event of this.client.runnable.changes(this.state.revision, {
          heartbeatMs: this.heartbeatMs,
          signal: this.stop.signal,
        })) {
          this.connected = true;
          delay = 0;
          if (event.event === 'error') throw problemOfEvent(event.data);
          if (event.event !== 'revision' && event.event !== 'ping') continue;
          const { revision } = JSON.parse(event.data) as { revision: number };
          if (revision > this.state.revision) await this.refresh();
          else this.confirm();
        }
      } catch (err) {
        if (this.closed) break;
        const failure = isArbiterError(err)
          ? err
          : new ArbiterError('dependency_unavailable', `the change stream broke: ${(err as Error).message}`, undefined, { cause: err });
        if (FATAL.has(failure.status)) {
          this.halt(failure);
          break;
        }
        this.syncError = failure;
      }
      this.connected = false;
      delay = delay === 0 ? 250 : Math.min(MAX_RECONNECT_MS, delay * 2);
      await sleep(delay, this.stop.signal).catch(() => undefined);
    }
    this.connected = false;
  }

  /** Fetches what changed since the held revision and swaps it in. */
  private async refresh(): Promise<void> {
    const snapshot = await this.client.runnable.snapshot({ ...this.selection, since: this.state.revision }, { signal: this.stop.signal });
    if (this.closed) return;
    this.apply(snapshot, true);
    this.syncError = null;
  }

  /** Swaps in the state `snapshot` describes; `current`: it came from the service just now (confirmed, saved to the cache). */
  private apply(snapshot: RunnableSnapshot, current: boolean, inEffectAt = Date.now()): void {
    if (!snapshot.full && snapshot.revision < this.state.revision) return;
    // INVARIANT: one assignment: a run reads `this.state` once and sees the old record set or the new one.
    this.state = RunnableState.from(snapshot, this.state, this.reporter, inEffectAt);
    if (current) {
      this.source = 'service';
      this.confirm();
      this.save();
    }
    this.options.onUpdate?.(this.state.revision);
  }

  /** The held revision is current as of `at`: restarts the staleness clock. */
  private confirm(at = Date.now()): void {
    this.confirmedAt = at;
    clearTimeout(this.expiry);
    if (!Number.isFinite(this.maxStalenessMs)) return;
    const left = at + this.maxStalenessMs - Date.now();
    this.expired = left <= 0;
    if (!this.expired) {
      this.expiry = setTimeout(() => {
        this.expired = true;
      }, left);
      unref(this.expiry);
    }
  }

  /** Stops the sync for good and tells the caller why. */
  private halt(err: ArbiterError): void {
    this.syncing = false;
    this.syncError = err;
    this.options.onSyncError?.(err);
  }

  private save(): void {
    const cache = this.cache;
    if (cache === null || this.confirmedAt === null) return;
    const text = encodeCache(this.cacheKey, { snapshot: this.state.toSnapshot(), confirmedAt: this.confirmedAt });
    this.saving = this.saving.then(() => cache.save(text)).catch(() => undefined);
  }

  private staleError(): ArbiterError {
    const age = this.confirmedAt === null ? 'never confirmed' : `last confirmed ${Date.now() - this.confirmedAt} ms ago`;
    return new ArbiterError(
      'dependency_unavailable',
      `the local policies are stale (${age}; maxStalenessMs ${this.maxStalenessMs}) and failClosed is set`,
    );
  }
}

/** The {@link ArbiterError} of an `error` event (an RFC 9457 problem). */
function problemOfEvent(data: string): ArbiterError {
  try {
    const problem = JSON.parse(data) as { code?: unknown; detail?: unknown; instance?: unknown };
    const code = ErrorCode.safeParse(problem.code);
    return new ArbiterError(
      code.success ? code.data : 'unauthenticated',
      typeof problem.detail === 'string' ? problem.detail : 'the change stream ended',
      undefined,
      {
        ...(typeof problem.instance === 'string' ? { requestId: problem.instance } : {}),
      },
    );
  } catch {
    return new ArbiterError('unauthenticated', 'the change stream ended with an unreadable error');
  }
}

/** Starts a runtime for `client` (what {@link Arbiter.local} does). */
export async function startLocalRuntime(client: RuntimeClient, options: LocalOptions): Promise<LocalRuntime> {
  const chosen = options.bases !== undefined || options.group !== undefined || options.all === true;
  const selection: RunnableSelection = {
    ...(options.bases !== undefined ? { bases: [...options.bases].sort() } : {}),
    ...(options.group !== undefined ? { group: options.group } : {}),
    ...(options.all === true || !chosen ? { all: true } : {}),
  };
  const reporter = new Reporter(
    (report) => client.runnable.report(report),
    options.reportIntervalMs ?? 1000,
    options.maxPendingReports ?? 100,
  );
  const cache = options.cacheFile !== undefined ? fileCache(options.cacheFile) : (options.cache ?? null);
  const key = JSON.stringify([client.baseUrl, selection.bases ?? null, selection.group ?? null, selection.all ?? false]);
  const runtime = new LocalRuntime(client, selection, options, reporter, cache, key);
  await runtime.start();
  return runtime;
}
