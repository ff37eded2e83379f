import type { Db } from '@arbiter/service-kit';

/** A month as `YYYYMM` (UTC), the suffix of its partition's name. */
export type MonthKey = number;

/** The partitioned tables of the audit database. */
export type PartitionedTable = 'audit_events' | 'decisions';
/** SQLSTATEs of a concurrent CREATE of the same table: it exists, which is what was wanted. */
const ALREADY_THERE = new Set(['42P07', '23505']);

/** The month of an instant. */
export function monthOf(at: Date): MonthKey {
  return at.getUTCFullYear() * 100 + at.getUTCMonth() + 1;
}

/** The first instant of a month (UTC). */
export function monthStart(month: MonthKey): Date {
  return new Date(Date.UTC(Math.floor(month / 100), (month % 100) - 1, 1));
}

/** The month `n` months after `month`. */
export function addMonths(month: MonthKey, n: number): MonthKey {
  const start = monthStart(month);
  return monthOf(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1)));
}

function partitionName(parent: PartitionedTable, month: MonthKey): string {
  return `${parent}_p${month}`;
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
  const to = monthStart(addMonths(month, 1)).toISOString();
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
