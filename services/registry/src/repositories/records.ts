import type { FlowDefinition, RunnableKind } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';

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
  /** Who changed the content since the last published version (a version: of the draft it was). */
  authors: string[];
  /** A flow version published through review: the version each base-naming node without `version` runs, by node id. */
  pinnedVersions: Record<string, number> | null;
}

/** A base in a list: its current record, latest version and draft id. */
export interface BaseListRow {
  base: BaseRow;
  current: RecordRow;
  draftId: string | null;
}

const BASE_COLUMNS = ['id', 'org_id', 'kind', 'created_by', 'created_at', 'latest_version', 'current_record_id', 'revision', 'deleted_at'];

/** `registry_bases` columns as pg returns them (see the migration). */
interface BaseColumns {
  id: string;
  org_id: string;
  kind: RunnableKind;
  created_by: string;
  created_at: Date;
  latest_version: number | null;
  current_record_id: string;
  revision: number | string;
  deleted_at: Date | null;
}

/** `registry_records` columns as pg returns them (jsonb parsed). */
interface RecordColumns {
  id: string;
  base_id: string;
  kind: RunnableKind;
  status: 'draft' | 'published';
  version: number | null;
  based_on_version: number | null;
  name: string;
  description: string;
  rule: string | null;
  definition: FlowDefinition | null;
  schema: Record<string, unknown> | null;
  tests: unknown[];
  created_at: Date;
  created_by: string;
  updated_at: Date;
  updated_by: string;
  published_at: Date | null;
  published_by: string | null;
  authors: string[];
  pinned_versions: Record<string, number> | null;
}

/** A records row joined with its base's columns under the `b_` prefix. */
type RecordWithBaseColumns = RecordColumns & { [K in keyof BaseColumns as `b_${K}`]: BaseColumns[K] };

function baseOf(r: BaseColumns): BaseRow {
  return {
    id: r.id,
    orgId: r.org_id,
    kind: r.kind,
    createdBy: r.created_by,
    createdAt: r.created_at,
    latestVersion: r.latest_version,
    currentRecordId: r.current_record_id,
    revision: Number(r.revision),
    deletedAt: r.deleted_at,
  };
}

/** The base columns of a joined row (selected as `b_<column>`). */
function joinedBaseOf(r: RecordWithBaseColumns): BaseRow {
  return baseOf({
    id: r.b_id,
    org_id: r.b_org_id,
    kind: r.b_kind,
    created_by: r.b_created_by,
    created_at: r.b_created_at,
    latest_version: r.b_latest_version,
    current_record_id: r.b_current_record_id,
    revision: r.b_revision,
    deleted_at: r.b_deleted_at,
  });
}

function recordOf(r: RecordColumns): RecordRow {
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
    authors: r.authors ?? [],
    pinnedVersions: r.pinned_versions ?? null,
  };
}

