import type { FlowDefinition, RunnableKind } from '@arbiter/contracts';
import type { Db } from '../db/database.js';

/** A base as stored. */
export interface BaseRow {
  id: string;
  orgId: string;
  kind: RunnableKind;
  createdBy: string;
  createdAt: Date;
  latestVersion: number | null;
  currentRecordId: string;
  revision: number;
  deletedAt: Date | null;
}

/** The content columns of a record: what a draft edit may change. */
export interface RecordContent {
  name: string;
  description: string;
  rule: string | null;
  definition: FlowDefinition | null;
  schema: Record<string, unknown> | null;
  tests: unknown[];
}

/** A draft or version as stored. */
export interface RecordRow extends RecordContent {
  id: string;
  baseId: string;
  kind: RunnableKind;
  status: 'draft' | 'published';
  version: number | null;
  basedOnVersion: number | null;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string;
  publishedAt: Date | null;
  publishedBy: string | null;
}

/** A base in a list: its current record, latest version and draft id. */
export interface BaseListRow {
  base: BaseRow;
  current: RecordRow;
  draftId: string | null;
}

const BASE_COLUMNS = ['id', 'org_id', 'kind', 'created_by', 'created_at', 'latest_version', 'current_record_id', 'revision', 'deleted_at'];

type Raw = Record<string, any>;

function baseOf(r: Raw, p = ''): BaseRow {
  return {
    id: r[`${p}id`],
    orgId: r[`${p}org_id`],
    kind: r[`${p}kind`],
    createdBy: r[`${p}created_by`],
    createdAt: r[`${p}created_at`],
    latestVersion: r[`${p}latest_version`],
    currentRecordId: r[`${p}current_record_id`],
    revision: Number(r[`${p}revision`]),
    deletedAt: r[`${p}deleted_at`],
  };
}

function recordOf(r: Raw): RecordRow {
  return {
    id: r.id,
    baseId: r.base_id,
    kind: r.kind,
    status: r.status,
    version: r.version,
    basedOnVersion: r.based_on_version,
    name: r.name,
    description: r.description,
    rule: r.rule,
    definition: r.definition,
    schema: r.schema,
    tests: r.tests,
    createdAt: r.created_at,
    createdBy: r.created_by,
    updatedAt: r.updated_at,
    updatedBy: r.updated_by,
    publishedAt: r.published_at,
    publishedBy: r.published_by,
  };
}

function contentColumns(c: Partial<RecordContent>): Raw {
  const out: Raw = {};
  if (c.name !== undefined) out.name = c.name;
  if (c.description !== undefined) out.description = c.description;
  if (c.rule !== undefined) out.rule = c.rule;
  // jsonb values are sent as JSON text: pg would send a JS array as a PostgreSQL array.
  if (c.definition !== undefined) out.definition = c.definition === null ? null : JSON.stringify(c.definition);
  if (c.schema !== undefined) out.schema = c.schema === null ? null : JSON.stringify(c.schema);
  if (c.tests !== undefined) out.tests = JSON.stringify(c.tests);
  return out;
}

/** Inserts a new base with its first record (the draft) in one go; the caller's transaction makes it atomic. */
export async function insertBaseWithDraft(db: Db, base: Omit<BaseRow, 'revision' | 'deletedAt' | 'latestVersion'>, draft: RecordRow): Promise<void> {
  await db('registry_bases').insert({
    id: base.id,
    org_id: base.orgId,
    kind: base.kind,
    created_by: base.createdBy,
    created_at: base.createdAt,
    current_record_id: base.currentRecordId,
  });
  await insertRecord(db, draft);
}

/** Inserts a record (a draft). */
export async function insertRecord(db: Db, r: RecordRow): Promise<void> {
  await db('registry_records').insert({
    id: r.id,
    base_id: r.baseId,
    kind: r.kind,
    status: r.status,
    version: r.version,
    based_on_version: r.basedOnVersion,
    ...contentColumns(r),
    created_at: r.createdAt,
    created_by: r.createdBy,
    updated_at: r.updatedAt,
    updated_by: r.updatedBy,
    published_at: r.publishedAt,
    published_by: r.publishedBy,
  });
}

/** A record and its base, by record id within one org and kind; deleted bases included. */
export async function findRecordWithBase(db: Db, recordId: string, orgId: string, kind: RunnableKind): Promise<{ record: RecordRow; base: BaseRow } | null> {
  const row = await db('registry_records as r')
    .join('registry_bases as b', 'b.id', 'r.base_id')
    .where({ 'r.id': recordId, 'b.org_id': orgId, 'b.kind': kind })
    .first(['r.*', ...BASE_COLUMNS.map((c) => `b.${c} as b_${c}`)]);
  return row ? { record: recordOf(row), base: baseOf(row, 'b_') } : null;
}

/** A base by id within one org and kind; deleted bases included. */
export async function findBase(db: Db, baseId: string, orgId: string, kind: RunnableKind): Promise<BaseRow | null> {
  const row = await db('registry_bases').where({ id: baseId, org_id: orgId, kind }).first(BASE_COLUMNS);
  return row ? baseOf(row) : null;
}

/** Locks a base row until the transaction ends and returns it: every change of a base takes this lock first. */
export async function lockBase(db: Db, baseId: string): Promise<BaseRow> {
  const row = await db('registry_bases').where({ id: baseId }).forUpdate().first(BASE_COLUMNS);
  if (!row) throw new Error(`base \`${baseId}\` vanished`);
  return baseOf(row);
}

