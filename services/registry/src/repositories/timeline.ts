import type { Db } from '@arbiter/service-kit';

/** A version's place on its base's timeline as stored (docs/design/timeline.md); versions without one take effect when published. */
export interface TimelineRow {
  recordId: string;
  baseId: string;
  version: number;
  effectiveFrom: Date | null;
  rollbackOf: number | null;
  cancelledAt: Date | null;
  /** Who cancelled (read from the table; absent where a row is made in code). */
  cancelledBy?: string | null;
}

/** A published version's number and instant, for building a timeline. */
export interface VersionInstant {
  id: string;
  version: number;
  publishedAt: Date;
}

interface TimelineColumns {
  record_id: string;
  base_id: string;
  version: number;
  effective_from: Date | null;
  rollback_of: number | null;
  cancelled_at: Date | null;
  cancelled_by: string | null;
}

function rowOf(r: TimelineColumns): TimelineRow {
  return {
    recordId: r.record_id,
    baseId: r.base_id,
    version: r.version,
    effectiveFrom: r.effective_from,
    rollbackOf: r.rollback_of,
    cancelledAt: r.cancelled_at,
    cancelledBy: r.cancelled_by,
  };
}

/** Records a version's schedule or rollback (in the publishing transaction). */
export async function insertTimelineRow(db: Db, row: Omit<TimelineRow, 'cancelledAt'>): Promise<void> {
  await db('registry_version_timeline').insert({
    record_id: row.recordId,
    base_id: row.baseId,
    version: row.version,
    effective_from: row.effectiveFrom,
    rollback_of: row.rollbackOf,
  });
}

/** Writes imported versions' timeline rows as the source org had them (in the import transaction). */
export async function insertImportedTimelineRows(db: Db, rows: readonly TimelineRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await db('registry_version_timeline').insert(
      rows.slice(i, i + 500).map((r) => ({
        record_id: r.recordId,
        base_id: r.baseId,
        version: r.version,
        effective_from: r.effectiveFrom,
        rollback_of: r.rollbackOf,
        cancelled_at: r.cancelledAt,
        cancelled_by: r.cancelledBy ?? null,
      })),
    );
  }
}

/** The timeline rows of a base. */
export async function timelineRowsOfBase(db: Db, baseId: string): Promise<TimelineRow[]> {
  const rows = (await db('registry_version_timeline').where({ base_id: baseId })) as TimelineColumns[];
  return rows.map(rowOf);
}

/** The timeline rows of many bases, by base id. */
export async function timelineRowsOfBases(db: Db, baseIds: readonly string[]): Promise<Map<string, TimelineRow[]>> {
  const out = new Map<string, TimelineRow[]>();
  if (baseIds.length === 0) return out;
  const rows = (await db('registry_version_timeline').whereIn('base_id', baseIds)) as TimelineColumns[];
  for (const r of rows) {
    const list = out.get(r.base_id) ?? [];
    list.push(rowOf(r));
    out.set(r.base_id, list);
  }
  return out;
}

/** Every published version of a base with its publish instant. */
export async function versionInstantsOfBase(db: Db, baseId: string): Promise<VersionInstant[]> {
  const rows = (await db('registry_records')
    .where({ base_id: baseId })
    .whereNotNull('version')
    .select('id', 'version', 'published_at')) as { id: string; version: number; published_at: Date }[];
  return rows.map((r) => ({ id: r.id, version: r.version, publishedAt: r.published_at }));
}

/** Marks a version's schedule cancelled (after the base lock). */
export async function cancelTimelineRow(db: Db, recordId: string, by: string, at: Date): Promise<void> {
  await db('registry_version_timeline').where({ record_id: recordId }).update({ cancelled_at: at, cancelled_by: by });
}

/**
 * Takes a version off its base's timeline for good, as a cancelled entry (a staged rollout rolled
 * back, docs/design/canary.md): it stays in the history and never runs by base id again.
 */
export async function withdrawVersion(
  db: Db,
  row: { recordId: string; baseId: string; version: number },
  by: string,
  at: Date,
): Promise<void> {
  await db('registry_version_timeline')
    .insert({
      record_id: row.recordId,
      base_id: row.baseId,
      version: row.version,
      effective_from: null,
      rollback_of: null,
      cancelled_at: at,
      cancelled_by: by,
    })
    .onConflict('record_id')
    .merge({ cancelled_at: at, cancelled_by: by });
}
