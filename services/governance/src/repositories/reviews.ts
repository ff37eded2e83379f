import type { CoverageSummary, RunnableKind, StaticCheckWarning } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';

/** State of a stored publish request (`draft` is never stored: it is the absence of a current request). */
export type RequestState = 'pending_approval' | 'approved' | 'rejected' | 'published';

/** A publish request as stored. */
export interface RequestRow {
  id: string;
  draftId: string;
  orgId: string;
  kind: RunnableKind;
  baseId: string;
  state: RequestState;
  contentHash: string;
  requestedBy: string;
  requestedAt: Date;
  decidedBy: string | null;
  decidedAt: Date | null;
  comment: string | null;
  publishedBy: string | null;
  publishedAt: Date | null;
  publishedVersion: number | null;
  /** When the draft's publish checks passed at submission; null for requests made before they ran there. */
  checkedAt: Date | null;
  /** What the saved tests covered at submission; null for a request made before it was kept. */
  checkedCoverage: CoverageSummary | null;
  /** The static checks' warnings at submission; null for a request made before they were kept. */
  checkedWarnings: StaticCheckWarning[] | null;
}

interface RequestColumns {
  id: string;
  draft_id: string;
  org_id: string;
  kind: RunnableKind;
  base_id: string;
  state: RequestState;
  content_hash: string;
  requested_by: string;
  requested_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
  comment: string | null;
  published_by: string | null;
  published_at: Date | null;
  published_version: number | null;
  checked_at: Date | null;
  checked_coverage: CoverageSummary | null;
  checked_warnings: StaticCheckWarning[] | null;
}

function requestOf(r: RequestColumns): RequestRow {
  return {
    id: r.id,
    draftId: r.draft_id,
    orgId: r.org_id,
    kind: r.kind,
    baseId: r.base_id,
    state: r.state,
    contentHash: r.content_hash,
    requestedBy: r.requested_by,
    requestedAt: r.requested_at,
    decidedBy: r.decided_by,
    decidedAt: r.decided_at,
    comment: r.comment,
    publishedBy: r.published_by,
    publishedAt: r.published_at,
    publishedVersion: r.published_version,
    checkedAt: r.checked_at,
    checkedCoverage: r.checked_coverage,
    checkedWarnings: r.checked_warnings,
  };
}

/**
 * Takes the row lock of a draft's reviews, creating the row on first use. Every change of the
 * draft's requests runs after it, so they are serialized per draft across replicas.
 */
export async function lockDraft(db: Db, d: { draftId: string; orgId: string; kind: RunnableKind; baseId: string }): Promise<void> {
  await db('governance_drafts')
    .insert({ draft_id: d.draftId, org_id: d.orgId, kind: d.kind, base_id: d.baseId })
    .onConflict('draft_id')
    .ignore();
  await db('governance_drafts').where({ draft_id: d.draftId }).forUpdate().first('draft_id');
}

/** The latest request of a draft of `orgId` and `kind`, if any. */
export async function latestRequest(db: Db, draftId: string, orgId: string, kind: RunnableKind): Promise<RequestRow | null> {
  const row = (await db('governance_requests as r')
    .join('governance_drafts as d', 'd.latest_request_id', 'r.id')
    .where({ 'd.draft_id': draftId, 'd.org_id': orgId, 'd.kind': kind })
    .first('r.*')) as RequestColumns | undefined;
  return row ? requestOf(row) : null;
}

/** The latest requests of several drafts of `orgId` and `kind`, by draft id. */
export async function latestRequests(
  db: Db,
  draftIds: readonly string[],
  orgId: string,
  kind: RunnableKind,
): Promise<Map<string, RequestRow>> {
  const out = new Map<string, RequestRow>();
  if (draftIds.length === 0) return out;
  const rows = (await db('governance_requests as r')
    .join('governance_drafts as d', 'd.latest_request_id', 'r.id')
    .whereIn('d.draft_id', draftIds)
    .andWhere({ 'd.org_id': orgId, 'd.kind': kind })
    .select('r.*')) as RequestColumns[];
  for (const row of rows) out.set(row.draft_id, requestOf(row));
  return out;
}

/** Records a new request and makes it the draft's latest (call after {@link lockDraft}). */
export async function insertRequest(db: Db, r: RequestRow): Promise<void> {
  await db('governance_requests').insert({
    id: r.id,
    draft_id: r.draftId,
    org_id: r.orgId,
    kind: r.kind,
    base_id: r.baseId,
    state: r.state,
    content_hash: r.contentHash,
    requested_by: r.requestedBy,
    requested_at: r.requestedAt,
    checked_at: r.checkedAt,
    checked_coverage: r.checkedCoverage === null ? null : JSON.stringify(r.checkedCoverage),
    checked_warnings: r.checkedWarnings === null ? null : JSON.stringify(r.checkedWarnings),
  });
  await db('governance_drafts').where({ draft_id: r.draftId }).update({ latest_request_id: r.id });
}

/** Records an approval or a rejection of a request. */
export async function decideRequest(
  db: Db,
  requestId: string,
  d: { state: 'approved' | 'rejected'; by: string; at: Date; comment: string | null },
): Promise<RequestRow> {
  const [row] = (await db('governance_requests')
    .where({ id: requestId })
    .update({ state: d.state, decided_by: d.by, decided_at: d.at, comment: d.comment })
    .returning('*')) as RequestColumns[];
  return requestOf(row);
}

/** Records that a request was published as `version`. */
export async function markPublished(db: Db, requestId: string, p: { by: string; at: Date; version: number }): Promise<RequestRow> {
  const [row] = (await db('governance_requests')
    .where({ id: requestId })
    .update({ state: 'published', published_by: p.by, published_at: p.at, published_version: p.version })
    .returning('*')) as RequestColumns[];
  return requestOf(row);
}

/**
 * A page of the org's drafts whose latest request is pending approval, oldest request first, after
 * the (requestedAt, id) position `after`; `limit + 1` rows so the caller knows whether more follow.
 */
export async function pendingRequests(
  db: Db,
  orgId: string,
  page: { after?: { at: Date; id: string }; limit: number },
): Promise<RequestRow[]> {
  const q = db('governance_requests as r')
    .join('governance_drafts as d', 'd.latest_request_id', 'r.id')
    .where({ 'r.org_id': orgId, 'r.state': 'pending_approval' })
    .orderBy([
      { column: 'r.requested_at', order: 'asc' },
      { column: 'r.id', order: 'asc' },
    ])
    .limit(page.limit + 1)
    .select('r.*');
  if (page.after) void q.andWhereRaw('(r.requested_at, r.id) > (?, ?)', [page.after.at, page.after.id]);
  return ((await q) as RequestColumns[]).map(requestOf);
}