/** A record by id (no org check; call after the base lock). */
export async function getRecord(db: Db, recordId: string): Promise<RecordRow | null> {
  const row = await db('registry_records').where({ id: recordId }).first();
  return row ? recordOf(row) : null;
}

/** The draft of a base, if any. */
export async function findDraft(db: Db, baseId: string): Promise<RecordRow | null> {
  const row = await db('registry_records').where({ base_id: baseId, status: 'draft' }).first();
  return row ? recordOf(row) : null;
}

/** A version of a base by number. */
export async function findVersion(db: Db, baseId: string, version: number): Promise<RecordRow | null> {
  const row = await db('registry_records').where({ base_id: baseId, version }).first();
  return row ? recordOf(row) : null;
}

/** Applies content changes to a draft and stamps the editor. */
export async function updateDraft(db: Db, recordId: string, patch: Partial<RecordContent>, by: string, at: Date): Promise<RecordRow> {
  const [row] = await db('registry_records')
    .where({ id: recordId, status: 'draft' })
    .update({ ...contentColumns(patch), updated_at: at, updated_by: by })
    .returning('*');
  return recordOf(row);
}

/** Turns a draft into version `version` (its id becomes the version's id), applying `patch` first. */
export async function publishDraft(
  db: Db,
  recordId: string,
  version: number,
  patch: Partial<RecordContent>,
  by: string,
  at: Date,
): Promise<RecordRow> {
  const edited = Object.keys(contentColumns(patch)).length > 0;
  const [row] = await db('registry_records')
    .where({ id: recordId, status: 'draft' })
    .update({
      ...contentColumns(patch),
      ...(edited ? { updated_at: at, updated_by: by } : {}),
      status: 'published',
      version,
      published_at: at,
      published_by: by,
    })
    .returning('*');
  return recordOf(row);
}

/**
 * Records a committed change of a base: bumps its revision and sets the given columns. Returns
 * the new revision.
 */
export async function touchBase(
  db: Db,
  baseId: string,
  set: { latestVersion?: number; currentRecordId?: string; deletedAt?: Date; deletedBy?: string } = {},
): Promise<number> {
  const [row] = await db('registry_bases')
    .where({ id: baseId })
    .update({
      revision: db.raw('revision + 1'),
      ...(set.latestVersion !== undefined ? { latest_version: set.latestVersion } : {}),
      ...(set.currentRecordId !== undefined ? { current_record_id: set.currentRecordId } : {}),
      ...(set.deletedAt !== undefined ? { deleted_at: set.deletedAt, deleted_by: set.deletedBy } : {}),
    })
    .returning('revision');
  return Number(row.revision);
}

/**
 * A page of a base's records: the draft first (unless `afterVersion` is set), then the versions
 * newest first, those below `afterVersion` when given. Fetches `limit + 1` to tell whether more follow.
 */
export async function listRecordsOfBase(db: Db, baseId: string, opts: { afterVersion?: number; limit: number }): Promise<RecordRow[]> {
  const q = db('registry_records').where({ base_id: baseId });
  if (opts.afterVersion !== undefined) q.whereNotNull('version').andWhere('version', '<', opts.afterVersion);
  const rows = await q.orderByRaw('version desc nulls first').limit(opts.limit + 1);
  return rows.map(recordOf);
}

/** Every record of a base (for the runnable index). */
export async function allRecordsOfBase(db: Db, baseId: string): Promise<RecordRow[]> {
  const rows = await db('registry_records').where({ base_id: baseId }).orderByRaw('version desc nulls first');
  return rows.map(recordOf);
}

/** Escapes `%`, `_` and `\` for a LIKE pattern. */
function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * A page of live bases of one kind visible to `userId` (published bases, or never-published ones it
 * created), newest first, optionally within a group and by name. Fetches `limit + 1`.
 */
export async function listBases(
  db: Db,
  opts: { orgId: string; kind: RunnableKind; userId: string; q?: string; beforeId?: string; groupId?: string; limit: number },
): Promise<BaseListRow[]> {
  const query = db('registry_bases as b')
    .join('registry_records as r', 'r.id', 'b.current_record_id')
    .leftJoin('registry_records as d', function () {
      this.on('d.base_id', '=', 'b.id').andOnVal('d.status', '=', 'draft');
    })
    .where({ 'b.org_id': opts.orgId, 'b.kind': opts.kind })
    .whereNull('b.deleted_at')
    .andWhere((w) => w.whereNotNull('b.latest_version').orWhere('b.created_by', opts.userId));
  if (opts.q !== undefined) query.andWhereRaw(`r.name ilike ? escape '\\'`, [`%${likeEscape(opts.q)}%`]);
  if (opts.beforeId !== undefined) query.andWhere('b.id', '<', opts.beforeId);
  if (opts.groupId !== undefined) {
    query.whereIn('b.id', db('registry_group_members').select('base_id').where({ group_id: opts.groupId }));
  }
  const rows = await query
    .orderBy('b.id', 'desc')
    .limit(opts.limit + 1)
    .select(['r.*', 'd.id as draft_id', ...BASE_COLUMNS.map((c) => `b.${c} as b_${c}`)]);
  return rows.map((row: Raw) => ({ base: baseOf(row, 'b_'), current: recordOf(row), draftId: row.draft_id ?? null }));
}

/** A base by id in any org (for the runnable index, which covers every org). */
export async function getBase(db: Db, baseId: string): Promise<BaseRow | null> {
  const row = await db('registry_bases').where({ id: baseId }).first(BASE_COLUMNS);
  return row ? baseOf(row) : null;
}
