import {
  ArbiterError,
  type ArbiterEvent,
  type ErrorReason,
  type LiveFlowRecordEntry,
  type LivePolicyRecordEntry,
  type Principal,
  type RunnableKind,
} from '@arbiter/contracts';
import type { Knex } from 'knex';
import { z } from 'zod';
import { isImmutableVersionError, isUniqueViolation } from './db/errors.js';
import { isAdmin, requireCapability } from './domain/access.js';
import { decodeCursor, pageFrom } from './domain/cursor.js';
import { makeEvent } from './domain/events.js';
import { isUuid, newId } from './domain/ids.js';
import { enqueueEvents } from './repositories/outbox.js';
import {
  findBase,
  findDraft,
  findRecordWithBase,
  findVersion,
  getRecord,
  insertBaseWithDraft,
  insertRecord,
  listBases,
  listRecordsOfBase,
  lockBase,
  publishDraft,
  touchBase,
  updateDraft,
  type BaseListRow,
  type BaseRow,
  type RecordContent,
  type RecordRow,
} from './repositories/records.js';
import type { RunnableIndexWriter } from './runnable-index.js';

/** `policies` / `flows`, for messages. */
function plural(kind: 'policy' | 'flow'): string {
  return kind === 'policy' ? 'policies' : 'flows';
}

/** What differs between policies and flows: their kind and the checks on their content. */
export interface KindSpec {
  kind: RunnableKind;
  /** Problems that make content unsavable (400 `validation_failed`); none for policies. */
  saveProblems(content: Partial<RecordContent>): ErrorReason[];
  /** Every reason the content cannot be published (422), looked up within the publishing transaction. */
  publishProblems(content: RecordContent, trx: Knex.Transaction, orgId: string): Promise<ErrorReason[]>;
}

/** What the service needs around it. */
export interface RecordsDeps {
  db: Knex;
  index: RunnableIndexWriter;
  /** Asks the outbox relay to publish soon. */
  kickRelay(): void;
}

/** A change made in one transaction: its result, the events it caused and the base it touched. */
interface Change<T> {
  result: T;
  events: ArbiterEvent[];
  /** The base whose runnable index must be rewritten; undefined when nothing changed. */
  baseId?: string;
}

const VersionCursor = z.object({ v: z.number().int() });
const BaseCursor = z.object({ id: z.uuid() });
/** Cursor position after the draft: every version comes next. */
const AFTER_DRAFT = 2 ** 31 - 1;

/**
 * Policies or flows (DESIGN.md §5, spec §2.2, §3 without governance, §4.1/4.2/4.4, §9): drafts,
 * immutable versions, ownership, visibility and soft delete. Every change runs in one transaction
 * that takes the base's row lock first, queues its events in the outbox, and is followed by a
 * rewrite of the base's runnable index before the caller gets the answer.
 */
export class RecordsService {
  private readonly kind: RunnableKind;

  constructor(
    private readonly deps: RecordsDeps,
    private readonly spec: KindSpec,
  ) {
    this.kind = spec.kind;
  }

  /** Creates a base with its draft (any editor). */
  async create(p: Principal, content: RecordContent): Promise<RecordRow> {
    requireCapability(p, 'edit', `create ${plural(this.kind)}`);
    this.assertSavable(content);
    return this.commit(async (trx) => {
      const now = new Date();
      const baseId = newId();
      const draft: RecordRow = {
        id: newId(),
        baseId,
        kind: this.kind,
        status: 'draft',
        version: null,
        basedOnVersion: null,
        ...content,
        createdAt: now,
        createdBy: p.userId,
        updatedAt: now,
        updatedBy: p.userId,
        publishedAt: null,
        publishedBy: null,
      };
      await insertBaseWithDraft(trx, { id: baseId, orgId: p.orgId, kind: this.kind, createdBy: p.userId, createdAt: now, currentRecordId: draft.id }, draft);
      return { result: draft, baseId, events: [makeEvent(p, 'created', this.resource(draft), { name: draft.name }, now)] };
    });
  }

  /** A record by id: any member of the org, whoever owns it (spec §2.2). */
  async get(p: Principal, recordId: string): Promise<RecordRow> {
    requireCapability(p, 'view', `view ${plural(this.kind)}`);
    return (await this.loadLive(p, recordId)).record;
  }

