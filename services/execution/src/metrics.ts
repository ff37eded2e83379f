import { Counter, type Registry } from 'prom-client';
import type { CacheUse } from './tasks.js';

/** Counters of the execution service. */
export class ExecMetrics {
  /** Rules parsed and compiled by a worker (cache misses). */
  readonly compiles: Counter;
  /** Runs that found the compiled rule in the worker's cache. */
  readonly cacheHits: Counter;
  /** Tasks aborted at the deadline. */
  readonly timeouts: Counter;
  /** Requests refused by a size limit before reaching a worker. */
  readonly refused: Counter<'reason'>;
  /** Stored-run resolutions, by where the record came from (`redis`, or `registry` on an index miss). */
  readonly resolutions: Counter<'source'>;
  /** `executed` events published to JetStream. */
  readonly eventsPublished: Counter;
  /** `executed` events dropped because the retry buffer was full (JetStream down for long). */
  readonly eventsDropped: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.compiles = new Counter({ name: 'arbiter_exec_compiles_total', help: 'Rules compiled by a pool worker (cache misses)', registers });
    this.cacheHits = new Counter({ name: 'arbiter_exec_cache_hits_total', help: 'Runs served by a compiled rule from the worker cache', registers });
    this.timeouts = new Counter({ name: 'arbiter_exec_timeouts_total', help: 'Engine tasks aborted at the time-out', registers });
    this.refused = new Counter({
      name: 'arbiter_exec_refused_total',
      help: 'Requests refused by a size limit before reaching a worker',
      labelNames: ['reason'],
      registers,
    });
    this.resolutions = new Counter({
      name: 'arbiter_exec_resolutions_total',
      help: 'Stored-run resolutions by source: redis (the runnable index) or registry (an index miss, read from PostgreSQL)',
      labelNames: ['source'],
      registers,
    });
    this.eventsPublished = new Counter({ name: 'arbiter_exec_events_published_total', help: '`executed` events published to JetStream', registers });
    this.eventsDropped = new Counter({ name: 'arbiter_exec_events_dropped_total', help: '`executed` events dropped from a full retry buffer', registers });
  }

  /** Counts how a run used the worker cache. */
  countCache(use: CacheUse): void {
    (use === 'compile' ? this.compiles : this.cacheHits).inc();
  }
}
