import type { RunnableKind } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';
import { recordInsertColumns, type RecordRow } from './records.js';
import { insertImportedTimelineRows, type TimelineRow } from './timeline.js';

/** A live base of the target org that a bundle base maps to (imported from it before, or the same base). */
export interface KnownBase {
  id: string;
  kind: RunnableKind;
  latestVersion: number | null;
  /** Record ids of the base by version number (`draft` for the draft). */
  records: Map<number | 'draft', string>;
}

/**
 * Serializes imports into one org until the transaction ends, so two imports of the same bundle
 * cannot both create.
 */
export async function lockOrgImports(db: Db, orgId: string): Promise<void> {
  await db.raw('select pg_advisory_xact_lock(hashtext(?))', [`registry_import:${orgId}`]);
}

/**
 * The live bases of `orgId` a bundle's bases map to, by source base id: those imported from
 * `originOrgId` (their origin), and when the bundle comes from this very org, the bases themselves.
 */
export async function knownBases(db: Db, orgId: string, originOrgId: string, sourceIds: string[]): Promise<Map<string, KnownBase>> {
  const out = new Map<string, KnownBase>();
  if (sourceIds.length === 0) return out;
  const q = db('registry_bases')
    .where({ org_id: orgId })
    .whereNull('deleted_at')
    .andWhere((w) => {
      w.where('origin_org_id', originOrgId).whereIn('origin_base_id', sourceIds);
      if (originOrgId === orgId) w.orWhereIn('id', sourceIds);
    });
  const rows = (await q.select('id', 'kind', 'latest_version', 'origin_org_id', 'origin_base_id')) as {
    id: string;
    kind: RunnableKind;
    latest_version: number | null;
    origin_org_id: string | null;
    origin_base_id: string | null;
  }[];
  if (rows.length === 0) return out;
  const records = (await db('registry_records')
    .whereIn(
      'base_id',
      rows.map((r) => r.id),
    )
    .select('id', 'base_id', 'version')) as { id: string; base_id: string; version: number | null }[];
  const byBase = new Map<string, Map<number | 'draft', string>>();
  for (const r of records) {
    const m = byBase.get(r.base_id) ?? new Map<number | 'draft', string>();
    m.set(r.version ?? 'draft', r.id);
    byBase.set(r.base_id, m);
  }
  for (const r of rows) {
    const known = { id: r.id, kind: r.kind, latestVersion: r.latest_version, records: byBase.get(r.id) ?? new Map() };
    // The same org's own base wins over a copy imported from it.
    if (originOrgId === orgId && sourceIds.includes(r.id)) out.set(r.id, known);
    else if (r.origin_org_id === originOrgId && r.origin_base_id !== null && !out.has(r.origin_base_id)) out.set(r.origin_base_id, known);
  }
  return out;
}

/** Which of `ids` are live policy bases, and which are records of live policy bases, of `orgId`. */
export async function livePolicyIds(db: Db, orgId: string, ids: string[]): Promise<{ bases: Set<string>; records: Set<string> }> {
  if (ids.length === 0) return { bases: new Set(), records: new Set() };
  const bases = (await db('registry_bases')
    .where({ org_id: orgId, kind: 'policy' })
    .whereNull('deleted_at')
    .whereIn('id', ids)
    .select('id')) as { id: string }[];
  const records = (await db('registry_records as r')
    .join('registry_bases as b', 'b.id', 'r.base_id')
    .where({ 'b.org_id': orgId, 'b.kind': 'policy' })
    .whereNull('b.deleted_at')
    .whereIn('r.id', ids)
    .select('r.id')) as { id: string }[];
  return { bases: new Set(bases.map((r) => r.id)), records: new Set(records.map((r) => r.id)) };
}

/** Groups of `orgId` imported from `originOrgId` (or, from the same org, the groups themselves): source id → id. */
export async function knownGroups(db: Db, orgId: string, originOrgId: string, sourceIds: string[]): Promise<Map<string, string>> {
  if (sourceIds.length === 0) return new Map();
  const rows = (await db('registry_groups')
    .where({ org_id: orgId })
    .andWhere((w) => {
      w.where('origin_org_id', originOrgId).whereIn('origin_group_id', sourceIds);
      if (originOrgId === orgId) w.orWhereIn('id', sourceIds);
    })
    .select('id', 'origin_group_id')) as { id: string; origin_group_id: string | null }[];
  const out = new Map<string, string>();
  for (const r of rows) {
    if (originOrgId === orgId && sourceIds.includes(r.id)) out.set(r.id, r.id);
    else if (r.origin_group_id !== null && !out.has(r.origin_group_id)) out.set(r.origin_group_id, r.id);
  }
  return out;
}

/** A base to insert with all its records. */
export interface ImportedBaseRow {
  id: string;
  orgId: string;
  kind: RunnableKind;
  createdBy: string;
  createdAt: Date;
  latestVersion: number | null;
  currentRecordId: string;
  originOrgId: string;
  originBaseId: string;
  records: RecordRow[];
  /** The timeline rows of its versions that have one (a schedule, a cancellation, a rollback). */
  timeline: TimelineRow[];
}

/** A group to insert with its members. */
export interface ImportedGroupRow {
  id: string;
  orgId: string;
  name: string;
  description: string;
  createdBy: string;
  createdAt: Date;
  originOrgId: string;
  originGroupId: string;
  members: { baseId: string; memberType: RunnableKind }[];
}

/** Rows per multi-row INSERT: well below PostgreSQL's 65535 bind parameters. */
const CHUNK = 500;

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

/** Inserts imported bases (with their records) and groups (with their members); the caller's transaction makes it atomic. */
export async function insertImported(
  db: Db,
  bases: ImportedBaseRow[],
  groups: ImportedGroupRow[],
  addedBy: string,
  at: Date,
): Promise<void> {
  for (const part of chunks(bases)) {
    await db('registry_bases').insert(
      part.map((b) => ({
        id: b.id,
        org_id: b.orgId,
        kind: b.kind,
        created_by: b.createdBy,
        created_at: b.createdAt,
        latest_version: b.latestVersion,
        current_record_id: b.currentRecordId,
        origin_org_id: b.originOrgId,
        origin_base_id: b.originBaseId,
      })),
    );
  }
  for (const part of chunks(bases.flatMap((b) => b.records))) await db('registry_records').insert(part.map(recordInsertColumns));
  await insertImportedTimelineRows(
    db,
    bases.flatMap((b) => b.timeline),
  );
  for (const part of chunks(groups)) {
    await db('registry_groups').insert(
      part.map((g) => ({
        id: g.id,
        org_id: g.orgId,
        name: g.name,
        description: g.description,
        created_by: g.createdBy,
        created_at: g.createdAt,
        updated_at: at,
        origin_org_id: g.originOrgId,
        origin_group_id: g.originGroupId,
      })),
    );
  }
  const members = groups.flatMap((g) =>
    g.members.map((m) => ({
      group_id: g.id,
      org_id: g.orgId,
      base_id: m.baseId,
      member_type: m.memberType,
      added_by: addedBy,
      added_at: at,
    })),
  );
  for (const part of chunks(members)) await db('registry_group_members').insert(part);
}
