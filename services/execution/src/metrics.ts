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
  }

  /** Counts how a run used the worker cache. */
  countCache(use: CacheUse): void {
    (use === 'compile' ? this.compiles : this.cacheHits).inc();
  }
}
