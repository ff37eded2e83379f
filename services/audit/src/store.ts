import type { ArbiterEvent, DecisionRecord } from '@arbiter/contracts';
import type { Knex } from 'knex';
import type { EventBatch, StoreBatch, StoreOutcome, Turn, Unstorable } from './consumer.js';
import type { DecisionIngestMetrics } from './decision-metrics.js';
import type { Partitions } from './partitions.js';
import { insertDecisions } from './repositories/decisions.js';
import { insertEvents } from './repositories/events.js';

const DAY_MS = 86_400_000;
const NO_PARTITION = 'no partition holds its month, and the ingest path makes none outside the months around now';

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
 * Whether an error of PostgreSQL is about the rows written, so writing them again would fail
 * again: a data exception (class 22: a text PostgreSQL cannot hold, a date out of range), an
 * integrity violation (class 23: no partition for the row) or a program limit (class 54: a value
 * too long for an index). Anything else (the connection lost, the server restarting, a deadlock)
 * is about the moment, and the batch is tried again whole.
 */
export function isRowError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23|54)/.test(code);
}

/** A row error in a line: its SQLSTATE and PostgreSQL's message (knex puts the statement before it, which says nothing of the row). */
function rowErrorReason(err: unknown): string {
  const { code, message } = err as { code: string; message: string };
  const own = message.lastIndexOf(' - ');
  return `${code}: ${own >= 0 ? message.slice(own + 3) : message}`;
}

/**
 * The consumer's store: a batch's trail events go to `audit_events` and its decision records to
 * `decisions` (the consumer has checked both, src/decode.ts), in one transaction. The transaction
 * keeps its place in line ({@link Turn}): its INSERTs start once the batch before has written its
 * own, so neither ever waits for a row the other holds, and it commits only once the batch before
 * has committed, so an event never becomes visible before one ahead of it on the stream (a reader
 * that sees an event sees every event published before it on the same subject).
 *
 * A row PostgreSQL refuses must not hold back the rows of other orgs in its batch: when the batch's
 * INSERT fails for its rows ({@link isRowError}), the transaction is rolled back and the rows are
 * written again one by one (each in a savepoint), still in the batch's turn; those refused again,
 * and those of a month without a partition that ingest may not make ({@link Partitions.admit}),
 * are answered as unstorable, for the consumer to try again later or park.
 */
export function batchStore(o: BatchStoreOptions): StoreBatch {
  const retentionMs = o.retentionDays * DAY_MS;
  const decisionRetentionMs = o.decisionRetentionDays * DAY_MS;
  return async ({ trail, decisions }: EventBatch, turn: Turn): Promise<StoreOutcome> => {
    // A row already past the retention would only re-create a dropped partition: it is skipped.
    const now = new Date();
    const nowMs = now.getTime();
    const kept = retentionMs > 0 ? trail.filter((e) => nowMs - Date.parse(e.at) < retentionMs) : trail;
    const keptDecisions = decisionRetentionMs > 0 ? decisions.filter((d) => nowMs - Date.parse(d.at) < decisionRetentionMs) : decisions;
    const unstorable: Unstorable[] = [];
    const refusedAt = await o.partitions.admit(
      kept.map((e) => e.at),
      now,
    );
    const refusedDecisionAt = await o.decisionPartitions.admit(
      keptDecisions.map((d) => d.at),
      now,
    );
    const events: ArbiterEvent[] = [];
    for (const e of kept) {
      if (refusedAt.has(e.at)) unstorable.push({ item: e, reason: NO_PARTITION });
      else events.push(e);
    }
    const records: DecisionRecord[] = [];
    for (const d of keptDecisions) {
      if (refusedDecisionAt.has(d.at)) unstorable.push({ item: d, reason: NO_PARTITION });
      else records.push(d);
    }
    let stored = records;
    let trx = await o.db.transaction();
    try {
      await turn.previousWritten;
      try {
        await insertEvents(trx, events);
        await insertDecisions(trx, records);
      } catch (err) {
        if (!isRowError(err)) throw err;
        await trx.rollback();
        trx = await o.db.transaction();
        stored = await oneByOne(trx, events, records, unstorable);
      }
      turn.written();
      await turn.previousSettled;
      await trx.commit();
    } catch (err) {
      turn.written();
      if (!trx.isCompleted()) await trx.rollback().catch(() => undefined);
      throw err;
    }
    o.decisionMetrics.committed(stored);
    return { unstorable };
  };
}

/**
 * Writes each row in its own savepoint of `trx`; a row PostgreSQL refuses is added to `unstorable`
 * (any other failure ends the batch). Returns the decision records written.
 */
async function oneByOne(
  trx: Knex.Transaction,
  events: readonly ArbiterEvent[],
  records: readonly DecisionRecord[],
  unstorable: Unstorable[],
): Promise<DecisionRecord[]> {
  const written: DecisionRecord[] = [];
  const attempt = async (item: ArbiterEvent | DecisionRecord, write: (sp: Knex.Transaction) => Promise<unknown>): Promise<boolean> => {
    try {
      await trx.transaction(write);
      return true;
    } catch (err) {
      if (!isRowError(err)) throw err;
      unstorable.push({ item, reason: rowErrorReason(err) });
      return false;
    }
  };
  for (const e of events) await attempt(e, (sp) => insertEvents(sp, [e]));
  for (const d of records) if (await attempt(d, (sp) => insertDecisions(sp, [d]))) written.push(d);
  return written;
}