  /** A page of the base's records, given any record id: the draft first, then versions newest first. */
  async versions(p: Principal, recordId: string, page: { limit: number; cursor?: string }): Promise<{ items: RecordRow[]; nextCursor: string | null }> {
    requireCapability(p, 'view', `view ${plural(this.kind)}`);
    const { base } = await this.loadLive(p, recordId);
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, VersionCursor).v;
    const rows = await listRecordsOfBase(this.deps.db, base.id, { afterVersion: after, limit: page.limit });
    return pageFrom(rows, page.limit, (r) => r, (last) => ({ v: last.version ?? AFTER_DRAFT }));
  }

  /**
   * The base's draft: the existing one (`created: false`), else a new draft copied from the given
   * version (`created: true`). Never overwrites unsaved work.
   */
  async draft(p: Principal, recordId: string): Promise<{ created: boolean; record: RecordRow }> {
    requireCapability(p, 'edit', `create ${this.kind} drafts`);
    const found = await this.loadLive(p, recordId);
    return this.commit<{ created: boolean; record: RecordRow }>(async (trx) => {
      await this.lockLive(trx, found.base.id, recordId);
      const existing = await findDraft(trx, found.base.id);
      if (existing) return { result: { created: false, record: existing }, events: [] };
      const source = (await getRecord(trx, recordId))!;
      const now = new Date();
      const draft: RecordRow = {
        ...source,
        id: newId(),
        status: 'draft',
        version: null,
        basedOnVersion: source.version,
        createdAt: now,
        createdBy: p.userId,
        updatedAt: now,
        updatedBy: p.userId,
        publishedAt: null,
        publishedBy: null,
      };
      await insertRecord(trx, draft);
      await touchBase(trx, found.base.id);
      const event = makeEvent(p, 'created', this.resource(draft), { name: draft.name, basedOnVersion: source.version }, now);
      return { result: { created: true, record: draft }, baseId: found.base.id, events: [event] };
    });
  }

  /**
   * Applies `patch` to a draft; with status `published`, then publishes it as the next version
   * (publisher/admin): the draft row itself becomes the version. 409 on a version; 403 when a
   * non-owner edits a never-published draft; 422 with every reason when it cannot be published,
   * in which case nothing changes (the edits roll back too).
   */
  async update(p: Principal, recordId: string, status: 'draft' | 'published', patch: Partial<RecordContent>): Promise<{ outcome: 'updated' | 'published'; record: RecordRow }> {
    requireCapability(p, status === 'published' ? 'publish' : 'edit', status === 'published' ? `publish ${plural(this.kind)}` : `edit ${plural(this.kind)}`);
    const found = await this.loadLive(p, recordId);
    const edits = definedFields(patch);
    if (status === 'draft') this.assertSavable(edits);
    return this.commit<{ outcome: 'updated' | 'published'; record: RecordRow }>(async (trx) => {
      const base = await this.lockLive(trx, found.base.id, recordId);
      const record = (await getRecord(trx, recordId))!;
      if (record.status !== 'draft') throw immutable(this.kind, record);
      const editing = Object.keys(edits).length > 0;
      if (editing && base.latestVersion === null && base.createdBy !== p.userId && !isAdmin(p)) {
        throw new ArbiterError('forbidden', `only its creator or an admin may edit never-published ${this.kind} \`${record.id}\``);
      }
      const now = new Date();
      const events: ArbiterEvent[] = [];
      if (editing) events.push(makeEvent(p, 'edited', this.resource(record), { fields: Object.keys(edits) }, now));
      if (status === 'draft') {
        if (!editing) return { result: { outcome: 'updated', record }, events };
        const updated = await updateDraft(trx, recordId, edits, p.userId, now);
        await touchBase(trx, base.id);
        return { result: { outcome: 'updated', record: updated }, baseId: base.id, events };
      }
      const problems = await this.spec.publishProblems({ ...record, ...edits }, trx, p.orgId);
      if (problems.length > 0) {
        throw new ArbiterError('cannot_publish', `${this.kind} \`${record.id}\` cannot be published: ${problems.length} problem${problems.length === 1 ? '' : 's'}`, problems);
      }
      const version = (base.latestVersion ?? 0) + 1;
      const published = await publishDraft(trx, recordId, version, edits, p.userId, now);
      await touchBase(trx, base.id, { latestVersion: version, currentRecordId: recordId });
      events.push(makeEvent(p, 'published', this.resource(published), { version }, now));
      return { result: { outcome: 'published', record: published }, baseId: base.id, events };
    });
  }

  /** Soft-deletes the whole base of any of its record ids (admin). */
  async remove(p: Principal, recordId: string): Promise<{ baseId: string }> {
    requireCapability(p, 'admin', `delete ${plural(this.kind)}`);
    const found = await this.loadLive(p, recordId);
    return this.commit(async (trx) => {
      const base = await this.lockLive(trx, found.base.id, recordId);
      const now = new Date();
      await touchBase(trx, base.id, { deletedAt: now, deletedBy: p.userId });
      const event = makeEvent(p, 'deleted', { type: this.kind, id: base.id, baseId: base.id }, {}, now);
      return { result: { baseId: base.id }, baseId: base.id, events: [event] };
    });
  }

  /**
   * A page of the bases the caller sees (spec §2.2): published ones, and never-published ones it
   * created; deleted never. Newest first, optionally by name or within a group.
   */
  async list(p: Principal, query: { limit: number; cursor?: string; q?: string; groupId?: string }): Promise<{ items: BaseListRow[]; nextCursor: string | null }> {
    requireCapability(p, 'view', `list ${plural(this.kind)}`);
    const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, BaseCursor).id;
    const rows = await listBases(this.deps.db, {
      orgId: p.orgId,
      kind: this.kind,
      userId: p.userId,
      q: query.q,
      beforeId: before,
      groupId: query.groupId,
      limit: query.limit,
    });
    return pageFrom(rows, query.limit, (r) => r, (last) => ({ id: last.base.id }));
  }

  /**
   * Rebuilds the base's runnable index from PostgreSQL and answers the record a run uses: the
   * exact record, the pinned version, or the current runnable one. 404 for unknown, deleted or
   * other-org ids (a deleted base's tombstones are written on the way).
   */
  async resolve(req: { orgId: string; baseId?: string; recordId?: string; version?: number }): Promise<LivePolicyRecordEntry | LiveFlowRecordEntry> {
    const id = req.recordId ?? req.baseId!;
    const notFound = new ArbiterError('not_found', `${this.kind} \`${id}\` not found`);
    if (!isUuid(id)) throw notFound;
    let base: BaseRow | null;
    if (req.recordId !== undefined) base = (await findRecordWithBase(this.deps.db, req.recordId, req.orgId, this.kind))?.base ?? null;
    else base = await findBase(this.deps.db, id, req.orgId, this.kind);
    if (!base) throw notFound;
    const entries = await this.refreshIndex(base.id);
    if (!entries || entries.base.state === 'deleted') throw notFound;
    const recordId =
      req.recordId ?? (req.version !== undefined ? entries.base.versions[String(req.version)] : entries.base.recordId);
    const entry = entries.records.find((r) => r.key.endsWith(`:${recordId}`))?.value;
    if (!entry || entry.state !== 'live') throw notFound;
    return entry;
  }

  private resource(r: RecordRow) {
    return { type: this.kind, id: r.id, baseId: r.baseId };
  }

  private assertSavable(content: Partial<RecordContent>): void {
    const problems = this.spec.saveProblems(content);
    if (problems.length > 0) {
      throw new ArbiterError('validation_failed', `invalid ${this.kind}: ${problems.map((x) => x.message).join('; ')}`, problems);
    }
  }

  /** A record of a live base of the caller's org; 404 for anything else (never leaks other orgs). */
  private async loadLive(p: Principal, recordId: string): Promise<{ record: RecordRow; base: BaseRow }> {
    const found = isUuid(recordId) ? await findRecordWithBase(this.deps.db, recordId, p.orgId, this.kind) : null;
    if (!found || found.base.deletedAt !== null) throw new ArbiterError('not_found', `${this.kind} \`${recordId}\` not found`);
    return found;
  }

  /** Takes the base lock and re-checks that the base was not deleted meanwhile. */
  private async lockLive(trx: Knex.Transaction, baseId: string, recordId: string): Promise<BaseRow> {
    const base = await lockBase(trx, baseId);
    if (base.deletedAt !== null) throw new ArbiterError('not_found', `${this.kind} \`${recordId}\` not found`);
    return base;
  }

  private async refreshIndex(baseId: string) {
    try {
      return await this.deps.index.refresh(this.kind, baseId);
    } catch (err) {
      throw new ArbiterError('dependency_unavailable', `the runnable index could not be updated for base \`${baseId}\`: it is retried in the background`, undefined, { cause: err });
    }
  }

  /** Runs `fn` in a transaction with its events, then updates the runnable index and wakes the relay. */
  private async commit<T>(fn: (trx: Knex.Transaction) => Promise<Change<T>>): Promise<T> {
    let change: Change<T>;
    try {
      change = await this.deps.db.transaction(async (trx) => {
        const c = await fn(trx);
        await enqueueEvents(trx, c.events);
        return c;
      });
    } catch (err) {
      if (isImmutableVersionError(err)) throw new ArbiterError('version_immutable', `${this.kind} versions are immutable`, undefined, { cause: err });
      if (isUniqueViolation(err)) throw new ArbiterError('conflict', `a concurrent change to this ${this.kind} won: retry`, undefined, { cause: err });
      throw err;
    }
    if (change.events.length > 0) this.deps.kickRelay();
    if (change.baseId !== undefined) await this.refreshIndex(change.baseId);
    return change.result;
  }
}

function immutable(kind: RunnableKind, record: RecordRow): ArbiterError {
  return new ArbiterError(
    'version_immutable',
    `\`${record.id}\` is version ${record.version} of ${kind} \`${record.baseId}\`: versions are immutable, edit the base's draft instead`,
  );
}

/** The fields of a patch that were given (undefined means "leave as is"; null clears a schema). */
function definedFields(patch: Partial<RecordContent>): Partial<RecordContent> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<RecordContent>;
}

