import {
  ArbiterError,
  hasCapability,
  newEvent,
  type ArbiterEvent,
  type EventResource,
  type FlowRecord,
  type PolicyRecord,
  type Principal,
  type ReviewInboxItem,
  type ReviewSummary,
  type RunnableKind,
  type Scope,
  type RolloutStart,
  type ShadowSummary,
} from '@arbiter/contracts';
import { cursorField, decodeCursor, pageFrom, type EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { v7 } from 'uuid';
import type { RecordView, RegistryPort } from './registry-port.js';
import {
  decideRequest,
  pendingRequests,
  insertRequest,
  latestRequest,
  latestRequests,
  lockDraft,
  markPublished,
  type RequestRow,
} from './repositories/reviews.js';
import { latestImpactReport } from './repositories/impact-reports.js';
import { z } from 'zod';

/** The inbox cursor: the last request's time and id. */
const InboxCursor = z.object({ at: cursorField.timestamp(), id: cursorField.uuid() });

/** What the service needs around it. */
export interface ReviewsDeps {
  db: Knex;
  registry: RegistryPort;
  /** The transactional outbox the events of each change go to. */
  events: EventOutbox<Knex.Transaction>;
  /** Bytes an impact report may take in a review summary (`reportBudget` of the bus limit). */
  maxReportBytes: number;
  now?: () => Date;
}

/** Per-call context: the HTTP request id, passed on to the registry for tracing. */
export interface CallContext {
  requestId?: string;
}

/**
 * The review summary of a draft from its latest request and its current content hash (docs/api.md#governance-review):
 * no request → `draft`; a request not yet published whose content hash differs from the draft's →
 * `draft` with `stale: true`; otherwise the request's state.
 */
export function summarize(
  kind: RunnableKind,
  draft: { recordId: string; baseId: string; contentHash: string },
  req: RequestRow | null,
): ReviewSummary {
  const base = { kind, recordId: draft.recordId, baseId: draft.baseId };
  if (req === null) {
    return {
      ...base,
      state: 'draft',
      requestId: null,
      requestedBy: null,
      requestedAt: null,
      decidedBy: null,
      decidedAt: null,
      comment: null,
      stale: false,
      checks: null,
    };
  }
  const stale = req.state !== 'published' && req.contentHash !== draft.contentHash;
  return {
    ...base,
    state: stale ? 'draft' : req.state,
    requestId: req.id,
    requestedBy: req.requestedBy,
    requestedAt: req.requestedAt.toISOString(),
    decidedBy: req.decidedBy,
    decidedAt: req.decidedAt?.toISOString() ?? null,
    comment: req.comment,
    stale,
    // The checks ran on the submitted content: once the draft changed they no longer say anything about it.
    checks:
      stale || req.checkedAt === null
        ? null
        : { passed: true, checkedAt: req.checkedAt.toISOString(), coverage: req.checkedCoverage, warnings: req.checkedWarnings },
  };
}

function requireCapability(p: Principal, scope: Scope, action: string): void {
  if (!hasCapability(p, scope)) {
    throw new ArbiterError(
      'forbidden',
      `role \`${p.role}\`${p.scopes ? ' with this key' : ''} may not ${action}: it needs the \`${scope}\` right`,
    );
  }
}

/**
 * The review workflow of docs/api.md#governance-review with governance on: submit → pending_approval →
 * approved | rejected; approved → published through the registry. Each change of a draft's
 * requests runs in one transaction that first takes the draft's row lock and queues its events in
 * the outbox. Drafts are read from the registry with the caller's principal (tenancy and visibility
 * are the registry's); the registry compares the approved content hash inside its publishing
 * transaction, so no edit can slip between the approval and the version.
 */
export class ReviewsService {
  private readonly now: () => Date;

  constructor(private readonly deps: ReviewsDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** The review summary of a draft, or of the base's draft given a version id; 404 when there is none. */
  async get(p: Principal, kind: RunnableKind, recordId: string, ctx: CallContext = {}): Promise<ReviewSummary> {
    requireCapability(p, 'view', `view ${kind} reviews`);
    const record = await this.load(p, kind, recordId, ctx);
    const draft = record.status === 'draft' ? record : await this.deps.registry.draftOf(p, kind, recordId, ctx.requestId);
    if (draft === null) {
      // A version published through review keeps its review readable under its own id.
      const req = await latestRequest(this.deps.db, record.recordId, p.orgId, kind);
      if (req !== null && req.state === 'published') return summarize(kind, record, req);
      throw new ArbiterError('not_found', `${kind} \`${recordId}\` is a version and its base has no draft: there is no review`);
    }
    const summary = summarize(kind, draft, await latestRequest(this.deps.db, draft.recordId, p.orgId, kind));
    // The impact report of the draft's current content: an edit changes the hash, so an old report is not shown.
    return {
      ...summary,
      impact: await latestImpactReport(this.deps.db, p, draft.recordId, draft.contentHash, this.deps.maxReportBytes),
      ...(await this.shadowOf(p, kind, draft, ctx)),
    };
  }

  /** The counts of the base's shadow when its candidate is `draft` (beside the impact report); nothing without a registry that tells. */
  private async shadowOf(
    p: Principal,
    kind: RunnableKind,
    draft: { recordId: string; baseId: string },
    ctx: CallContext,
  ): Promise<{ shadow?: ShadowSummary }> {
    if (this.deps.registry.shadowOf === undefined) return {};
    const report = await this.deps.registry.shadowOf(p, kind, draft.baseId, ctx.requestId);
    if (report === null || report.candidate.recordId !== draft.recordId) return {};
    const { sampled, compared, same, changed, errors, dropped, transitions, state, sampleRate, since } = report;
    return { shadow: { sampled, compared, same, changed, errors, dropped, transitions, state, sampleRate, since } };
  }

  /** The summaries of drafts the caller loaded (with their content hashes), in the given order. */
  async summaries(
    p: Principal,
    kind: RunnableKind,
    drafts: ReadonlyArray<{ recordId: string; baseId: string; contentHash: string }>,
  ): Promise<ReviewSummary[]> {
    requireCapability(p, 'view', `view ${kind} reviews`);
    const reqs = await latestRequests(
      this.deps.db,
      drafts.map((d) => d.recordId),
      p.orgId,
      kind,
    );
    return drafts.map((d) => summarize(kind, d, reqs.get(d.recordId) ?? null));
  }

  /**
   * A page of the org's drafts waiting for approval (publisher or admin), oldest request first,
   * each with its name, who asked and when. Drafts the caller can no longer load (deleted bases)
   * and requests made for content the draft no longer has (stale) wait for nobody and are left
   * out, so a page may hold fewer than `limit` items while `nextCursor` says more follow.
   */
  async inbox(
    p: Principal,
    query: { state: 'pending_approval'; limit: number; cursor?: string },
    ctx: CallContext = {},
  ): Promise<{ items: ReviewInboxItem[]; nextCursor: string | null }> {
    requireCapability(p, 'publish', 'list drafts waiting for review');
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, InboxCursor);
    const rows = await pendingRequests(this.deps.db, p.orgId, {
      after: after === undefined ? undefined : { at: new Date(after.at), id: after.id },
      limit: query.limit,
    });
    const page = pageFrom(
      rows,
      query.limit,
      (r) => r,
      (last) => ({ at: last.requestedAt.toISOString(), id: last.id }),
    );
    const drafts = await Promise.all(
      page.items.map((r) =>
        this.deps.registry.get(p, r.kind, r.draftId, ctx.requestId).catch((err: unknown) => {
          if (err instanceof ArbiterError && err.code === 'not_found') return null;
          throw err;
        }),
      ),
    );
    const items: ReviewInboxItem[] = [];
    page.items.forEach((req, i) => {
      const draft = drafts[i];
      if (!draft || draft.status !== 'draft' || draft.contentHash !== req.contentHash) return;
      items.push({ ...summarize(req.kind, draft, req), name: draft.name });
    });
    return { items, nextCursor: page.nextCursor };
  }

  /**
   * Submits a draft for approval (editor and up): a new request for its current content, state
   * `pending_approval`, event `approval requested`. The registry first runs the publish checks
   * on the draft (422 `cannot_publish` with every reason, nothing submitted), so a reviewer only
   * sees drafts that could be published; the final publish runs them again. With the org's
   * `minCoverage` above 0, a draft whose saved tests cover less is refused too (422
   * `coverage_below_minimum`, nothing submitted). 409 `conflict` while the
   * latest request is pending or approved for this very content; a rejected or stale draft may be
   * submitted again.
   */
  async submit(p: Principal, kind: RunnableKind, recordId: string, ctx: CallContext = {}, minCoverage = 0): Promise<ReviewSummary> {
    requireCapability(p, 'edit', `submit ${kind} publish requests`);
    const draft = await this.load(p, kind, recordId, ctx);
    if (draft.status !== 'draft') {
      throw new ArbiterError(
        'version_immutable',
        `\`${recordId}\` is version ${draft.version} of ${kind} \`${draft.baseId}\`: versions are immutable, edit the base's draft instead`,
      );
    }
    const checked = await this.deps.registry.publishCheck(p, kind, draft.recordId, ctx.requestId, minCoverage);
    if (checked.problems.length > 0) {
      const n = checked.problems.length;
      throw new ArbiterError(
        'cannot_publish',
        `${kind} draft \`${recordId}\` cannot be submitted for review: its publish checks found ${n} problem${n === 1 ? '' : 's'}; nothing was submitted`,
        checked.problems,
      );
    }
    if (checked.contentHash !== draft.contentHash) {
      throw new ArbiterError('conflict', `${kind} draft \`${recordId}\` changed while it was being submitted: submit it again`);
    }
    const checkedAt = this.now();
    return this.change(p, kind, draft, async (trx, latest, now) => {
      if (latest !== null && latest.contentHash === draft.contentHash) {
        if (latest.state === 'pending_approval')
          throw new ArbiterError('conflict', `${kind} draft \`${recordId}\` is already pending approval (request \`${latest.id}\`)`);
        if (latest.state === 'approved')
          throw new ArbiterError('conflict', `${kind} draft \`${recordId}\` is already approved (request \`${latest.id}\`): publish it`);
      }
      const req: RequestRow = {
        id: v7(),
        draftId: draft.recordId,
        orgId: p.orgId,
        kind,
        baseId: draft.baseId,
        state: 'pending_approval',
        contentHash: draft.contentHash,
        requestedBy: p.userId,
        requestedAt: now,
        decidedBy: null,
        decidedAt: null,
        comment: null,
        publishedBy: null,
        publishedAt: null,
        publishedVersion: null,
        checkedAt,
        checkedCoverage: checked.coverage ?? null,
        checkedWarnings: checked.warnings ?? null,
      };
      await insertRequest(trx, req);
      const details = { requestId: req.id, contentHash: draft.contentHash };
      return { req, event: newEvent('approval requested', p, reviewedResource(req, draft), details, { at: now }) };
    });
  }

  /** Approves the latest request (publisher or admin, never its requester). */
  approve(p: Principal, kind: RunnableKind, recordId: string, opts: { requestId?: string; comment?: string }, ctx: CallContext = {}) {
    return this.decide(p, kind, recordId, 'approved', opts, ctx);
  }

  /** Rejects the latest request (publisher or admin, never its requester). */
  reject(p: Principal, kind: RunnableKind, recordId: string, opts: { requestId?: string; comment?: string }, ctx: CallContext = {}) {
    return this.decide(p, kind, recordId, 'rejected', opts, ctx);
  }

  /**
   * Publishes an approved, unchanged draft (publisher or admin, never the requester) through the
   * registry, which compares the approved content hash under its lock: 409 `review_stale` when the
   * draft changed, 422 `cannot_publish` with every reason, else the new version (state `published`).
   * The draft's row lock is held meanwhile, so two publishers of one request make one version:
   * the second is refused (409 `conflict`, already published).
   */
  async publish(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    opts: { requestId?: string; effectiveFrom?: string; rollout?: RolloutStart },
    ctx: CallContext = {},
  ): Promise<{ review: ReviewSummary; record: PolicyRecord | FlowRecord }> {
    requireCapability(p, 'publish', `publish ${kind} reviews`);
    let record = await this.load(p, kind, recordId, ctx);
    if (record.status !== 'draft' && (await latestRequest(this.deps.db, record.recordId, p.orgId, kind)) === null) {
      // A version id that was never a reviewed draft stands for its base's draft, as in `get`.
      record = (await this.deps.registry.draftOf(p, kind, recordId, ctx.requestId)) ?? record;
    }
    let record2: PolicyRecord | FlowRecord | undefined;
    const review = await this.change(p, kind, record, async (trx, latest, now) => {
      const req = this.actionable(p, kind, recordId, latest, opts.requestId, record);
      if (req.state === 'published') {
        throw new ArbiterError('conflict', `request \`${req.id}\` was already published as version ${req.publishedVersion}`);
      }
      if (req.state !== 'approved') {
        throw new ArbiterError(
          'not_approved',
          `the latest request of ${kind} draft \`${recordId}\` is ${req.state}, not approved: nothing was published`,
        );
      }
      if (record.status !== 'draft' && record.contentHash !== req.contentHash) {
        throw new ArbiterError(
          'version_immutable',
          `\`${recordId}\` is a version of ${kind} \`${record.baseId}\`: it has nothing to publish`,
        );
      }
      if (record.contentHash !== req.contentHash) throw stale(kind, recordId);
      // Still under the draft's lock: a crash after the registry's commit leaves the request
      // approved, and a retry gets `already_published` from the registry, then records it.
      const out = await this.deps.registry.publishReviewed(
        p,
        kind,
        record.recordId,
        req.contentHash,
        req.id,
        ctx.requestId,
        opts.effectiveFrom,
        opts.rollout,
      );
      record2 = out.record;
      const published = await markPublished(trx, req.id, { by: p.userId, at: now, version: out.version });
      return { req: published };
    });
    return { review, record: record2! };
  }

  private async decide(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    to: 'approved' | 'rejected',
    opts: { requestId?: string; comment?: string },
    ctx: CallContext,
  ): Promise<ReviewSummary> {
    const verb = to === 'approved' ? 'approve' : 'reject';
    requireCapability(p, 'publish', `${verb} ${kind} publish requests`);
    const record = await this.load(p, kind, recordId, ctx);
    const draft = record.status === 'draft' ? record : await this.deps.registry.draftOf(p, kind, recordId, ctx.requestId);
    if (draft === null) throw new ArbiterError('not_found', `${kind} \`${recordId}\` has no draft to ${verb}`);
    // A flow is approved only when it would run reviewed text: the publish makes the same check under its lock.
    const unreviewed =
      to === 'approved' && kind === 'flow' ? await this.deps.registry.flowReviewProblems(p, draft.recordId, ctx.requestId) : [];
    return this.change(p, kind, draft, async (trx, latest, now) => {
      const req = this.actionable(p, kind, recordId, latest, opts.requestId, draft);
      if (req.state !== 'published' && req.contentHash !== draft.contentHash) throw stale(kind, recordId);
      if (req.state !== 'pending_approval') {
        throw new ArbiterError('conflict', `request \`${req.id}\` is ${req.state}, not pending approval: it cannot be ${to}`);
      }
      if (unreviewed.length > 0) {
        throw new ArbiterError(
          'cannot_publish',
          `flow draft \`${recordId}\` cannot be approved: ${unreviewed.length} of its policy nodes would run text that was never reviewed`,
          unreviewed,
        );
      }
      const comment = opts.comment === undefined || opts.comment === '' ? null : opts.comment;
      const decided = await decideRequest(trx, req.id, { state: to, by: p.userId, at: now, comment });
      const details = { requestId: decided.id, ...(comment === null ? {} : { comment }) };
      return { req: decided, event: newEvent(to, p, reviewedResource(decided, draft), details, { at: now }) };
    });
  }

  /**
   * The latest request when the caller may act on it: it exists, is the one the caller saw, and
   * neither the request nor any change of the content under review since the last published
   * version (the draft's `authors`) is the caller's own.
   */
  private actionable(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    latest: RequestRow | null,
    seen: string | undefined,
    draft: RecordView,
  ): RequestRow {
    if (latest === null) throw new ArbiterError('not_approved', `${kind} draft \`${recordId}\` has no publish request: submit it first`);
    if (seen !== undefined && seen !== latest.id) {
      throw new ArbiterError(
        'conflict',
        `request \`${seen}\` is not the latest publish request of ${kind} draft \`${recordId}\` (that is \`${latest.id}\`)`,
      );
    }
    if (latest.requestedBy === p.userId) {
      throw new ArbiterError(
        'separation_of_duties',
        `\`${p.userId}\` made request \`${latest.id}\` and may not approve, reject or publish it`,
      );
    }
    if (draft.status === 'draft' && draft.authors.includes(p.userId)) {
      throw new ArbiterError(
        'separation_of_duties',
        `\`${p.userId}\` changed ${kind} draft \`${recordId}\` since its last published version and may not approve, reject or publish request \`${latest.id}\``,
      );
    }
    return latest;
  }

  /**
   * The record an id names for a review: a record id is that record; a base id is the base's draft,
   * else (no draft) its latest version, as a version id is handled by each caller.
   */
  private async load(p: Principal, kind: RunnableKind, id: string, ctx: CallContext): Promise<RecordView> {
    const record = await this.deps.registry.get(p, kind, id, ctx.requestId);
    if (record.status === 'draft' || record.baseId !== id) return record;
    return (await this.deps.registry.draftOf(p, kind, id, ctx.requestId)) ?? record;
  }

  /** Runs `fn` under the draft's row lock with its latest request, queues its event, wakes the relay and answers the summary. */
  private async change(
    p: Principal,
    kind: RunnableKind,
    draft: RecordView,
    fn: (trx: Knex.Transaction, latest: RequestRow | null, now: Date) => Promise<{ req: RequestRow; event?: ArbiterEvent }>,
  ): Promise<ReviewSummary> {
    const out = await this.deps.db.transaction(async (trx) => {
      await lockDraft(trx, { draftId: draft.recordId, orgId: p.orgId, kind, baseId: draft.baseId });
      const latest = await latestRequest(trx, draft.recordId, p.orgId, kind);
      const r = await fn(trx, latest, this.now());
      if (r.event) await this.deps.events.enqueue(trx, [r.event]);
      return r;
    });
    if (out.event) this.deps.events.committed();
    return summarize(kind, draft, out.req);
  }
}

/** What a review event is about: the draft under review. */
function reviewedResource(req: RequestRow, draft: RecordView): EventResource {
  return { type: req.kind, id: draft.recordId, baseId: draft.baseId };
}

function stale(kind: RunnableKind, recordId: string): ArbiterError {
  return new ArbiterError(
    'review_stale',
    `${kind} draft \`${recordId}\` changed after its publish request was made: submit it for approval again`,
  );
}
