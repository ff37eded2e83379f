import { eventSubject, type ArbiterEvent, type ExecutedDetails, type Principal } from '@arbiter/contracts';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { v7 } from 'uuid';
import type { ExecMetrics } from './metrics.js';

/** Options of {@link ExecutedEvents}. */
export interface ExecutedEventsOptions {
  /** How often the current window is closed and published. */
  flushMs: number;
  /** Distinct aggregates in a window that close it early. */
  batchMax: number;
  /** Events kept for retry while JetStream is unreachable; the oldest are dropped beyond it. */
  bufferMax: number;
  /** Deadline of one JetStream publish. */
  publishTimeoutMs?: number;
}

/** One stored run as the audit trail sees it. */
export interface ExecutedRun {
  resource: { type: 'policy' | 'flow'; id: string; baseId: string };
  version: number | null;
  via: 'base' | 'record';
  result: boolean | string;
  error: boolean;
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

const PUBLISH_CONCURRENCY = 64;

/**
 * The `executed` events of stored runs (DESIGN.md §7), batched so a run never waits: {@link record}
 * only updates an in-memory aggregate. Runs are aggregated into ONE event per (org, record, actor
 * user + API key) per window (`details` = {@link ExecutedDetails}: count, true/false/error counts,
 * first and last run time). Every `flushMs`, or once `batchMax` aggregates are open, the window is
 * closed into events (each with a fresh UUID v7 `eventId`) and published to JetStream with the
 * event id as message id, so a retried publish is deduplicated by the stream.
 *
 * When JetStream is down, closed events wait in a bounded buffer (`bufferMax`, oldest dropped and
 * counted) and are retried at the next tick; a run is never blocked or failed by the events.
 * {@link close} closes the last window and tries once more to publish before the connection ends.
 */
export class ExecutedEvents {
  private window = new Map<string, Aggregate>();
  private buffer: ArbiterEvent[] = [];
  private publishing: Promise<void> | null = null;
  private readonly js: JetStreamClient;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private droppedSinceLog = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly metrics: ExecMetrics,
    private readonly opts: ExecutedEventsOptions,
  ) {
    this.js = jetstream(nc);
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
    else agg.customCounts.set(run.result, (agg.customCounts.get(run.result) ?? 0) + 1);
    if (this.window.size >= this.opts.batchMax) void this.flush();
  }

  /** Events closed but not yet accepted by JetStream. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Closes the current window and publishes what is buffered; resolves when this pass ends (never rejects). */
  flush(): Promise<void> {
    this.seal();
    if (this.publishing) return this.publishing;
    if (this.buffer.length === 0) return Promise.resolve();
    this.publishing = this.publishBuffer().finally(() => {
      this.publishing = null;
    });
    return this.publishing;
  }

  /** Stops the timer, publishes the last window (one attempt), and closes the events connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    await this.flush();
    this.closed = true;
    await this.flush();
    if (this.buffer.length > 0) this.logger.error({ events: this.buffer.length }, 'executed events could not be published before shutdown: lost');
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
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

  private async publishBuffer(): Promise<void> {
    const timeout = this.opts.publishTimeoutMs ?? 2000;
    while (this.buffer.length > 0) {
      const batch = this.buffer.slice(0, PUBLISH_CONCURRENCY);
      const results = await Promise.allSettled(
        batch.map((e) => this.js.publish(eventSubject(this.prefix, e.orgId, e.kind), JSON.stringify(e), { msgID: e.eventId, timeout })),
      );
      const failed = batch.filter((_, i) => results[i]!.status === 'rejected');
      // The buffer may have been trimmed while publishing: drop what was sent, keep the failures first.
      const sent = new Set(batch.filter((_, i) => results[i]!.status === 'fulfilled'));
      this.buffer = this.buffer.filter((e) => !sent.has(e));
      this.metrics.eventsPublished.inc(sent.size);
      if (failed.length > 0) {
        const reason = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        this.logger.warn({ err: reason.reason, waiting: this.buffer.length, dropped: this.droppedSinceLog }, 'executed events not published: will retry');
        this.droppedSinceLog = 0;
        return;
      }
    }
    if (this.droppedSinceLog > 0) {
      this.logger.warn({ dropped: this.droppedSinceLog }, 'executed events were dropped while JetStream was unreachable');
      this.droppedSinceLog = 0;
    }
  }
}

function toEvent(a: Aggregate): ArbiterEvent {
  const details: ExecutedDetails = {
    aggregated: true,
    count: a.count,
    trueCount: a.trueCount,
    falseCount: a.falseCount,
    errorCount: a.errorCount,
    ...(a.customCounts.size > 0 ? { customCounts: Object.fromEntries(a.customCounts) } : {}),
    version: a.version,
    via: [...a.via].sort(),
    from: new Date(a.from).toISOString(),
    to: new Date(a.to).toISOString(),
  };
  return {
    eventId: v7(),
    orgId: a.orgId,
    kind: 'executed',
    at: details.to,
    actor: a.actor,
    resource: a.resource,
    details,
  };
}
