import type { Db } from '@arbiter/service-kit';

/** A base's shadow as stored (docs/design/shadow-runs.md): running, or stopped and kept for its report. */
export interface ShadowRow {
  baseId: string;
  orgId: string;
  recordId: string;
  sampleRate: number;
  until: Date | null;
  startedAt: Date;
  startedBy: string;
  stoppedAt: Date | null;
  stoppedBy: string | null;
}

interface ShadowColumns {
  base_id: string;
  org_id: string;
  record_id: string;
  sample_rate: number;
  until: Date | null;
  started_at: Date;
  started_by: string;
  stopped_at: Date | null;
  stopped_by: string | null;
}

function shadowOf(r: ShadowColumns): ShadowRow {
  return {
    baseId: r.base_id,
    orgId: r.org_id,
    recordId: r.record_id,
    sampleRate: Number(r.sample_rate),
    until: r.until,
    startedAt: r.started_at,
    startedBy: r.started_by,
    stoppedAt: r.stopped_at,
    stoppedBy: r.stopped_by,
  };
}

/** The shadow of a base (running or stopped), if it ever had one that was not replaced. */
export async function findShadow(db: Db, baseId: string): Promise<ShadowRow | null> {
  const row = (await db('registry_shadows').where({ base_id: baseId }).first()) as ShadowColumns | undefined;
  return row ? shadowOf(row) : null;
}

/** Starts a shadow of a base, replacing whatever shadow it had (call under the base's lock). */
export async function putShadow(db: Db, s: Omit<ShadowRow, 'stoppedAt' | 'stoppedBy'>): Promise<void> {
  const row = {
    base_id: s.baseId,
    org_id: s.orgId,
    record_id: s.recordId,
    sample_rate: s.sampleRate,
    until: s.until,
    started_at: s.startedAt,
    started_by: s.startedBy,
    stopped_at: null,
    stopped_by: null,
  };
  await db('registry_shadows').insert(row).onConflict('base_id').merge();
}

/** Marks a base's running shadow stopped (call under the base's lock); false when it had none running. */
export async function stopShadow(db: Db, baseId: string, at: Date, by: string): Promise<boolean> {
  const n = await db('registry_shadows').where({ base_id: baseId }).whereNull('stopped_at').update({ stopped_at: at, stopped_by: by });
  return n > 0;
}
