import { executedDetails, newEvent, type ArbiterEvent, type Principal } from '@arbiter/contracts';
import type { Logger } from 'pino';
import type { ExecMetrics } from '../metrics.js';

/** Options of {@link ExecutedEvents}. */
export interface ExecutedEventsOptions {
  /** How often the current window is closed and written to the outbox. */
  flushMs: number;
  /** Distinct aggregates in a window that close it early. */
  batchMax: number;
  /** Events kept in memory while the outbox cannot be written (Redis down); the oldest are dropped beyond it. */
  bufferMax: number;
}

/** Where closed windows go: the service's outbox (a Redis stream the event relay publishes from). */
export interface ExecutedEventsSink {
  enqueue(events: readonly ArbiterEvent[]): Promise<void>;
}

/** One stored run as the audit trail sees it. */
export interface ExecutedRun {
  resource: { type: 'policy' | 'flow'; id: string; baseId: string };
  version: number | null;
  via: 'base' | 'record';
  /** A policy's or flow's result; a flow ending at a decision table gives its output object or list. */
  result: boolean | string | object;
  error: boolean;
}

/** Distinct table results counted per aggregate; the rest are counted under {@link OTHER_RESULTS}. */
const MAX_RESULT_KEYS = 50;
/** The `customCounts` key of results past {@link MAX_RESULT_KEYS}, and of table results too long to be a key. */
export const OTHER_RESULTS = '(other)';

/** The `customCounts` key of a non-boolean result: a custom outcome as is, a table result as its JSON text (up to 200 characters). */
function resultKey(result: string | object): string {
  if (typeof result === 'string') return result;
  const text = JSON.stringify(result);
  return text.length <= 200 ? text : OTHER_RESULTS;
}

interface Aggregate {
  orgId: string;
  actor: ArbiterEvent['actor'];
  resource: ExecutedRun['resource'];
  version: number | null;
  via: Set<'base' | 'record'>;
  count: number;
  trueCount: number;
  falseCount: number;
  errorCount: number;
  customCounts: Map<string, number>;
  from: number;
  to: number;
}

/**
 * The `executed` events of stored runs (docs/design/events-and-audit.md), batched so a run never waits: {@link record}
 * only updates an in-memory aggregate. Runs are aggregated into ONE event per (org, record, actor
 * user + API key) per window (`details` from {@link executedDetails}: count, true/false/error counts,
 * first and last run time). Every `flushMs`, or once `batchMax` aggregates are open, the window is
 * closed into events (each with a fresh UUID v7 `eventId`) and written to the outbox, from which the
 * event relay publishes them to JetStream (and keeps them while JetStream is down).
 *
 * While the outbox cannot be written (Redis down), closed events wait in a bounded buffer
 * (`bufferMax`, oldest dropped and counted) and are retried at the next tick; a run is never blocked
 * or failed by the events. {@link close} closes the last window and writes it once more.
 */
export class ExecutedEvents {
  private window = new Map<string, Aggregate>();
  private buffer: ArbiterEvent[] = [];
  private writing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private droppedSinceLog = 0;

  constructor(
    private readonly sink: ExecutedEventsSink,
    private readonly logger: Logger,
    private readonly metrics: ExecMetrics,
    private readonly opts: ExecutedEventsOptions,
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushMs).unref();
  }

  /** Counts one run of a stored resource by `principal`. O(1), no I/O. */
  record(principal: Principal, run: ExecutedRun): void {
    if (this.closed) return;
    const key = `${principal.orgId}\u0000${run.resource.type}\u0000${run.resource.id}\u0000${principal.userId}\u0000${principal.apiKeyId ?? ''}`;
    const now = Date.now();
    let agg = this.window.get(key);
    if (!agg) {
      agg = {
        orgId: principal.orgId,
        actor: { userId: principal.userId, ...(principal.apiKeyId !== undefined ? { apiKeyId: principal.apiKeyId } : {}) },
        resource: run.resource,
        version: run.version,
        via: new Set(),
        count: 0,
        trueCount: 0,
        falseCount: 0,
        errorCount: 0,
        customCounts: new Map(),
        from: now,
        to: now,
      };
      this.window.set(key, agg);
    }
    agg.count++;
    agg.to = now;
    agg.via.add(run.via);
    if (run.error) agg.errorCount++;
    else if (run.result === true) agg.trueCount++;
    else if (run.result === false) agg.falseCount++;
    else {
      let key = resultKey(run.result);
      // Custom outcomes are few (a definition's nodes); table results (e.g. sums) can be many: capped.
      if (typeof run.result === 'object' && !agg.customCounts.has(key) && agg.customCounts.size >= MAX_RESULT_KEYS) key = OTHER_RESULTS;
      agg.customCounts.set(key, (agg.customCounts.get(key) ?? 0) + 1);
    }
    if (this.window.size >= this.opts.batchMax) void this.flush();
  }

  /** Events closed but not yet written to the outbox. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Closes the current window and writes what is buffered; resolves when this pass ends (never rejects). */
  flush(): Promise<void> {
    this.seal();
    if (this.writing) return this.writing;
    if (this.buffer.length === 0) return Promise.resolve();
    this.writing = this.writeBuffer().finally(() => {
      this.writing = null;
    });
    return this.writing;
  }

  /** Stops the timer and writes the last window (one attempt); events that cannot be written are lost (logged). */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    await this.flush();
    this.closed = true;
    await this.flush();
    if (this.buffer.length > 0)
      this.logger.error({ events: this.buffer.length }, 'executed events could not be written to the outbox before shutdown: lost');
  }

  private seal(): void {
    if (this.window.size === 0) return;
    const closedWindow = this.window;
    this.window = new Map();
    for (const agg of closedWindow.values()) this.buffer.push(toEvent(agg));
    const excess = this.buffer.length - this.opts.bufferMax;
    if (excess > 0) {
      this.buffer.splice(0, excess);
      this.metrics.eventsDropped.inc(excess);
      this.droppedSinceLog += excess;
    }
  }

  private async writeBuffer(): Promise<void> {
    const batch = this.buffer.slice();
    try {
      await this.sink.enqueue(batch);
    } catch (err) {
      this.logger.warn(
        { err, waiting: this.buffer.length, dropped: this.droppedSinceLog },
        'executed events not written to the outbox: will retry',
      );
      this.droppedSinceLog = 0;
      return;
    }
    // The buffer may have been trimmed while writing: keep only what was not in this batch.
    const written = new Set(batch);
    this.buffer = this.buffer.filter((e) => !written.has(e));
    this.metrics.eventsQueued.inc(batch.length);
    if (this.droppedSinceLog > 0) {
      this.logger.warn({ dropped: this.droppedSinceLog }, 'executed events were dropped while the outbox was unreachable');
      this.droppedSinceLog = 0;
    }
  }
}

function toEvent(a: Aggregate): ArbiterEvent {
  const details = executedDetails(a);
  return newEvent('executed', { orgId: a.orgId, ...a.actor }, a.resource, details, { at: details.to });
}
