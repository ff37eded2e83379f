import type { Knex } from 'knex';
import type { EventBatch, StoreBatch, Turn } from './consumer.js';
import type { DecisionIngestMetrics } from './decision-metrics.js';
import type { Partitions } from './partitions.js';
import { insertDecisions } from './repositories/decisions.js';
import { insertEvents } from './repositories/events.js';

const DAY_MS = 86_400_000;

/** What {@link batchStore} writes with. */
export interface BatchStoreOptions {
  db: Knex;
  partitions: Partitions;
  decisionPartitions: Partitions;
  /** `AUDIT_RETENTION_DAYS` and `DECISIONS_RETENTION_DAYS` (0: keep everything). */
  retentionDays: number;
  decisionRetentionDays: number;
  decisionMetrics: DecisionIngestMetrics;
}

/**
 * The consumer's store: a batch's trail events go to `audit_events` and its decision records to
 * `decisions` (the consumer has checked both, src/decode.ts), in one transaction. The transaction
 * keeps its place in line ({@link Turn}): its INSERTs start once the batch before has written its
 * own, so neither ever waits for a row the other holds, and it commits only once the batch before
 * has committed, so an event never becomes visible before one ahead of it on the stream (a reader
 * that sees an event sees every event published before it on the same subject).
 */
export function batchStore(o: BatchStoreOptions): StoreBatch {
  const retentionMs = o.retentionDays * DAY_MS;
  const decisionRetentionMs = o.decisionRetentionDays * DAY_MS;
  return async ({ trail, decisions }: EventBatch, turn: Turn): Promise<void> => {
    // A row already past the retention would only re-create a dropped partition: it is skipped.
    const now = Date.now();
    const kept = retentionMs > 0 ? trail.filter((e) => now - Date.parse(e.at) < retentionMs) : trail;
    const keptDecisions = decisionRetentionMs > 0 ? decisions.filter((d) => now - Date.parse(d.at) < decisionRetentionMs) : decisions;
    await o.partitions.ensureFor(kept.map((e) => e.at));
    await o.decisionPartitions.ensureFor(keptDecisions.map((d) => d.at));
    // One transaction: a batch is acked once both are committed, and redelivered whole otherwise.
    await o.db.transaction(async (trx) => {
      await turn.previousWritten;
      try {
        await insertEvents(trx, kept);
        await insertDecisions(trx, keptDecisions);
      } finally {
        turn.written();
      }
      await turn.previousSettled;
    });
    o.decisionMetrics.committed(keptDecisions);
  };
}
