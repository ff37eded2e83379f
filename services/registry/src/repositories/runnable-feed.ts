import type { ArbiterEvent, FlowDefinition, RunnableKind } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';

/**
 * SQL of local-evaluation sync: the per-org runnable revision and feed (kept by the
 * triggers of migration `20261201000000_runnable_feed.js`), the selection of a runtime, the
 * records it runs, and the outbox rows of its run reports.
 */

/** A base chosen by a selection. */
export interface SelectedBase {
  id: string;
  kind: RunnableKind;
}

/** What a runtime chose: named bases, a group's members, every base the caller sees. */
export interface SelectionFilter {
  orgId: string;
  userId: string;
  bases?: string[];
  group?: string;
  all?: boolean;
}

/** A record as a local run needs it. */
export interface RunnableRecordRow {
  id: string;
  baseId: string;
  kind: RunnableKind;
  status: 'draft' | 'published';
  version: number | null;
  rule: string | null;
  definition: FlowDefinition | null;
  schema: Record<string, unknown> | null;
}

interface RecordColumns {
  id: string;
  base_id: string;
  kind: RunnableKind;
  status: 'draft' | 'published';
  version: number | null;
  rule: string | null;
  definition: FlowDefinition | null;
  schema: Record<string, unknown> | null;
}

const RECORD_COLUMNS = ['r.id', 'r.base_id', 'r.kind', 'r.status', 'r.version', 'r.rule', 'r.definition', 'r.schema'];

function recordOf(r: RecordColumns): RunnableRecordRow {
  return {
    id: r.id,
    baseId: r.base_id,
    kind: r.kind,
    status: r.status,
    version: r.version,
    rule: r.rule,
    definition: r.definition,
    schema: r.schema,
  };
}

/** The org's runnable revision: 0 before its first change. */
export async function orgRevision(db: Db, orgId: string): Promise<number> {
  const row = (await db('registry_runnable_orgs').where({ org_id: orgId }).first('revision')) as { revision: string | number } | undefined;
  return row ? Number(row.revision) : 0;
}

/**
 * The live bases a selection names, in id order: named bases of the org (any member may run
 * them, as runs do), members of the group and every base the caller sees in lists (published
 * ones, and never-published ones it created).
 */
export async function selectedBases(db: Db, s: SelectionFilter): Promise<SelectedBase[]> {
  const q = db('registry_bases as b').where('b.org_id', s.orgId).whereNull('b.deleted_at');
  q.andWhere((w) => {
    if (s.bases !== undefined && s.bases.length > 0) void w.orWhereIn('b.id', s.bases);
    const visible = (v: typeof w) => void v.whereNotNull('b.latest_version').orWhere('b.created_by', s.userId);
    if (s.group !== undefined) {
      const group = s.group;
      void w.orWhere((g) => {
        void g.whereIn('b.id', db('registry_group_members').select('base_id').where({ group_id: group })).andWhere(visible);
      });
    }
    if (s.all === true) void w.orWhere(visible);
    // nothing chosen: nothing selected
    void w.orWhereRaw('false');
  });
  return (await q.orderBy('b.id').select('b.id', 'b.kind')) as SelectedBase[];
}

/** The current records (latest version, else draft) of the given live bases of the org. */
export async function currentRecords(db: Db, orgId: string, baseIds: string[]): Promise<RunnableRecordRow[]> {
  if (baseIds.length === 0) return [];
  const rows = (await db('registry_bases as b')
    .join('registry_records as r', 'r.id', 'b.current_record_id')
    .where('b.org_id', orgId)
    .whereNull('b.deleted_at')
    .whereIn('b.id', baseIds)
    .orderBy('b.id')
    .select(RECORD_COLUMNS)) as RecordColumns[];
  return rows.map(recordOf);
}

/** Records (policies and flows) of live bases of the org by exact id. */
export async function recordsById(db: Db, orgId: string, recordIds: string[]): Promise<RunnableRecordRow[]> {
  if (recordIds.length === 0) return [];
  const rows = (await db('registry_records as r')
    .join('registry_bases as b', 'b.id', 'r.base_id')
    .where({ 'b.org_id': orgId })
    .whereNull('b.deleted_at')
    .whereIn('r.id', recordIds)
    .select(RECORD_COLUMNS)) as RecordColumns[];
  return rows.map(recordOf);
}

