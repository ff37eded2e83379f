import {
  ArbiterError,
  COVERAGE_DETAIL_ITEMS,
  MAX_REVIEW_WARNINGS,
  newEvent,
  uncoveredText,
  type ArbiterEvent,
  type ErrorReason,
  type LiveFlowRecordEntry,
  type LivePolicyRecordEntry,
  type PolicyChecksReply,
  type FlowChecksReply,
  type FlowDefinition,
  type Principal,
  RecordListSort,
  type RunnableKind,
  type CoverageReport,
  type PublishCheckReply,
  type RolloutStart,
  type StaticCheckWarning,
  type TestRunReport,
} from '@arbiter/contracts';
import { cursorField, decodeCursor, pageFrom, type EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { z } from 'zod';
import { isImmutableVersionError, isUniqueViolation } from './db/errors.js';
import { isAdmin, requireCapability } from './domain/access.js';
import { contentHashOf } from './domain/hash.js';
import { isUuid, newId } from './domain/ids.js';
import {
  findBase,
  findCurrentOfBase,
  findDraft,
  findRecordWithBase,
  findVersion,
  getRecord,
  insertBaseWithDraft,
  insertRecord,
  listBases,
  listRecordsOfBase,
  listDeletedBases,
  lockBase,
  publishDraft,
  touchBase,
  undeleteBase,
  updateDraft,
  type BaseListRow,
  type DeletedBaseListRow,
  type BaseRow,
  type BaseListOrder,
  type RecordContent,
  type RecordRow,
} from './repositories/records.js';
import type { RunnableIndexWriter } from './runnable-index.js';
import { timelinePick } from '@arbiter/run';
import { intervalsOf, MAX_PENDING_SCHEDULES, type VersionInterval } from './domain/timeline.js';
import { cancelTimelineRow, insertTimelineRow, timelineRowsOfBase, versionInstantsOfBase } from './repositories/timeline.js';
import { assertNoRollout, startRolloutLocked } from './rollouts-service.js';

/** `policies` / `flows`, for messages. */
function plural(kind: 'policy' | 'flow'): string {
  return kind === 'policy' ? 'policies' : 'flows';
}

/** What differs between policies and flows: their kind and the checks on their content. */
export interface KindSpec {
  kind: RunnableKind;
  /** Problems that make content unsavable (400 `validation_failed`); none for policies. */
  saveProblems(content: Partial<RecordContent>): Promise<ErrorReason[]>;
  /** Why ajv cannot use a schema being saved (400 `validation_failed`, reason `invalid_schema`), checked at save after {@link saveProblems}. */
  schemaProblems(schema: Record<string, unknown>): Promise<ErrorReason[]>;
  /** Problems of what the content names in the org (400 `validation_failed`), checked at save after {@link saveProblems}. */
  referenceProblems(content: Partial<RecordContent>, db: Knex, orgId: string): Promise<ErrorReason[]>;
  /** Every reason the content cannot be published (422), looked up within the publishing transaction. */
  publishProblems(content: RecordContent, trx: Knex.Transaction, orgId: string): Promise<ErrorReason[]>;
  /** The static checks of a rule text (warnings, in a worker with a deadline); policies only. */
  staticChecks?(rule: string): Promise<PolicyChecksReply>;
  /** The static checks of a flow definition's decision tables (in a worker with a deadline); flows only. */
  tableChecks?(definition: FlowDefinition): Promise<FlowChecksReply>;
  /**
   * Runs the saved tests of `content` with coverage (docs/api.md#saved-tests-and-coverage), in a
   * worker; a flow's policy nodes are looked up in `db` (a version's pinned versions kept).
   */
  testRun(
    content: RecordContent & { pinnedVersions?: Record<string, number> | null },
    db: Knex | Knex.Transaction,
    orgId: string,
  ): Promise<TestRunReport>;
  /**
   * A publish through review runs reviewed text only: the reasons it would not
   * (422), and the versions to pin (flows; recorded with the version). None for policies.
   */
  reviewedProblems?(
    content: RecordContent,
    db: Knex | Knex.Transaction,
    orgId: string,
  ): Promise<{ problems: ErrorReason[]; pins: Record<string, number> }>;
}

/** What the service needs around it. */
export interface RecordsDeps {
  db: Knex;
  index: RunnableIndexWriter;
  /** The transactional outbox the events of each change go to. */
  events: EventOutbox<Knex.Transaction>;
}

/** A change made in one transaction: its result, the events it caused and the base it touched. */
interface Change<T> {
  result: T;
  events: ArbiterEvent[];
  /** The base whose runnable index must be rewritten; undefined when nothing changed. */
  baseId?: string;
}

const VersionCursor = z.object({ v: cursorField.int4() });
/** A list cursor: the order it was made for (`s`, absent for the default), the last sort value and base id. */
const BaseCursor = z.object({ s: RecordListSort.optional(), k: cursorField.text(1000).optional(), id: cursorField.uuid() });
const DeletedCursor = z.object({ at: cursorField.timestamp(), id: cursorField.uuid() });
/** Highest version number (PostgreSQL `integer`); also the cursor position after the draft: every version comes next. */
const MAX_VERSION = 2 ** 31 - 1;
const AFTER_DRAFT = MAX_VERSION;

/**
 * Policies or flows (docs/api.md#policies-and-flows): drafts,
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
    await this.assertSavable(p, content);
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
        authors: [p.userId],
        pinnedVersions: null,
      };
      await insertBaseWithDraft(
        trx,
        { id: baseId, orgId: p.orgId, kind: this.kind, createdBy: p.userId, createdAt: now, currentRecordId: draft.id },
        draft,
      );
      return { result: draft, baseId, events: [newEvent('created', p, this.resource(draft), { name: draft.name }, { at: now })] };
    });
  }

  /**
   * A record by id, or by base id the base's current record (its latest version, else its draft):
   * any member of the org, whoever owns it (docs/api.md#policies-and-flows).
   */
  async get(p: Principal, id: string): Promise<RecordRow> {
    requireCapability(p, 'view', `view ${plural(this.kind)}`);
    if (!isUuid(id)) throw new ArbiterError('not_found', `${this.kind} \`${id}\` not found`);
    const found =
      (await findRecordWithBase(this.deps.db, id, p.orgId, this.kind)) ?? (await findCurrentOfBase(this.deps.db, id, p.orgId, this.kind));
    if (!found || found.base.deletedAt !== null) throw new ArbiterError('not_found', `${this.kind} \`${id}\` not found`);
    return found.record;
  }

  /** A page of the base's records, given any record id: the draft first, then versions newest first. */
  async versions(
    p: Principal,
    recordId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ items: RecordRow[]; nextCursor: string | null; intervals: Map<number, VersionInterval> }> {
    requireCapability(p, 'view', `view ${plural(this.kind)}`);
    const { base } = await this.loadLive(p, recordId);
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, VersionCursor).v;
    const rows = await listRecordsOfBase(this.deps.db, base.id, { afterVersion: after, limit: page.limit });
    const intervals = intervalsOf(await versionInstantsOfBase(this.deps.db, base.id), await timelineRowsOfBase(this.deps.db, base.id));
    const out = pageFrom(
      rows,
      page.limit,
      (r) => r,
      (last) => ({ v: last.version ?? AFTER_DRAFT }),
    );
    return { ...out, intervals };
  }

  /**
   * The base's draft: the existing one (`created: false`), else a new draft copied from the given
   * version (`created: true`). Never overwrites unsaved work.
   */
  async draft(p: Principal, recordId: string): Promise<{ created: boolean; record: RecordRow }> {
    requireCapability(p, 'edit', `create ${this.kind} drafts`);
    const found = await this.loadLive(p, recordId);
    return this.commit<{ created: boolean; record: RecordRow }>(async (trx) => {
      const base = await this.lockLive(trx, found.base.id, recordId);
      const existing = await findDraft(trx, found.base.id);
      if (existing) return { result: { created: false, record: existing }, events: [] };
      const source = (await getRecord(trx, found.record.id))!;
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
        // The latest version's content is reviewed already; bringing back an older one is a change of its own.
        authors: source.version !== null && source.version === base.latestVersion ? [] : [p.userId],
        pinnedVersions: null,
      };
      await insertRecord(trx, draft);
      await touchBase(trx, found.base.id);
      const event = newEvent('created', p, this.resource(draft), { name: draft.name, basedOnVersion: source.version }, { at: now });
      return { result: { created: true, record: draft }, baseId: found.base.id, events: [event] };
    });
  }

  /**
   * Applies `patch` to a draft; with status `published`, then publishes it as the next version
   * (publisher/admin): the draft row itself becomes the version. 409 on a version; 403 when a
   * non-owner edits a never-published draft; 422 with every reason when it cannot be published,
   * and 422 `coverage_below_minimum` when its checks pass but its saved tests cover less than
   * `minCoverage` percent (the org's setting; 0 never refuses): in either case nothing changes (the edits roll back too).
   */
  async update(
    p: Principal,
    recordId: string,
    status: 'draft' | 'published',
    patch: Partial<RecordContent>,
    minCoverage = 0,
    effectiveFrom?: string,
    rollout?: RolloutStart,
  ): Promise<{ outcome: 'updated' | 'published'; record: RecordRow }> {
    requireCapability(
      p,
      status === 'published' ? 'publish' : 'edit',
      status === 'published' ? `publish ${plural(this.kind)}` : `edit ${plural(this.kind)}`,
    );
    if (effectiveFrom !== undefined && status !== 'published') {
      throw new ArbiterError('validation_failed', '`effectiveFrom` schedules a publish: it needs `status:"published"`', [
        { code: 'not_a_publish', message: 'only a publish takes `effectiveFrom`', path: 'effectiveFrom' },
      ]);
    }
    const from = futureInstant(effectiveFrom);
    if (rollout !== undefined && status !== 'published') {
      throw new ArbiterError('validation_failed', '`rollout` starts with a publish: send it with `status:"published"`', [
        { code: 'rollout_needs_publish', message: 'only a publish starts a rollout', path: 'rollout' },
      ]);
    }
    const found = await this.loadLive(p, recordId);
    const edits = definedFields(patch);
    if (status === 'draft') await this.assertSavable(p, edits);
    return this.commit<{ outcome: 'updated' | 'published'; record: RecordRow }>(async (trx) => {
      const base = await this.lockLive(trx, found.base.id, recordId);
      const record = (await getRecord(trx, found.record.id))!;
      if (record.status !== 'draft') throw immutable(this.kind, record);
      const editing = Object.keys(edits).length > 0;
      if (editing && base.latestVersion === null && base.createdBy !== p.userId && !isAdmin(p)) {
        throw new ArbiterError('forbidden', `only its creator or an admin may edit never-published ${this.kind} \`${record.id}\``);
      }
      const now = new Date();
      const events: ArbiterEvent[] = [];
      if (editing) events.push(newEvent('edited', p, this.resource(record), { fields: Object.keys(edits) }, { at: now }));
      if (status === 'draft') {
        if (!editing) return { result: { outcome: 'updated', record }, events };
        const updated = await updateDraft(trx, record.id, edits, p.userId, now, changes(record, edits) ? p.userId : undefined);
        await touchBase(trx, base.id);
        return { result: { outcome: 'updated', record: updated }, baseId: base.id, events };
      }
      const published = await this.publishLocked(p, trx, base, record, edits, now, events, {}, false, minCoverage, from, rollout);
      return { result: { outcome: 'published', record: published }, baseId: base.id, events };
    });
  }

  /**
   * Publishes a reviewed draft for the governance service: within the transaction that
   * holds the base's row lock, which every edit takes too, the draft's content hash must still be
   * `expectedContentHash` (else 409 `review_stale`, nothing written), then the same checks and
   * the same version as a `PUT` publish, with the review request id in the `published` event.
   * A retry after the draft became that version answers it (`already_published`), never a second one.
   */
  async publishReviewed(
    p: Principal,
    recordId: string,
    expectedContentHash: string,
    reviewRequestId: string,
    effectiveFrom?: string,
    rollout?: RolloutStart,
  ): Promise<{ outcome: 'published' | 'already_published'; record: RecordRow }> {
    requireCapability(p, 'publish', `publish ${plural(this.kind)}`);
    const from = futureInstant(effectiveFrom);
    const found = await this.loadLive(p, recordId);
    return this.commit<{ outcome: 'published' | 'already_published'; record: RecordRow }>(async (trx) => {
      const base = await this.lockLive(trx, found.base.id, recordId);
      const record = (await getRecord(trx, found.record.id))!;
      const hash = contentHashOf(record);
      if (record.status !== 'draft') {
        if (hash === expectedContentHash) return { result: { outcome: 'already_published', record }, events: [] };
        throw immutable(this.kind, record);
      }
      if (hash !== expectedContentHash) {
        throw new ArbiterError(
          'review_stale',
          `${this.kind} draft \`${record.id}\` changed after it was approved: submit it for approval again; nothing was published`,
        );
      }
      const events: ArbiterEvent[] = [];
      const published = await this.publishLocked(
        p,
        trx,
        base,
        record,
        {},
        new Date(),
        events,
        { requestId: reviewRequestId },
        true,
        0,
        from,
        rollout,
      );
      return { result: { outcome: 'published', record: published }, baseId: base.id, events };
    });
  }

  /**
   * Why a draft under review could not be published as reviewed text, asked
   * before its review is approved: the problems of {@link KindSpec.reviewedProblems}, none for kinds
   * without them. 404 for unknown, deleted or other-org ids.
   */
  async reviewCheck(p: Principal, recordId: string): Promise<ErrorReason[]> {
    requireCapability(p, 'view', `view ${plural(this.kind)}`);
    const { record } = await this.loadLive(p, recordId);
    if (!this.spec.reviewedProblems) return [];
    return (await this.spec.reviewedProblems(record, this.deps.db, p.orgId)).problems;
  }

  /**
   * The publish checks of a draft without publishing it (the governance service runs them when the
   * draft is submitted for review): every reason a publish would be refused, empty when it would
   * pass, with the content hash that was checked. 409 `version_immutable` for a version.
   */
  async publishCheck(p: Principal, recordId: string, minCoverage = 0): Promise<PublishCheckReply> {
    requireCapability(p, 'edit', `check ${this.kind} drafts for publishing`);
    const { record } = await this.loadLive(p, recordId);
    if (record.status !== 'draft') throw immutable(this.kind, record);
    // Read-only: the same checks a publish runs in its transaction, then nothing is written. When
    // they pass, the saved tests' coverage is counted for the review summary (and the minimum).
    return this.deps.db.transaction(
      async (trx): Promise<PublishCheckReply> => {
        const contentHash = contentHashOf(record);
        const problems = await this.spec.publishProblems(record, trx, p.orgId);
        if (problems.length > 0) return { contentHash, problems };
        const { coverage } = await this.spec.testRun(record, trx, p.orgId);
        this.refuseBelowMinimum(record.id, coverage, minCoverage, 'submitted for review');
        return { contentHash, problems, coverage: coverage.summary, warnings: await this.warningsOf(record) };
      },
      { readOnly: true },
    );
  }

  /**
   * The static checks' warnings of `content` (a policy's, or its decision tables'), at most
   * {@link MAX_REVIEW_WARNINGS}; none when the checks could not run (they never block).
   */
  private async warningsOf(content: Pick<RecordContent, 'rule' | 'definition'>): Promise<StaticCheckWarning[]> {
    try {
      const found: StaticCheckWarning[] =
        content.rule != null && this.spec.staticChecks
          ? (await this.spec.staticChecks(content.rule)).checks
          : content.definition != null && this.spec.tableChecks
            ? (await this.spec.tableChecks(content.definition)).checks
            : [];
      return found.filter((c) => c.severity === 'warning').slice(0, MAX_REVIEW_WARNINGS);
    } catch {
      return [];
    }
  }

  /**
   * Refuses (422 `coverage_below_minimum`) content whose saved tests cover less than `minCoverage`
   * percent, naming the percent, the minimum and the first uncovered parts; nothing to do at 0.
   */
  private async assertCoverage(
    content: RecordContent & { id: string; pinnedVersions?: Record<string, number> | null },
    db: Knex | Knex.Transaction,
    orgId: string,
    minCoverage: number,
    action: 'published' | 'submitted for review',
  ): Promise<void> {
    if (minCoverage <= 0) return;
    const { coverage } = await this.spec.testRun(content, db, orgId);
    this.refuseBelowMinimum(content.id, coverage, minCoverage, action);
  }

  /** 422 `coverage_below_minimum` when `coverage` is below `minCoverage` percent (0: never). */
  private refuseBelowMinimum(
    id: string,
    coverage: CoverageReport,
    minCoverage: number,
    action: 'published' | 'submitted for review',
  ): void {
    const percent = coverage.summary.percent;
    if (minCoverage <= 0 || percent >= minCoverage) return;
    const first = coverage.uncovered.slice(0, COVERAGE_DETAIL_ITEMS);
    const more = coverage.uncovered.length - first.length;
    throw new ArbiterError(
      'coverage_below_minimum',
      `${this.kind} \`${id}\` cannot be ${action}: its saved tests cover ${percent} %, below the org's minimum of ${minCoverage} %` +
        (first.length > 0 ? `; ${coverage.uncovered.length} part${coverage.uncovered.length === 1 ? '' : 's'} not fully covered` : '') +
        (more > 0 ? ` (the first ${first.length} listed)` : ''),
      first.map((item) => ({
        code: `uncovered_${item.kind}`,
        message: uncoveredText(item),
        path: item.kind === 'row' || item.kind === 'edge' ? `definition.nodes.${item.kind === 'row' ? item.nodeId : item.from}` : 'rule',
      })),
    );
  }

  /**
   * Runs the saved tests of a base's draft (given its base id or any record id: the draft, else its
   * latest version), or of `version`, with their coverage: any member of the org. 404 for unknown,
   * deleted or other-org ids and for a version the base does not have.
   */
  async testRun(p: Principal, id: string, version?: number): Promise<TestRunReport> {
    requireCapability(p, 'view', `run the saved tests of ${plural(this.kind)}`);
    const found = await this.loadLive(p, id);
    let record = found.record;
    if (version !== undefined) {
      const versioned = await findVersion(this.deps.db, found.base.id, version);
      if (!versioned) throw new ArbiterError('not_found', `${this.kind} \`${found.base.id}\` has no version ${version}`);
      record = versioned;
    }
    return this.spec.testRun(record, this.deps.db, p.orgId);
  }

  /**
   * The static checks of a policy text (docs/api.md#static-checks), for any member of the org:
   * `/validate` and the answers of policy saves carry them.
   */
  async staticChecks(p: Principal, rule: string): Promise<PolicyChecksReply> {
    requireCapability(p, 'view', `check ${plural(this.kind)}`);
    if (!this.spec.staticChecks) throw new ArbiterError('validation_failed', `${plural(this.kind)} have no rule text to check`);
    return this.spec.staticChecks(rule);
  }

  /** The static checks of a flow definition's decision tables (docs/tables.md#static-checks-publish), for any member of the org. */
  async tableChecks(p: Principal, definition: FlowDefinition): Promise<FlowChecksReply> {
    requireCapability(p, 'view', `check ${plural(this.kind)}`);
    if (!this.spec.tableChecks) throw new ArbiterError('validation_failed', `${plural(this.kind)} have no decision tables to check`);
    return this.spec.tableChecks(definition);
  }

  /** Soft-deletes the whole base of any of its record ids (admin). */
  async remove(p: Principal, recordId: string): Promise<{ baseId: string }> {
    requireCapability(p, 'admin', `delete ${plural(this.kind)}`);
    const found = await this.loadLive(p, recordId);
    return this.commit(async (trx) => {
      const base = await this.lockLive(trx, found.base.id, recordId);
      const now = new Date();
      await touchBase(trx, base.id, { deletedAt: now, deletedBy: p.userId });
      const event = newEvent('deleted', p, { type: this.kind, id: base.id, baseId: base.id }, {}, { at: now });
      return { result: { baseId: base.id }, baseId: base.id, events: [event] };
    });
  }

  /**
   * Brings a soft-deleted base back with all its records (admin), given its base id
   * or any of its record ids. 404 for unknown or other-org ids, 409 `conflict` when it is not
   * deleted. Emits `restored`; answers the base's current record (latest version, else the draft).
   */
  async restore(p: Principal, id: string): Promise<RecordRow> {
    requireCapability(p, 'admin', `restore ${plural(this.kind)}`);
    const notFound = new ArbiterError('not_found', `${this.kind} \`${id}\` not found`);
    if (!isUuid(id)) throw notFound;
    const baseId =
      (await findRecordWithBase(this.deps.db, id, p.orgId, this.kind))?.base.id ??
      (await findBase(this.deps.db, id, p.orgId, this.kind))?.id;
    if (baseId === undefined) throw notFound;
    return this.commit(async (trx) => {
      const base = await lockBase(trx, baseId);
      if (base.deletedAt === null) {
        throw new ArbiterError('conflict', `${this.kind} \`${id}\` is not deleted: there is nothing to restore`);
      }
      await undeleteBase(trx, base.id);
      const current = (await getRecord(trx, base.currentRecordId))!;
      const event = newEvent(
        'restored',
        p,
        { type: this.kind, id: base.id, baseId: base.id },
        { name: current.name, deletedAt: base.deletedAt.toISOString() },
      );
      return { result: current, baseId: base.id, events: [event] };
    });
  }

  /** A page of the org's soft-deleted bases (admin), most recently deleted first, optionally by name. */
  async listDeleted(
    p: Principal,
    query: { limit: number; cursor?: string; q?: string },
  ): Promise<{ items: DeletedBaseListRow[]; nextCursor: string | null }> {
    requireCapability(p, 'admin', `list deleted ${plural(this.kind)}`);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, DeletedCursor);
    const rows = await listDeletedBases(this.deps.db, {
      orgId: p.orgId,
      kind: this.kind,
      q: query.q,
      before: after === undefined ? undefined : { deletedAt: new Date(after.at), id: after.id },
      limit: query.limit,
    });
    return pageFrom(
      rows,
      query.limit,
      (r) => r,
      (last) => ({ at: last.deletedAt.toISOString(), id: last.base.id }),
    );
  }

  /**
   * A page of the bases the caller sees (docs/api.md#policies-and-flows): published ones, and never-published ones it
   * created (every one for an admin asking `all`); deleted never. Newest first or in `sort`,
   * optionally by name, status, creator or group. The cursor carries the order
   * it was made for and the last row's sort value, so pages stay stable for every order.
   */
  async list(
    p: Principal,
    query: {
      limit: number;
      cursor?: string;
      q?: string;
      groupId?: string;
      status?: 'draft' | 'published';
      createdBy?: string;
      sort?: RecordListSort;
      all?: boolean;
    },
  ): Promise<{ items: BaseListRow[]; nextCursor: string | null }> {
    requireCapability(p, 'view', `list ${plural(this.kind)}`);
    if (query.all === true && !isAdmin(p)) {
      throw new ArbiterError('forbidden', `only an admin may list colleagues' never-published ${plural(this.kind)} (\`all=true\`)`);
    }
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, BaseCursor);
    if (after !== undefined && after.s !== query.sort) {
      throw new ArbiterError('invalid_cursor', `the cursor was made for another \`sort\`: ask for the first page again`);
    }
    const order: BaseListOrder | undefined =
      query.sort === undefined ? undefined : { by: query.sort.endsWith('name') ? 'name' : 'updatedAt', desc: query.sort.startsWith('-') };
    const rows = await listBases(this.deps.db, {
      orgId: p.orgId,
      kind: this.kind,
      userId: p.userId,
      all: query.all,
      q: query.q,
      status: query.status,
      createdBy: query.createdBy,
      groupId: query.groupId,
      order,
      after: after === undefined ? undefined : { key: after.k, id: after.id },
      limit: query.limit,
    });
    return pageFrom(
      rows,
      query.limit,
      (r) => r,
      (last) => ({
        ...(query.sort === undefined ? {} : { s: query.sort }),
        ...(order === undefined ? {} : { k: order.by === 'name' ? last.current.name : last.current.updatedAt.toISOString() }),
        id: last.base.id,
      }),
    );
  }

  /**
   * Rebuilds the base's runnable index from PostgreSQL and answers the record a run uses: the
   * exact record, the pinned version, or the current runnable one. 404 for unknown, deleted or
   * other-org ids (a deleted base's tombstones are written on the way).
   */
  async resolve(req: {
    principal: Principal;
    baseId?: string;
    recordId?: string;
    version?: number;
    at?: string;
  }): Promise<LivePolicyRecordEntry | LiveFlowRecordEntry> {
    requireCapability(req.principal, 'view', `run ${plural(this.kind)}`);
    const orgId = req.principal.orgId;
    const id = req.recordId ?? req.baseId!;
    const notFound = new ArbiterError('not_found', `${this.kind} \`${id}\` not found`);
    if (!isUuid(id)) throw notFound;
    let base: BaseRow | null;
    if (req.recordId !== undefined) base = (await findRecordWithBase(this.deps.db, req.recordId, orgId, this.kind))?.base ?? null;
    else base = await findBase(this.deps.db, id, orgId, this.kind);
    if (!base) throw notFound;
    const entries = await this.refreshIndex(base.id);
    if (!entries || entries.base.state === 'deleted') throw notFound;
    let recordId = req.recordId ?? (req.version !== undefined ? entries.base.versions[String(req.version)] : entries.base.recordId);
    if (req.recordId === undefined && req.version === undefined && (req.at !== undefined || entries.base.timeline !== undefined)) {
      // A run by base id picks on the timeline by its own clock (docs/design/timeline.md).
      const at = req.at === undefined ? Date.now() : Date.parse(req.at);
      const picked = timelinePick(entries.timeline?.value ?? [], at);
      if (picked === undefined) throw beforeFirstVersion(this.kind, id, entries.timeline?.value[0]?.from);
      recordId = picked.recordId;
    }
    const entry = entries.records.find((r) => r.key.endsWith(`:${recordId}`))?.value;
    if (!entry || entry.state !== 'live') throw notFound;
    return entry;
  }

  /** Checks and publishes a locked draft as the base's next version; pushes the `published` event. */
  private async publishLocked(
    p: Principal,
    trx: Knex.Transaction,
    base: BaseRow,
    record: RecordRow,
    edits: Partial<RecordContent>,
    now: Date,
    events: ArbiterEvent[],
    details: { requestId?: string },
    reviewed = false,
    minCoverage = 0,
    effectiveFrom?: Date,
    rollout?: RolloutStart,
  ): Promise<RecordRow> {
    // A publish while a rollout runs would leave it rolling out a version that is no longer the latest.
    await assertNoRollout(trx, this.kind, base.id);
    // The record serving before this publish: what the other runs of a rollout keep getting.
    const previous = rollout === undefined ? null : await getRecord(trx, base.currentRecordId);
    const content = { ...record, ...edits };
    const review = reviewed && this.spec.reviewedProblems ? await this.spec.reviewedProblems(content, trx, p.orgId) : undefined;
    const problems = [...(review?.problems ?? []), ...(await this.spec.publishProblems(content, trx, p.orgId))];
    if (problems.length > 0) {
      throw new ArbiterError(
        'cannot_publish',
        `${this.kind} \`${record.id}\` cannot be published: ${problems.length} problem${problems.length === 1 ? '' : 's'}`,
        problems,
      );
    }
    await this.assertCoverage(content, trx, p.orgId, minCoverage, 'published');
    const version = (base.latestVersion ?? 0) + 1;
    if (version > MAX_VERSION) {
      throw new ArbiterError(
        'conflict',
        `${this.kind} \`${base.id}\` is at version ${base.latestVersion}, the highest a version can be: nothing was published`,
      );
    }
    if (effectiveFrom !== undefined) await this.assertScheduleRoom(trx, base.id, now);
    const published = await publishDraft(
      trx,
      record.id,
      version,
      edits,
      p.userId,
      now,
      changes(record, edits) ? p.userId : undefined,
      review?.pins,
    );
    if (effectiveFrom !== undefined) {
      await insertTimelineRow(trx, { recordId: record.id, baseId: base.id, version, effectiveFrom, rollbackOf: null });
    }
    await touchBase(trx, base.id, { latestVersion: version, currentRecordId: record.id });
    const scheduled = effectiveFrom !== undefined ? { effectiveFrom: effectiveFrom.toISOString() } : {};
    events.push(newEvent('published', p, this.resource(published), { version, ...details, ...scheduled }, { at: now }));
    if (rollout !== undefined) await startRolloutLocked(trx, p, this.kind, previous!, published, rollout, now, events);
    return published;
  }

  /** 409 when the base already has {@link MAX_PENDING_SCHEDULES} versions waiting for their instant. */
  private async assertScheduleRoom(trx: Knex.Transaction, baseId: string, now: Date): Promise<void> {
    const rows = await timelineRowsOfBase(trx, baseId);
    const pending = rows.filter((r) => r.cancelledAt === null && r.effectiveFrom !== null && r.effectiveFrom > now).length;
    if (pending >= MAX_PENDING_SCHEDULES) {
      throw new ArbiterError(
        'conflict',
        `${this.kind} \`${baseId}\` has ${pending} versions waiting for their instant, the most it may have: cancel one first; nothing was published`,
      );
    }
  }

  /**
   * Makes version `toVersion`'s content runnable again as the base's next version (publisher or
   * admin; no review: the content was published before, docs/design/governance.md), at once or at
   * `effectiveFrom`. The new version records `rollbackOf` and keeps a flow's pinned versions. 404
   * for an unknown base or version. Emits `published` with `rollbackOf`.
   */
  async rollback(p: Principal, id: string, toVersion: number, effectiveFrom?: string): Promise<RecordRow> {
    requireCapability(p, 'publish', `roll back ${plural(this.kind)}`);
    const from = futureInstant(effectiveFrom);
    const found = await this.loadLive(p, id);
    return this.commit(async (trx) => {
      const base = await this.lockLive(trx, found.base.id, id);
      const source = await findVersion(trx, base.id, toVersion);
      if (!source) throw new ArbiterError('not_found', `${this.kind} \`${base.id}\` has no version ${toVersion}`);
      const now = new Date();
      if (from !== undefined) await this.assertScheduleRoom(trx, base.id, now);
      const version = (base.latestVersion ?? 0) + 1;
      if (version > MAX_VERSION) {
        throw new ArbiterError('conflict', `${this.kind} \`${base.id}\` is at version ${base.latestVersion}, the highest a version can be`);
      }
      const record: RecordRow = {
        ...source,
        id: newId(),
        version,
        basedOnVersion: toVersion,
        createdAt: now,
        createdBy: p.userId,
        updatedAt: now,
        updatedBy: p.userId,
        publishedAt: now,
        publishedBy: p.userId,
        authors: [],
      };
      await insertRecord(trx, record);
      await insertTimelineRow(trx, { recordId: record.id, baseId: base.id, version, effectiveFrom: from ?? null, rollbackOf: toVersion });
      await touchBase(trx, base.id, { latestVersion: version, currentRecordId: record.id });
      const details = { version, rollbackOf: toVersion, ...(from !== undefined ? { effectiveFrom: from.toISOString() } : {}) };
      return { result: record, baseId: base.id, events: [newEvent('published', p, this.resource(record), details, { at: now })] };
    });
  }

  /**
   * Cancels version `version`'s schedule before its instant (publisher or admin): it never runs by
   * base id (pinned runs still reach it). 404 for an unknown base or version; 409 when it has no
   * schedule, started already or was cancelled. Emits `schedule cancelled`; answers the version.
   */
  async cancelSchedule(p: Principal, id: string, version: number): Promise<RecordRow> {
    requireCapability(p, 'publish', `cancel ${this.kind} schedules`);
    const found = await this.loadLive(p, id);
    return this.commit(async (trx) => {
      const base = await this.lockLive(trx, found.base.id, id);
      const record = await findVersion(trx, base.id, version);
      if (!record) throw new ArbiterError('not_found', `${this.kind} \`${base.id}\` has no version ${version}`);
      const row = (await timelineRowsOfBase(trx, base.id)).find((r) => r.version === version);
      const now = new Date();
      if (row?.cancelledAt != null) {
        throw new ArbiterError('conflict', `the schedule of version ${version} of ${this.kind} \`${base.id}\` was cancelled already`);
      }
      if (!row || row.effectiveFrom === null || row.effectiveFrom <= now) {
        throw new ArbiterError('conflict', `version ${version} of ${this.kind} \`${base.id}\` has started already: roll back instead`);
      }
      await cancelTimelineRow(trx, record.id, p.userId, now);
      await touchBase(trx, base.id);
      const event = newEvent(
        'schedule cancelled',
        p,
        this.resource(record),
        { version, effectiveFrom: row.effectiveFrom.toISOString() },
        { at: now },
      );
      return { result: record, baseId: base.id, events: [event] };
    });
  }

  private resource(r: RecordRow) {
    return { type: this.kind, id: r.id, baseId: r.baseId };
  }

  /** The content's own problems (its schema compiles), else those of what it names (only a valid content is looked up). */
  private async assertSavable(p: Principal, content: Partial<RecordContent>): Promise<void> {
    let problems = await this.spec.saveProblems(content);
    if (problems.length === 0 && content.schema) problems = await this.spec.schemaProblems(content.schema);
    if (problems.length === 0) problems = await this.spec.referenceProblems(content, this.deps.db, p.orgId);
    if (problems.length > 0) {
      throw new ArbiterError('validation_failed', `invalid ${this.kind}: ${problems.map((x) => x.message).join('; ')}`, problems);
    }
  }

  /**
   * A record of a live base of the caller's org, by record id or by base id; 404 for anything else
   * (never leaks other orgs). A base id stands for the base's draft when it has one, else for its
   * current record (its latest version), so routes that act on the base take either id.
   */
  private async loadLive(p: Principal, id: string): Promise<{ record: RecordRow; base: BaseRow }> {
    const found = isUuid(id)
      ? ((await findRecordWithBase(this.deps.db, id, p.orgId, this.kind)) ?? (await this.draftOrCurrentOfBase(p, id)))
      : null;
    if (!found || found.base.deletedAt !== null) throw new ArbiterError('not_found', `${this.kind} \`${id}\` not found`);
    return found;
  }

  private async draftOrCurrentOfBase(p: Principal, baseId: string): Promise<{ record: RecordRow; base: BaseRow } | null> {
    const current = await findCurrentOfBase(this.deps.db, baseId, p.orgId, this.kind);
    if (!current || current.record.status === 'draft') return current;
    const draft = await findDraft(this.deps.db, current.base.id);
    return draft ? { record: draft, base: current.base } : current;
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
      throw new ArbiterError(
        'dependency_unavailable',
        `the runnable index could not be updated for base \`${baseId}\`: it is retried in the background`,
        undefined,
        { cause: err },
      );
    }
  }

  /** Runs `fn` in a transaction with its events, then updates the runnable index and wakes the relay. */
  private async commit<T>(fn: (trx: Knex.Transaction) => Promise<Change<T>>): Promise<T> {
    let change: Change<T>;
    try {
      change = await this.deps.db.transaction(async (trx) => {
        const c = await fn(trx);
        await this.deps.events.enqueue(trx, c.events);
        return c;
      });
    } catch (err) {
      if (isImmutableVersionError(err))
        throw new ArbiterError('version_immutable', `${this.kind} versions are immutable`, undefined, { cause: err });
      if (isUniqueViolation(err))
        throw new ArbiterError('conflict', `a concurrent change to this ${this.kind} won: retry`, undefined, { cause: err });
      throw err;
    }
    if (change.events.length > 0) this.deps.events.committed();
    if (change.baseId !== undefined) await this.refreshIndex(change.baseId);
    return change.result;
  }
}