function contentColumns(c: Partial<RecordContent>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
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
export async function insertBaseWithDraft(
  db: Db,
  base: Omit<BaseRow, 'revision' | 'deletedAt' | 'latestVersion'>,
  draft: RecordRow,
): Promise<void> {
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
  await db('registry_records').insert(recordInsertColumns(r));
}

/** The `registry_records` columns of a new record. */
export function recordInsertColumns(r: RecordRow): Record<string, unknown> {
  return {
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
    authors: r.authors,
    pinned_versions: r.pinnedVersions ? JSON.stringify(r.pinnedVersions) : null,
  };
}

/** A record and its base, by record id within one org and kind; deleted bases included. */
export async function findRecordWithBase(
  db: Db,
  recordId: string,
  orgId: string,
  kind: RunnableKind,
): Promise<{ record: RecordRow; base: BaseRow } | null> {
  const row = (await db('registry_records as r')
    .join('registry_bases as b', 'b.id', 'r.base_id')
    .where({ 'r.id': recordId, 'b.org_id': orgId, 'b.kind': kind })
    .first(['r.*', ...BASE_COLUMNS.map((c) => `b.${c} as b_${c}`)])) as RecordWithBaseColumns | undefined;
  return row ? { record: recordOf(row), base: joinedBaseOf(row) } : null;
}

/**
 * A base's current record (its latest version, else its draft) with the base, by base id within
 * one org and kind; deleted bases included.
 */
export async function findCurrentOfBase(
  db: Db,
  baseId: string,
  orgId: string,
  kind: RunnableKind,
): Promise<{ record: RecordRow; base: BaseRow } | null> {
  const row = (await db('registry_bases as b')
    .join('registry_records as r', 'r.id', 'b.current_record_id')
    .where({ 'b.id': baseId, 'b.org_id': orgId, 'b.kind': kind })
    .first(['r.*', ...BASE_COLUMNS.map((c) => `b.${c} as b_${c}`)])) as RecordWithBaseColumns | undefined;
  return row ? { record: recordOf(row), base: joinedBaseOf(row) } : null;
}

/** A base by id within one org and kind; deleted bases included. */
export async function findBase(db: Db, baseId: string, orgId: string, kind: RunnableKind): Promise<BaseRow | null> {
  const row = (await db('registry_bases').where({ id: baseId, org_id: orgId, kind }).first(BASE_COLUMNS)) as BaseColumns | undefined;
  return row ? baseOf(row) : null;
}

/**
 * Which of the given record ids and base ids are live (base not deleted) in one org and kind, and
 * which of the given `base:version` pairs exist among those bases: three queries, whatever the number of ids.
 */
export async function liveReferences(
  db: Db,
  orgId: string,
  kind: RunnableKind,
  refs: { recordIds: string[]; baseIds: string[]; versions: Array<[baseId: string, version: number]> },
): Promise<{ recordIds: Set<string>; baseIds: Set<string>; versions: Set<string> }> {
  const live = () => db('registry_bases as b').where({ 'b.org_id': orgId, 'b.kind': kind }).whereNull('b.deleted_at');
  const records =
    refs.recordIds.length === 0
      ? []
      : ((await live().join('registry_records as r', 'r.base_id', 'b.id').whereIn('r.id', refs.recordIds).select('r.id')) as {
          id: string;
        }[]);
  const bases = refs.baseIds.length === 0 ? [] : ((await live().whereIn('b.id', refs.baseIds).select('b.id')) as { id: string }[]);
  const baseIds = new Set(bases.map((b) => b.id));
  const wanted = refs.versions.filter(([baseId]) => baseIds.has(baseId));
  const versions =
    wanted.length === 0
      ? []
      : ((await db('registry_records').whereIn(['base_id', 'version'], wanted).select('base_id', 'version')) as {
          base_id: string;
          version: number;
        }[]);
  return { recordIds: new Set(records.map((r) => r.id)), baseIds, versions: new Set(versions.map((v) => `${v.base_id}:${v.version}`)) };
}

/** Locks a base row until the transaction ends and returns it: every change of a base takes this lock first. */
export async function lockBase(db: Db, baseId: string): Promise<BaseRow> {
  const row = (await db('registry_bases').where({ id: baseId }).forUpdate().first(BASE_COLUMNS)) as BaseColumns | undefined;
  if (!row) throw new Error(`base \`${baseId}\` vanished`);
  return baseOf(row);
}

/** A record by id (no org check; call after the base lock). */
export async function getRecord(db: Db, recordId: string): Promise<RecordRow | null> {
  const row = (await db('registry_records').where({ id: recordId }).first()) as RecordColumns | undefined;
  return row ? recordOf(row) : null;
}

/** The draft of a base, if any. */
export async function findDraft(db: Db, baseId: string): Promise<RecordRow | null> {
  const row = (await db('registry_records').where({ base_id: baseId, status: 'draft' }).first()) as RecordColumns | undefined;
  return row ? recordOf(row) : null;
}

/** A version of a base by number. */
export async function findVersion(db: Db, baseId: string, version: number): Promise<RecordRow | null> {
  const row = (await db('registry_records').where({ base_id: baseId, version }).first()) as RecordColumns | undefined;
  return row ? recordOf(row) : null;
}

/** Applies content changes to a draft and stamps the editor. */
/** Applies `patch` to a draft; `author` is added to its authors when the patch changed its content. */
export async function updateDraft(
  db: Db,
  recordId: string,
  patch: Partial<RecordContent>,
  by: string,
  at: Date,
  author?: string,
): Promise<RecordRow> {
  const [row] = (await db('registry_records')
    .where({ id: recordId, status: 'draft' })
    .update({ ...contentColumns(patch), updated_at: at, updated_by: by, ...authorColumn(db, author) })
    .returning('*')) as RecordColumns[];
  return recordOf(row);
}

/** `authors` with `author` added once (nothing when undefined). */
function authorColumn(db: Db, author: string | undefined): Record<string, unknown> {
  if (author === undefined) return {};
  return { authors: db.raw('case when ? = any(authors) then authors else array_append(authors, ?) end', [author, author]) };
}

/** Turns a draft into version `version` (its id becomes the version's id), applying `patch` first; `pins` are its pinned versions. */
export async function publishDraft(
  db: Db,
  recordId: string,
  version: number,
  patch: Partial<RecordContent>,
  by: string,
  at: Date,
  author?: string,
  pins?: Record<string, number>,
): Promise<RecordRow> {
  const edited = Object.keys(contentColumns(patch)).length > 0;
  const [row] = (await db('registry_records')
    .where({ id: recordId, status: 'draft' })
    .update({
      ...contentColumns(patch),
      ...(edited ? { updated_at: at, updated_by: by } : {}),
      ...authorColumn(db, author),
      ...(pins !== undefined ? { pinned_versions: JSON.stringify(pins) } : {}),
      status: 'published',
      version,
      published_at: at,
      published_by: by,
    })
    .returning('*')) as RecordColumns[];
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
  const [row] = (await db('registry_bases')
    .where({ id: baseId })
    .update({
      revision: db.raw('revision + 1'),
      ...(set.latestVersion !== undefined ? { latest_version: set.latestVersion } : {}),
      ...(set.currentRecordId !== undefined ? { current_record_id: set.currentRecordId } : {}),
      ...(set.deletedAt !== undefined ? { deleted_at: set.deletedAt, deleted_by: set.deletedBy } : {}),
    })
    .returning('revision')) as Pick<BaseColumns, 'revision'>[];
  return Number(row.revision);
}

/**
 * A page of a base's records: the draft first (unless `afterVersion` is set), then the versions
 * newest first, those below `afterVersion` when given. Fetches `limit + 1` to tell whether more follow.
 */
export async function listRecordsOfBase(db: Db, baseId: string, opts: { afterVersion?: number; limit: number }): Promise<RecordRow[]> {
  const q = db('registry_records').where({ base_id: baseId });
  if (opts.afterVersion !== undefined) q.whereNotNull('version').andWhere('version', '<', opts.afterVersion);
  const rows = (await q.orderByRaw('version desc nulls first').limit(opts.limit + 1)) as RecordColumns[];
  return rows.map(recordOf);
}

/** Every record of a base (for the runnable index). */
export async function allRecordsOfBase(db: Db, baseId: string): Promise<RecordRow[]> {
  const rows = (await db('registry_records').where({ base_id: baseId }).orderByRaw('version desc nulls first')) as RecordColumns[];
  return rows.map(recordOf);
}

/** Escapes `%`, `_` and `\` for a LIKE pattern. */
function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A list order: the sort column and direction; ties (and the default order) by base id. */
export type BaseListOrder = { by: 'id' | 'name' | 'updatedAt'; desc: boolean };

/** Where the previous page ended: the last row's sort value (name, or ISO time) and base id. */
export interface BaseListAfter {
  key?: string;
  id: string;
}

/**
 * A page of live bases of one kind visible to `userId` (published bases, or never-published ones it
 * created; every one with `all`), newest first or in `order`, optionally filtered by name, status
 * of the current record, creator and group. Keyset pagination after `after`. Fetches `limit + 1`.
 */
export async function listBases(
  db: Db,
  opts: {
    orgId: string;
    kind: RunnableKind;
    userId: string;
    all?: boolean;
    q?: string;
    status?: 'draft' | 'published';
    createdBy?: string;
    groupId?: string;
    order?: BaseListOrder;
    after?: BaseListAfter;
    limit: number;
  },
): Promise<BaseListRow[]> {
  const order = opts.order ?? { by: 'id', desc: true };
  const query = db('registry_bases as b')
    .join('registry_records as r', 'r.id', 'b.current_record_id')
    .leftJoin('registry_records as d', function () {
      this.on('d.base_id', '=', 'b.id').andOnVal('d.status', '=', 'draft');
    })
    .where({ 'b.org_id': opts.orgId, 'b.kind': opts.kind })
    .whereNull('b.deleted_at');
  if (opts.all !== true) {
    query.andWhere((w) => {
      void w.whereNotNull('b.latest_version').orWhere('b.created_by', opts.userId);
    });
  }
  if (opts.q !== undefined) query.andWhereRaw(`r.name ilike ? escape '\\'`, [`%${likeEscape(opts.q)}%`]);
  if (opts.status === 'published') query.whereNotNull('b.latest_version');
  if (opts.status === 'draft') query.whereNull('b.latest_version');
  if (opts.createdBy !== undefined) query.andWhere('b.created_by', opts.createdBy);
  if (opts.groupId !== undefined) {
    query.whereIn('b.id', db('registry_group_members').select('base_id').where({ group_id: opts.groupId }));
  }
  const dir = order.desc ? 'desc' : 'asc';
  const column = order.by === 'name' ? 'r.name' : order.by === 'updatedAt' ? 'r.updated_at' : null;
  if (opts.after !== undefined) {
    const cmp = order.desc ? '<' : '>';
    if (column === null) query.andWhere('b.id', cmp, opts.after.id);
    else query.andWhereRaw(`(${column}, b.id) ${cmp} (?, ?)`, [opts.after.key ?? '', opts.after.id]);
  }
  if (column !== null) query.orderBy(column, dir);
  const rows = (await query
    .orderBy('b.id', dir)
    .limit(opts.limit + 1)
    .select(['r.*', 'd.id as draft_id', ...BASE_COLUMNS.map((c) => `b.${c} as b_${c}`)])) as (RecordWithBaseColumns & {
    draft_id: string | null;
  })[];
  return rows.map((row) => ({ base: joinedBaseOf(row), current: recordOf(row), draftId: row.draft_id ?? null }));
}

/** A base by id in any org (for the runnable index, which covers every org). */
export async function getBase(db: Db, baseId: string): Promise<BaseRow | null> {
  const row = (await db('registry_bases').where({ id: baseId }).first(BASE_COLUMNS)) as BaseColumns | undefined;
  return row ? baseOf(row) : null;
}

/** A deleted base in a list: as {@link BaseListRow} plus when and by whom it was deleted. */
export interface DeletedBaseListRow extends BaseListRow {
  deletedAt: Date;
  deletedBy: string;
}

/**
 * A page of the soft-deleted bases of one kind in an org, most recently deleted
 * first (ties by id), optionally by name. Fetches `limit + 1`.
 */
export async function listDeletedBases(
  db: Db,
  opts: { orgId: string; kind: RunnableKind; q?: string; before?: { deletedAt: Date; id: string }; limit: number },
): Promise<DeletedBaseListRow[]> {
  const query = db('registry_bases as b')
    .join('registry_records as r', 'r.id', 'b.current_record_id')
    .leftJoin('registry_records as d', function () {
      this.on('d.base_id', '=', 'b.id').andOnVal('d.status', '=', 'draft');
    })
    .where({ 'b.org_id': opts.orgId, 'b.kind': opts.kind })
    .whereNotNull('b.deleted_at');
  if (opts.q !== undefined) query.andWhereRaw(`r.name ilike ? escape '\\'`, [`%${likeEscape(opts.q)}%`]);
  if (opts.before !== undefined) query.andWhereRaw('(b.deleted_at, b.id) < (?, ?)', [opts.before.deletedAt, opts.before.id]);
  const rows = (await query
    .orderBy([
      { column: 'b.deleted_at', order: 'desc' },
      { column: 'b.id', order: 'desc' },
    ])
    .limit(opts.limit + 1)
    .select([
      'r.*',
      'd.id as draft_id',
      'b.deleted_by as b_deleted_by',
      ...BASE_COLUMNS.map((c) => `b.${c} as b_${c}`),
    ])) as (RecordWithBaseColumns & {
    draft_id: string | null;
    b_deleted_by: string;
  })[];
  return rows.map((row) => ({
    base: joinedBaseOf(row),
    current: recordOf(row),
    draftId: row.draft_id ?? null,
    deletedAt: row.b_deleted_at!,
    deletedBy: row.b_deleted_by,
  }));
}

/** Clears a base's soft delete and bumps its revision (the caller holds the base lock). */
export async function undeleteBase(db: Db, baseId: string): Promise<void> {
  await db('registry_bases')
    .where({ id: baseId })
    .update({ revision: db.raw('revision + 1'), deleted_at: null, deleted_by: null });
}

/** The given bases and all their records (versions oldest first, then the draft), for export. */
export async function allRecordsOfBases(
  db: Db,
  baseIds: string[],
): Promise<{ bases: Map<string, BaseRow>; records: Map<string, RecordRow[]> }> {
  const bases = new Map<string, BaseRow>();
  const records = new Map<string, RecordRow[]>();
  if (baseIds.length === 0) return { bases, records };
  for (const row of (await db('registry_bases').whereIn('id', baseIds).select(BASE_COLUMNS)) as BaseColumns[])
    bases.set(row.id, baseOf(row));
  const rows = (await db('registry_records')
    .whereIn('base_id', baseIds)
    .orderBy('base_id')
    .orderByRaw('version asc nulls last')) as RecordColumns[];
  for (const row of rows) {
    const list = records.get(row.base_id) ?? [];
    list.push(recordOf(row));
    records.set(row.base_id, list);
  }
  return { bases, records };
}