/** Records of live policy bases of the org by exact id. */
export async function policyRecordsById(db: Db, orgId: string, recordIds: string[]): Promise<RunnableRecordRow[]> {
  if (recordIds.length === 0) return [];
  const rows = (await db('registry_records as r')
    .join('registry_bases as b', 'b.id', 'r.base_id')
    .where({ 'b.org_id': orgId, 'b.kind': 'policy' })
    .whereNull('b.deleted_at')
    .whereIn('r.id', recordIds)
    .select(RECORD_COLUMNS)) as RecordColumns[];
  return rows.map(recordOf);
}

/** Versions of live policy bases of the org by `[baseId, version]`. */
export async function policyVersions(db: Db, orgId: string, pairs: Array<[string, number]>): Promise<RunnableRecordRow[]> {
  if (pairs.length === 0) return [];
  const rows = (await db('registry_records as r')
    .join('registry_bases as b', 'b.id', 'r.base_id')
    .where({ 'b.org_id': orgId, 'b.kind': 'policy' })
    .whereNull('b.deleted_at')
    .whereIn(['r.base_id', 'r.version'], pairs)
    .select(RECORD_COLUMNS)) as RecordColumns[];
  return rows.map(recordOf);
}

/** The base of each of the given record ids of the org (live or deleted). */
export async function basesOfRecords(db: Db, orgId: string, recordIds: string[]): Promise<Map<string, string>> {
  if (recordIds.length === 0) return new Map();
  const rows = (await db('registry_records as r')
    .join('registry_bases as b', 'b.id', 'r.base_id')
    .where('b.org_id', orgId)
    .whereIn('r.id', recordIds)
    .select('r.id', 'r.base_id')) as { id: string; base_id: string }[];
  return new Map(rows.map((r) => [r.id, r.base_id]));
}

/** Feed items of the org whose revision moved after `since`: bases (with whether they are deleted now) and groups. */
export async function changedSince(db: Db, orgId: string, since: number): Promise<{ bases: Map<string, boolean>; groups: Set<string> }> {
  const rows = (await db('registry_runnable_feed')
    .where('org_id', orgId)
    .andWhere('revision', '>', since)
    .select('item_id', 'kind', 'fingerprint')) as { item_id: string; kind: string; fingerprint: string }[];
  const bases = new Map<string, boolean>();
  const groups = new Set<string>();
  for (const r of rows) {
    if (r.kind === 'group') groups.add(r.item_id);
    else bases.set(r.item_id, r.fingerprint === 'deleted');
  }
  return { bases, groups };
}

/** Whether the group exists in the org. */
export async function groupExists(db: Db, orgId: string, groupId: string): Promise<boolean> {
  return (await db('registry_groups').where({ id: groupId, org_id: orgId }).first('id')) !== undefined;
}

/** The given record ids of the org (deleted bases included: their runs happened), with base, kind and version. */
export async function recordsOfOrg(
  db: Db,
  orgId: string,
  recordIds: string[],
): Promise<Map<string, { baseId: string; kind: RunnableKind; version: number | null }>> {
  if (recordIds.length === 0) return new Map();
  const rows = (await db('registry_records as r')
    .join('registry_bases as b', 'b.id', 'r.base_id')
    .where('b.org_id', orgId)
    .whereIn('r.id', recordIds)
    .select('r.id', 'r.base_id', 'r.kind', 'r.version')) as { id: string; base_id: string; kind: RunnableKind; version: number | null }[];
  return new Map(rows.map((r) => [r.id, { baseId: r.base_id, kind: r.kind, version: r.version }]));
}

/** Queues events in the outbox `table`, skipping any whose id is already there (a report sent again). */
export async function enqueueOnce(db: Db, table: string, events: readonly ArbiterEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db(table)
    .insert(events.map((e) => ({ event_id: e.eventId, payload: JSON.stringify(e) })))
    .onConflict('event_id')
    .ignore();
}
