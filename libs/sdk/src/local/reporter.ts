import { isArbiterError, RUN_REPORT_MAX_RUNS, type RunCount, type RunReport, type RunReportReply } from '@arbiter/contracts';

/** Distinct table results counted per window; the rest under {@link OTHER_RESULTS} (the execution service's numbers). */
const MAX_RESULT_KEYS = 50;
/** The `customCounts` key of results past {@link MAX_RESULT_KEYS}, and of table results too long to be a key. */
const OTHER_RESULTS = '(other)';

/** The `customCounts` key of a table result: its JSON text, up to 200 characters. */
function resultKey(result: object): string {
  const text = JSON.stringify(result);
  return text.length <= 200 ? text : OTHER_RESULTS;
}

/**
 * The runs of one record (at one version) since the last report. A run only bumps these numbers:
 * nothing is allocated, no clock is read on the run's path.
 */
export class RunCounter {
  count = 0;
  trueCount = 0;
  falseCount = 0;
  errorCount = 0;
  customCounts: Map<string, number> | null = null;
  /**
   * When the window opened (ms since the epoch): no later than its first run. The reporter moves it
   * to the present at each pass while the counter is idle, so it stays within one report interval.
   */
  from = Date.now();

  constructor(
    readonly kind: 'policy' | 'flow',
    readonly recordId: string,
    readonly baseId: string,
    readonly version: number | null,
  ) {}

  /** Counts one run answered `true` or `false` without error (the runtime's fast path). */
  addBoolean(result: boolean): void {
    this.count++;
    if (result) this.trueCount++;
    else this.falseCount++;
  }

  /** Counts one run by its answer: a boolean, a flow's custom outcome, or the output of the decision table that ended a flow. */
  add(result: boolean | string | object, error: boolean): void {
    this.count++;
    if (error) this.errorCount++;
    else if (result === true) this.trueCount++;
    else if (result === false) this.falseCount++;
    else {
      this.customCounts ??= new Map();
      // As the execution service counts them: a table result by its JSON (up to 200 characters), at most 50 of them.
      let key = typeof result === 'string' ? result : resultKey(result);
      if (typeof result === 'object' && !this.customCounts.has(key) && this.customCounts.size >= MAX_RESULT_KEYS) key = OTHER_RESULTS;
      this.customCounts.set(key, (this.customCounts.get(key) ?? 0) + 1);
    }
  }

  /** The window as a report entry (`from`: when it opened, `to`: now), and a fresh window. */
  take(to: number): RunCount {
    const run: RunCount = {
      kind: this.kind,
      recordId: this.recordId,
      baseId: this.baseId,
      version: this.version,
      count: this.count,
      trueCount: this.trueCount,
      falseCount: this.falseCount,
      errorCount: this.errorCount,
      ...(this.customCounts !== null ? { customCounts: Object.fromEntries(this.customCounts) } : {}),
      from: new Date(Math.min(this.from, to)).toISOString(),
      to: new Date(to).toISOString(),
    };
    this.count = this.trueCount = this.falseCount = this.errorCount = 0;
    this.customCounts = null;
    this.from = to;
    return run;
  }
}

/** What the reporter has done; part of the runtime's `stats()`. */
export interface ReportStats {
  /** Runs counted in all (reported or not). */
  countedRuns: number;
  /** Runs counted and not yet in a report. */
  unreportedRuns: number;
  /** Reports waiting to be sent (or sent again). */
  pendingReports: number;
  /** Runs in pending reports. */
  pendingRuns: number;
  /** Runs the service accepted. */
  reportedRuns: number;
  /** Runs the service did not count (records it does not know for the caller). */
  ignoredRuns: number;
  /** Runs dropped: beyond `maxPendingReports` while the service could not be reached, refused reports, or left at `close()`. */
  droppedRuns: number;
  /** Sends that failed (each retried later). */
  failures: number;
}

/** How the reporter sends; the client's `runnable.report`. */
export type SendReport = (report: RunReport) => Promise<RunReportReply>;

/**
 * Sends a runtime's run counts to `POST /runnable/reports` in batches, which the service turns
 * into `executed` events (`via: ["sdk"]`). Every `intervalMs` the open counters close into a
 * report (at most 1000 records each) queued for sending; reports go one at a time, oldest first.
 * One that fails is kept and sent again (same `reportId`: the service counts it once). The queue
 * is bounded (`maxPending` reports): past it the oldest is dropped and its runs counted as lost. A
 * run never waits for any of this.
 */