/** Longest an `effectiveFrom` may lie ahead: ten years. */
const MAX_SCHEDULE_AHEAD_MS = 10 * 365 * 24 * 3600 * 1000;

/** An `effectiveFrom` as a Date: 400 `validation_failed` unless it lies ahead of the registry's clock (and within ten years). */
function futureInstant(iso: string | undefined): Date | undefined {
  if (iso === undefined) return undefined;
  const at = Date.parse(iso);
  const now = Date.now();
  if (Number.isNaN(at) || at <= now || at > now + MAX_SCHEDULE_AHEAD_MS) {
    throw new ArbiterError('validation_failed', `\`effectiveFrom\` must be a future instant (within ten years): \`${iso}\` is not`, [
      { code: 'not_in_future', message: 'must lie after the registry clock and within ten years', path: 'effectiveFrom' },
    ]);
  }
  return new Date(at);
}

/** 404 of a run by base id at an instant before the base's first version took effect. */
export function beforeFirstVersion(kind: RunnableKind, id: string, first: number | undefined): ArbiterError {
  return new ArbiterError(
    'not_found',
    first === undefined
      ? `${kind} \`${id}\` has no version in effect`
      : `${kind} \`${id}\` has no version in effect at that instant: its first takes effect at ${new Date(first).toISOString()}`,
  );
}

function immutable(kind: RunnableKind, record: RecordRow): ArbiterError {
  return new ArbiterError(
    'version_immutable',
    `\`${record.id}\` is version ${record.version} of ${kind} \`${record.baseId}\`: versions are immutable, edit the base's draft instead`,
  );
}

/** Whether applying `edits` changes the record's publishable content (what its content hash covers). */
function changes(record: RecordRow, edits: Partial<RecordContent>): boolean {
  return Object.keys(edits).length > 0 && contentHashOf({ ...record, ...edits }) !== contentHashOf(record);
}

/** The fields of a patch that were given (undefined means "leave as is"; null clears a schema). */
function definedFields(patch: Partial<RecordContent>): Partial<RecordContent> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
}
