import type { DecisionRecord } from '@arbiter/contracts';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * Metrics of decision ingest (docs/decisions.md): how long records took from being
 * recorded in the execution service (`at`) to being committed in `decisions` — the outbox, the
 * relay, JetStream and the consumer together — and how many were stored.
 */
export class DecisionIngestMetrics {
  private readonly lag: Histogram;
  private readonly stored: Counter;

  constructor(registry: Registry) {
    this.lag = new Histogram({
      name: 'arbiter_decisions_ingest_lag_seconds',
      help: "Seconds from a decision's recording (`at`) in the execution service to its commit in the decisions table",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
      registers: [registry],
    });
    this.stored = new Counter({
      name: 'arbiter_decisions_ingested_total',
      help: 'Decision records committed in the decisions table (a redelivered record is counted again, stored once)',
      registers: [registry],
    });
  }

  /** Notes records just committed, at `now` (epoch ms). */
  committed(records: readonly DecisionRecord[], now = Date.now()): void {
    for (const r of records) this.lag.observe(Math.max(0, now - Date.parse(r.at)) / 1000);
    this.stored.inc(records.length);
  }
}
