import type { Knex } from 'knex';
import type { Logger } from 'pino';
import {
  addMonths,
  createPartition,
  dropPartition,
  isMonthKey,
  listPartitions,
  monthOf,
  monthStart,
  type MonthKey,
  type PartitionedTable,
} from './repositories/partitions.js';

/** Months of partitions made ahead of the current one, so the hot path rarely creates one. */
const MONTHS_AHEAD = 2;
/**
 * Months before the current one that maintenance makes (and ingest may make): an event published
 * just before a month ended and stored after it, or relayed late from an outbox, still has its partition.
 */
const MONTHS_BEHIND = 1;
const DAY_MS = 86_400_000;

/**
 * The monthly partitions of one table (`audit_events`, `decisions`): made by maintenance from the
 * month before the current one to two months ahead, and dropped whole once every event in them is
 * older than the retention. Rows are never deleted one by one.
 *
 * The ingest path never makes a partition for a month an event names: a month outside that window
 * with no partition is refused ({@link Partitions.admit}), so no message on the bus, whatever date
 * it carries, can add a partition (each one slows every query of the trail) or fail on a missing one.
 */
export class Partitions {
  private readonly known = new Set<MonthKey>();

  constructor(
    private readonly db: Knex,
    private readonly retentionDays: number,
    private readonly logger: Logger,
    private readonly table: PartitionedTable = 'audit_events',
  ) {}

  /** Loads the existing partitions, creates those of the window around `now` and drops expired ones. */
  async maintain(now = new Date()): Promise<void> {
    this.known.clear();
    for (const m of await listPartitions(this.db, this.table)) this.known.add(m);
    const current = monthOf(now);
    for (let i = -MONTHS_BEHIND; i <= MONTHS_AHEAD; i++) await this.ensure(addMonths(current, i));
    if (this.retentionDays > 0) {
      const cutoff = now.getTime() - this.retentionDays * DAY_MS;
      for (const month of [...this.known]) {
        // Dropped only when its last instant is past the cutoff: retention keeps at least the days asked.
        if (monthStart(addMonths(month, 1)).getTime() <= cutoff) {
          await dropPartition(this.db, month, this.table);
          this.known.delete(month);
          this.logger.info({ month, table: this.table }, 'dropped an expired partition');
        }
      }
    }
  }

  /** Makes sure a partition holds each of these instants, whatever their month (operators' tools and tests; never the ingest path). */
  async ensureFor(instants: Iterable<string>): Promise<void> {
    const months = new Set<MonthKey>();
    for (const at of instants) months.add(monthOf(new Date(at)));
    for (const m of months) await this.ensure(m);
  }

  /**
   * The ingest path's check of the instants of a batch: those a partition holds, or will hold once
   * made for a month of the maintenance window around `now` (made here if a replica's maintenance
   * has not yet), are admitted; the others are returned, refused. Nothing else is created.
   */
  async admit(instants: Iterable<string>, now = new Date()): Promise<Set<string>> {
    const current = monthOf(now);
    const first = addMonths(current, -MONTHS_BEHIND);
    const last = addMonths(current, MONTHS_AHEAD);
    const refused = new Set<string>();
    const toMake = new Set<MonthKey>();
    for (const at of instants) {
      const month = monthOf(new Date(at));
      if (this.known.has(month)) continue;
      if (isMonthKey(month) && month >= first && month <= last) toMake.add(month);
      else refused.add(at);
    }
    for (const m of toMake) await this.ensure(m);
    return refused;
  }

  private async ensure(month: MonthKey): Promise<void> {
    if (this.known.has(month)) return;
    await createPartition(this.db, month, this.table);
    this.known.add(month);
  }
}
