import { Counter, Gauge, type Registry } from 'prom-client';
import type { FairQueueStats } from './queue/fair-queue.js';
import type { CacheUse } from '@arbiter/run/caches';

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
  /** `executed` events written to the outbox (the relay publishes them). */
  readonly eventsQueued: Counter;
  /** `executed` events dropped because the retry buffer was full (JetStream down for long). */
  readonly eventsDropped: Counter;
  /** Evaluations stopped by the step budget (`budget_exceeded` results). */
  readonly budgetExceeded: Counter;
  private readonly registry: Registry;

  constructor(registry: Registry) {
    this.registry = registry;
    const registers = [registry];
    this.compiles = new Counter({
      name: 'arbiter_exec_compiles_total',
      help: 'Rules and flow table nodes compiled by a pool worker (cache misses)',
      registers,
    });
    this.cacheHits = new Counter({
      name: 'arbiter_exec_cache_hits_total',
      help: 'Runs served by a compiled rule from the worker cache',
      registers,
    });
    this.timeouts = new Counter({ name: 'arbiter_exec_timeouts_total', help: 'Worker tasks aborted at the time-out', registers });
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
    this.eventsQueued = new Counter({
      name: 'arbiter_exec_events_queued_total',
      help: '`executed` events written to the outbox',
      registers,
    });
    this.eventsDropped = new Counter({
      name: 'arbiter_exec_events_dropped_total',
      help: '`executed` events dropped while the outbox was unreachable',
      registers,
    });
    this.budgetExceeded = new Counter({
      name: 'arbiter_exec_budget_exceeded_total',
      help: 'Evaluations stopped by the step budget (errorCode budget_exceeded)',
      registers,
    });
  }

  /** Gauges of the evaluation queue, read from `stats` at each scrape: tasks waiting, running, callers with work. */
  watchQueue(stats: () => FairQueueStats): void {
    const registers = [this.registry];
    new Gauge({
      name: 'arbiter_exec_queue_waiting',
      help: 'Evaluations waiting for a worker thread (all callers)',
      registers,
      collect() {
        this.set(stats().queued);
      },
    });
    new Gauge({
      name: 'arbiter_exec_queue_running',
      help: 'Evaluations running in worker threads',
      registers,
      collect() {
        this.set(stats().running);
      },
    });
    new Gauge({
      name: 'arbiter_exec_queue_callers',
      help: 'Callers (API keys, users) with evaluations waiting or running',
      registers,
      collect() {
        this.set(stats().callers);
      },
    });
  }

  /** Counts how a run used the worker cache. */
  countCache(use: CacheUse): void {
    (use === 'compile' ? this.compiles : this.cacheHits).inc();
  }
}
