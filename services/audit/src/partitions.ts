import type { Knex } from 'knex';
import type { Logger } from 'pino';
import {
  addMonths,
  createPartition,
  dropPartition,
  listPartitions,
  monthOf,
  monthStart,
  type MonthKey,
  type PartitionedTable,
} from './repositories/partitions.js';

/** Months of partitions made ahead of the current one, so the hot path rarely creates one. */
const MONTHS_AHEAD = 2;
const DAY_MS = 86_400_000;

/**
 * The monthly partitions of one table (`audit_events`, `decisions`): made ahead of time (and on demand for an event of a
 * month without one, e.g. a late event), and dropped whole once every event in them is older than
 * the retention. Rows are never deleted one by one.
 */
export class Partitions {
  private readonly known = new Set<MonthKey>();

  constructor(
    private readonly db: Knex,
    private readonly retentionDays: number,
    private readonly logger: Logger,
    private readonly table: PartitionedTable = 'audit_events',
  ) {}

  /** Loads the existing partitions, creates those ahead and drops expired ones. */
  async maintain(now = new Date()): Promise<void> {
    this.known.clear();
    for (const m of await listPartitions(this.db, this.table)) this.known.add(m);
    const current = monthOf(now);
    for (let i = 0; i <= MONTHS_AHEAD; i++) await this.ensure(addMonths(current, i));
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

  /** Makes sure a partition holds each of these instants. */
  async ensureFor(instants: Iterable<string>): Promise<void> {
    const months = new Set<MonthKey>();
    for (const at of instants) months.add(monthOf(new Date(at)));
    for (const m of months) await this.ensure(m);
  }

  private async ensure(month: MonthKey): Promise<void> {
    if (this.known.has(month)) return;
    await createPartition(this.db, month, this.table);
    this.known.add(month);
  }
}
