import type { Db } from '@arbiter/service-kit';

/** A month as `YYYYMM` (UTC), the suffix of its partition's name; years 1 to 9999 (what an ISO 8601 date holds). */
export type MonthKey = number;

/** The partitioned tables of the audit database. */
export type PartitionedTable = 'audit_events' | 'decisions';
/** SQLSTATEs of a concurrent CREATE of the same table: it exists, which is what was wanted. */
const ALREADY_THERE = new Set(['42P07', '23505']);
const FIRST_YEAR = 1;
const LAST_YEAR = 9999;

/** The month of an instant. */
export function monthOf(at: Date): MonthKey {
  return at.getUTCFullYear() * 100 + at.getUTCMonth() + 1;
}

/** Whether `month` is a month a partition can be made for (years 1 to 9999, months 1 to 12). */
export function isMonthKey(month: MonthKey): boolean {
  const year = Math.floor(month / 100);
  const m = month % 100;
  return Number.isInteger(month) && year >= FIRST_YEAR && year <= LAST_YEAR && m >= 1 && m <= 12;
}

function assertMonthKey(month: MonthKey): void {
  if (!isMonthKey(month)) throw new RangeError(`${month} is not a month of the years ${FIRST_YEAR} to ${LAST_YEAR}`);
}

/**
 * The first instant of a month (UTC). Built with `setUTCFullYear`, not `Date.UTC`, which reads the
 * years 0 to 99 as 1900 to 1999: year 1's partition would cover 1901.
 */
export function monthStart(month: MonthKey): Date {
  assertMonthKey(month);
  const start = new Date(0);
  start.setUTCFullYear(Math.floor(month / 100), (month % 100) - 1, 1);
  return start;
}

/** The month `n` months after `month` (before it when `n` is negative), by whole-number arithmetic. */
export function addMonths(month: MonthKey, n: number): MonthKey {
  assertMonthKey(month);
  const index = Math.floor(month / 100) * 12 + (month % 100) - 1 + n;
  const result = Math.floor(index / 12) * 100 + (index % 12) + 1;
  assertMonthKey(result);
  return result;
}

/** A partition's name: the parent's, `_p`, and the month with a four-digit year (`audit_events_p202612`, `audit_events_p000101`). */
function partitionName(parent: PartitionedTable, month: MonthKey): string {
  return `${parent}_p${String(month).padStart(6, '0')}`;
}

/** The months that have a partition of `parent`. */
export async function listPartitions(db: Db, parent: PartitionedTable = 'audit_events'): Promise<MonthKey[]> {
  const pattern = new RegExp(`^${parent}_p(\\d{4})(\\d{2})$`);
  const { rows } = (await db.raw(
    `select c.relname as name from pg_inherits i
       join pg_class c on c.oid = i.inhrelid
       join pg_class p on p.oid = i.inhparent
      where p.relname = ? and p.relnamespace = current_schema()::regnamespace`,
    [parent],
  )) as { rows: { name: string }[] };
  const months: MonthKey[] = [];
  for (const { name } of rows) {
    const m = pattern.exec(name);
    if (m) months.push(Number(m[1]) * 100 + Number(m[2]));
  }
  return months.sort((a, b) => a - b);
}

/** Creates the partition of `month` of `parent` unless it exists (safe when replicas race). */
export async function createPartition(db: Db, month: MonthKey, parent: PartitionedTable = 'audit_events'): Promise<void> {
  const from = monthStart(month).toISOString();
  // The month after December 9999 is past what a month key holds: that partition ends where timestamps of ISO 8601 do.
  const to = month === LAST_YEAR * 100 + 12 ? 'infinity' : monthStart(addMonths(month, 1)).toISOString();
  try {
    // DDL takes no bind parameters: the bounds are ISO strings made here from numbers, never user text.
    await db.raw(`create table if not exists ?? partition of ?? for values from ('${from}') to ('${to}')`, [
      partitionName(parent, month),
      parent,
    ]);
  } catch (err) {
    if (!ALREADY_THERE.has((err as { code?: string }).code ?? '')) throw err;
  }
}

/** Drops the partition of `month` of `parent` (every row of that month) if it exists. */
export async function dropPartition(db: Db, month: MonthKey, parent: PartitionedTable = 'audit_events'): Promise<void> {
  await db.raw(`drop table if exists ??`, [partitionName(parent, month)]);
}