export class Reporter {
  private readonly counters = new Map<string, RunCounter>();
  private readonly queue: RunReport[] = [];
  private readonly timer: ReturnType<typeof setInterval>;
  private sending: Promise<void> | null = null;
  private stopped = false;
  /** Runs already taken into reports (the rest are in the open counters). */
  private taken = 0;
  private readonly stats_: Omit<ReportStats, 'countedRuns' | 'unreportedRuns' | 'pendingReports' | 'pendingRuns'> = {
    reportedRuns: 0,
    ignoredRuns: 0,
    droppedRuns: 0,
    failures: 0,
  };

  constructor(
    private readonly send: SendReport,
    intervalMs: number,
    private readonly maxPending: number,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    unref(this.timer);
  }

  /** The counter of a record at a version (the same one for as long as it is held). */
  counterFor(kind: 'policy' | 'flow', recordId: string, baseId: string, version: number | null): RunCounter {
    const key = `${recordId}:${version ?? ''}`;
    let counter = this.counters.get(key);
    if (counter === undefined) {
      counter = new RunCounter(kind, recordId, baseId, version);
      this.counters.set(key, counter);
    }
    return counter;
  }

  /** Forgets the counters of records no longer held once their runs are reported. */
  retain(held: ReadonlySet<RunCounter>): void {
    for (const [key, counter] of this.counters) if (counter.count === 0 && !held.has(counter)) this.counters.delete(key);
  }

  /** Closes the window into reports and sends what is queued; resolves when this pass ends (never rejects). */
  flush(): Promise<void> {
    this.seal();
    if (this.stopped || this.sending !== null) return this.sending ?? Promise.resolve();
    this.sending = this.sendQueued().finally(() => {
      this.sending = null;
    });
    return this.sending;
  }

  /** Stops the timer and sending (`close()` of the runtime), after one last flush of at most `waitMs`. */
  async close(waitMs: number): Promise<void> {
    clearInterval(this.timer);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    this.stopped = true;
    this.seal();
    for (const report of this.queue.splice(0)) this.stats_.droppedRuns += runsOf(report);
  }

  stats(): ReportStats {
    let unreported = 0;
    for (const c of this.counters.values()) unreported += c.count;
    return {
      countedRuns: this.taken + unreported,
      unreportedRuns: unreported,
      pendingReports: this.queue.length,
      pendingRuns: this.queue.reduce((n, r) => n + runsOf(r), 0),
      ...this.stats_,
    };
  }

  private seal(): void {
    const now = Date.now();
    let runs: RunCount[] = [];
    for (const counter of this.counters.values()) {
      if (counter.count === 0) {
        counter.from = now;
        continue;
      }
      this.taken += counter.count;
      runs.push(counter.take(now));
      if (runs.length === RUN_REPORT_MAX_RUNS) {
        this.enqueue(runs);
        runs = [];
      }
    }
    if (runs.length > 0) this.enqueue(runs);
  }

  private enqueue(runs: RunCount[]): void {
    this.queue.push({ reportId: globalThis.crypto.randomUUID(), runs });
    while (this.queue.length > this.maxPending) this.stats_.droppedRuns += runsOf(this.queue.shift()!);
  }

  private async sendQueued(): Promise<void> {
    while (this.queue.length > 0 && !this.stopped) {
      const report = this.queue[0];
      try {
        const reply = await this.send(report);
        const ignored = new Set(reply.ignored);
        for (const run of report.runs) {
          if (ignored.has(run.recordId)) this.stats_.ignoredRuns += run.count;
          else this.stats_.reportedRuns += run.count;
        }
      } catch (err) {
        // A report the service refuses as it is (400) would be refused again: drop it. Anything else waits for the next pass.
        if (isArbiterError(err) && (err.status === 400 || err.status === 413)) {
          this.stats_.droppedRuns += runsOf(report);
        } else {
          this.stats_.failures++;
          this.onError(err);
          return;
        }
      }
      if (this.queue[0] === report) this.queue.shift();
    }
  }
}

function runsOf(report: RunReport): number {
  return report.runs.reduce((n, r) => n + r.count, 0);
}

/** Lets Node exit while a timer is pending (no effect in browsers). */
export function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}
