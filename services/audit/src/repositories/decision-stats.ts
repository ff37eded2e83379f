import type { DecisionDropsReport } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** A row of `decision_base_stats`. */
interface StatsRow {
  dropped_outbox: string | number;
  dropped_buffer: string | number;
  dropped_settings: string | number;
  dropped_too_large: string | number;
  last_dropped_at: Date | null;
}

/** A base's drop counts. */
export interface BaseDrops {
  outbox: number;
  buffer: number;
  settings: number;
  tooLarge: number;
  lastDroppedAt: Date | null;
}

/**
 * Adds a drops report to the bases' stats, once: its id is inserted first and the counts are added
 * only when it was new, in one transaction. Returns whether it was new.
 */
export async function addDropsReport(db: Db, report: DecisionDropsReport): Promise<boolean> {
  return db.transaction(async (trx) => {
    const inserted = (await trx.raw(`insert into decision_drop_reports (report_id) values (?) on conflict do nothing`, [
      report.reportId,
    ])) as { rowCount: number | null };
    if ((inserted.rowCount ?? 0) === 0) return false;
    const cols: Array<Array<string | number>> = [[], [], [], [], [], []];
    for (const d of report.drops) {
      cols[0]!.push(d.orgId);
      cols[1]!.push(d.baseId);
      cols[2]!.push(d.outbox);
      cols[3]!.push(d.buffer);
      cols[4]!.push(d.settings);
      cols[5]!.push(d.tooLarge);
    }
    await trx.raw(
      `insert into decision_base_stats as s (org_id, base_id, dropped_outbox, dropped_buffer, dropped_settings, dropped_too_large, last_dropped_at)
       select o, b, sum(x), sum(y), sum(z), sum(l), now()
         from unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[]) as t(o, b, x, y, z, l)
       group by o, b
       on conflict (org_id, base_id) do update set
         dropped_outbox = s.dropped_outbox + excluded.dropped_outbox,
         dropped_buffer = s.dropped_buffer + excluded.dropped_buffer,
         dropped_settings = s.dropped_settings + excluded.dropped_settings,
         dropped_too_large = s.dropped_too_large + excluded.dropped_too_large,
         last_dropped_at = excluded.last_dropped_at`,
      cols as Knex.RawBinding[],
    );
    return true;
  });
}

/** A base's drop counts (zeros when none were ever reported). */
export async function readBaseDrops(db: Db, orgId: string, baseId: string): Promise<BaseDrops> {
  const row = (await db('decision_base_stats').where({ org_id: orgId, base_id: baseId }).first()) as StatsRow | undefined;
  return {
    outbox: Number(row?.dropped_outbox ?? 0),
    buffer: Number(row?.dropped_buffer ?? 0),
    settings: Number(row?.dropped_settings ?? 0),
    tooLarge: Number(row?.dropped_too_large ?? 0),
    lastDroppedAt: row?.last_dropped_at ?? null,
  };
}

/** Decisions of a base stored now. */
export async function countBaseDecisions(db: Db, orgId: string, baseId: string): Promise<number> {
  const [row] = await db('decisions').where({ org_id: orgId, base_id: baseId }).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

/** Forgets the ids of reports received before `before` (a report is never sent again that late). */
export async function pruneDropReports(db: Db, before: Date): Promise<number> {
  return db('decision_drop_reports').where('received_at', '<', before).delete();
}
