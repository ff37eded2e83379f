import type { Db } from '@arbiter/service-kit';
import type { RunnableRecordRow } from './runnable-feed.js';

/** A running staged rollout of a base (migration `20261202000000_canary_rollouts.js`; docs/design/canary.md). */
export interface RolloutRow {
  baseId: string;
  id: string;
  orgId: string;
  recordId: string;
  version: number;
  previousRecordId: string;
  previousVersion: number;
  percent: number;
  by: string | null;
  maxErrorRate: number | null;
  minRuns: number | null;
  startedAt: Date;
  startedBy: string;
  updatedAt: Date;
  updatedBy: string;
}

interface RolloutColumns {
  base_id: string;
  id: string;
  org_id: string;
  record_id: string;
  version: number;
  previous_record_id: string;
  previous_version: number;
  percent: string | number;
  by_path: string | null;
  max_error_rate: number | null;
  min_runs: number | null;
  started_at: Date;
  started_by: string;
  updated_at: Date;
  updated_by: string;
}

function rolloutOf(c: RolloutColumns): RolloutRow {
  return {
    baseId: c.base_id,
    id: c.id,
    orgId: c.org_id,
    recordId: c.record_id,
    version: c.version,
    previousRecordId: c.previous_record_id,
    previousVersion: c.previous_version,
    percent: Number(c.percent),
    by: c.by_path,
    maxErrorRate: c.max_error_rate,
    minRuns: c.min_runs,
    startedAt: c.started_at,
    startedBy: c.started_by,
    updatedAt: c.updated_at,
    updatedBy: c.updated_by,
  };
}

/** The running rollout of a base, if any. */
export async function findRollout(db: Db, baseId: string): Promise<RolloutRow | null> {
  const row = (await db('registry_rollouts').where({ base_id: baseId }).first()) as RolloutColumns | undefined;
  return row ? rolloutOf(row) : null;
}

/** Starts a rollout (the base's lock held: at most one per base). */
export async function insertRollout(db: Db, r: RolloutRow): Promise<void> {
  await db('registry_rollouts').insert({
    base_id: r.baseId,
    id: r.id,
    org_id: r.orgId,
    record_id: r.recordId,
    version: r.version,
    previous_record_id: r.previousRecordId,
    previous_version: r.previousVersion,
    percent: r.percent,
    by_path: r.by,
    max_error_rate: r.maxErrorRate,
    min_runs: r.minRuns,
    started_at: r.startedAt,
    started_by: r.startedBy,
    updated_at: r.updatedAt,
    updated_by: r.updatedBy,
  });
}

/** Moves a running rollout's share. */
export async function setRolloutPercent(db: Db, baseId: string, percent: number, userId: string, at: Date): Promise<void> {
  await db('registry_rollouts').where({ base_id: baseId }).update({ percent, updated_at: at, updated_by: userId });
}

/** Ends a rollout (promoted or rolled back). */
export async function deleteRollout(db: Db, baseId: string): Promise<void> {
  await db('registry_rollouts').where({ base_id: baseId }).delete();
}

/** The running rollouts of some bases, by base id. */
export async function rolloutsOfBases(db: Db, baseIds: readonly string[]): Promise<Map<string, RolloutRow>> {
  if (baseIds.length === 0) return new Map();
  const rows = (await db('registry_rollouts').whereIn('base_id', baseIds)) as RolloutColumns[];
  return new Map(rows.map((r) => [r.base_id, rolloutOf(r)]));
}

/** A running rollout as an SDK snapshot carries it: its share, its path and the previous record. */
export interface SnapshotRollout {
  percent: number;
  by: string | null;
  previous: RunnableRecordRow;
}

/** The running rollouts of some bases of the org with their previous records (for `GET /runnable`), by base id. */
export async function snapshotRollouts(db: Db, orgId: string, baseIds: readonly string[]): Promise<Map<string, SnapshotRollout>> {
  if (baseIds.length === 0) return new Map();
  const rows = (await db('registry_rollouts as ro')
    .join('registry_records as r', 'r.id', 'ro.previous_record_id')
    .where('ro.org_id', orgId)
    .whereIn('ro.base_id', baseIds)
    .select(
      'ro.base_id as rollout_base_id',
      'ro.percent',
      'ro.by_path',
      'r.id',
      'r.base_id',
      'r.kind',
      'r.status',
      'r.version',
      'r.rule',
      'r.definition',
      'r.schema',
    )) as Array<{
    rollout_base_id: string;
    percent: string | number;
    by_path: string | null;
    id: string;
    base_id: string;
    kind: RunnableRecordRow['kind'];
    status: RunnableRecordRow['status'];
    version: number | null;
    rule: string | null;
    definition: RunnableRecordRow['definition'];
    schema: RunnableRecordRow['schema'];
  }>;
  return new Map(
    rows.map((r) => [
      r.rollout_base_id,
      {
        percent: Number(r.percent),
        by: r.by_path,
        previous: {
          id: r.id,
          baseId: r.base_id,
          kind: r.kind,
          status: r.status,
          version: r.version,
          rule: r.rule,
          definition: r.definition,
          schema: r.schema,
        },
      },
    ]),
  );
}
