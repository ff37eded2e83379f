import { CoverageSummary } from './coverage.js';
import { ImpactReport } from './decisions.js';
import { z } from 'zod';
import { RolloutStart } from './rollout.js';
import { Principal } from './principal.js';
import { EffectiveFrom, FlowRecord, PolicyRecord, RecordIdParam, RecordReview, StaticCheckWarning } from './registry.js';
import { RunnableKind } from './runnable-index.js';
import { ShadowSummary } from './shadow.js';

/**
 * Request/reply subjects of the governance service (docs/api.md#governance-review, docs/design/governance.md),
 * relative to the bus prefix. One queue group (`governance`) serves them all. Every request carries
 * the caller's `principal`; the governance service reads drafts from, and publishes through, the
 * registry with that principal, so tenancy and visibility are the registry's.
 */
export const GovernanceSubject = {
  submit: 'governance.submit',
  get: 'governance.get',
  approve: 'governance.approve',
  reject: 'governance.reject',
  publish: 'governance.publish',
  summaries: 'governance.summaries',
  /** The org's drafts waiting for approval (`ReviewInboxRequest` → `ReviewInboxPage`). */
  inbox: 'governance.inbox',
  /** Impact analysis of a policy or flow record (`ImpactAnalysisRequest` → `ImpactReport`). */
  impact: 'governance.impact',
} as const;
export type GovernanceSubject = (typeof GovernanceSubject)[keyof typeof GovernanceSubject];

/** Review states of a draft (docs/api.md#governance-review). */
export const ReviewState = RecordReview.shape.state;
export type ReviewState = z.infer<typeof ReviewState>;

/** The publish checks of a draft at submission: a request is only made when they pass, so `passed` is true. */
export const ReviewChecks = z.object({
  passed: z.boolean().describe('The publish checks (rule, schema, saved tests) passed when the draft was submitted'),
  checkedAt: z.iso.datetime(),
  coverage: CoverageSummary.nullable()
    .optional()
    .describe(
      "What the draft's saved tests covered when it was submitted (docs/api.md#saved-tests-and-coverage); null for a request made before coverage was kept",
    ),
  warnings: z
    .array(StaticCheckWarning)
    .nullable()
    .optional()
    .describe(
      "The static checks' warnings of the draft when it was submitted (docs/api.md#static-checks); null for a request made before they were kept",
    ),
});
export type ReviewChecks = z.infer<typeof ReviewChecks>;

const reviewFields = {
  baseId: z.uuid(),
  /** The latest impact report of the draft's current content; null when there is none or the draft changed since. */
  impact: ImpactReport.nullable().optional(),
  /** The counts of the base's shadow whose candidate is this draft (docs/api.md#shadow-runs); absent when there is none. */
  shadow: ShadowSummary.optional(),
  state: ReviewState,
  requestId: z.uuid().nullable().describe('The latest publish request of the draft; null when it was never submitted'),
  requestedBy: z.string().nullable(),
  requestedAt: z.iso.datetime().nullable(),
  decidedBy: z.string().nullable().describe('Who approved or rejected the latest request'),
  decidedAt: z.iso.datetime().nullable(),
  comment: z.string().nullable().describe('Comment of the approval or rejection'),
  stale: z.boolean().describe('The draft changed after the latest request was submitted or approved; state is then `draft`'),
  checks: ReviewChecks.nullable()
    .optional()
    .describe('The publish checks run when the latest request was submitted; null when there is no request (or it predates them)'),
};

/** The review summary of a draft, as the bus carries it: the record id under `recordId`, with its kind. */
export const ReviewSummary = z.object({ kind: RunnableKind, recordId: z.uuid(), ...reviewFields });
export type ReviewSummary = z.infer<typeof ReviewSummary>;

/** The review summary of a policy draft over HTTP (docs/api.md#governance-review). */
export const PolicyReview = z.object({ policyId: z.uuid(), ...reviewFields });
export type PolicyReview = z.infer<typeof PolicyReview>;
/** The review summary of a flow draft over HTTP (docs/api.md#governance-review). */
export const FlowReview = z.object({ flowId: z.uuid(), ...reviewFields });
export type FlowReview = z.infer<typeof FlowReview>;

/** A review comment; trimmed, at most 2000 characters. */
export const ReviewComment = z.string().trim().max(2000);

/** Body of `POST .../review/approve` and `.../review/reject`: all optional; an empty body is `{}`. Unknown keys are rejected. */
export const ReviewDecisionBody = z.strictObject({
  requestId: z.uuid().optional().describe('The request the caller saw; 409 `conflict` when it is not the latest'),
  comment: ReviewComment.optional(),
});
export type ReviewDecisionBody = z.infer<typeof ReviewDecisionBody>;

/** Body of `POST .../review/publish`: all optional; an empty body is `{}`. Unknown keys are rejected. */
export const ReviewPublishBody = z.strictObject({
  requestId: z.uuid().optional().describe('The request the caller saw; 409 `conflict` when it is not the latest'),
  effectiveFrom: EffectiveFrom.optional(),
  rollout: RolloutStart.optional().describe('The new version starts as a staged rollout (docs/api.md#staged-rollouts)'),
});
export type ReviewPublishBody = z.infer<typeof ReviewPublishBody>;

const target = { principal: Principal, kind: RunnableKind, recordId: RecordIdParam };

/**
 * Request of `governance.submit` (a `PUT` with a non-draft status when the org has governance on) and `governance.get`;
 * a submission carries the org's `minCoverage` (absent or 0: no minimum), which the registry's publish check applies.
 */
export const ReviewTargetRequest = z.strictObject({ ...target, minCoverage: z.number().int().min(0).max(100).optional() });
export type ReviewTargetRequest = z.input<typeof ReviewTargetRequest>;

/** Request of `governance.approve` and `governance.reject`. */
export const ReviewDecisionRequest = z.strictObject({ ...target, ...ReviewDecisionBody.shape });
export type ReviewDecisionRequest = z.input<typeof ReviewDecisionRequest>;

/** Request of `governance.publish`. */
export const ReviewPublishRequest = z.strictObject({ ...target, ...ReviewPublishBody.shape });
export type ReviewPublishRequest = z.input<typeof ReviewPublishRequest>;

/** Reply of `governance.publish`: the review (state `published`) and the new version. */
export const ReviewPublishReply = z.object({ review: ReviewSummary, record: z.union([PolicyRecord, FlowRecord]) });
export type ReviewPublishReply = z.infer<typeof ReviewPublishReply>;

/** Most drafts one `governance.summaries` call answers for (a page of versions or of a list). */
export const MAX_SUMMARIES = 200;

/**
 * Request of `governance.summaries`: the review state of drafts the caller already loaded from the
 * registry (so it saw them), each with its current content hash. Only the principal's org is read.
 */
export const ReviewSummariesRequest = z.strictObject({
  principal: Principal,
  kind: RunnableKind,
  drafts: z.array(z.strictObject({ recordId: z.uuid(), baseId: z.uuid(), contentHash: z.string().min(1).max(128) })).max(MAX_SUMMARIES),
});
export type ReviewSummariesRequest = z.input<typeof ReviewSummariesRequest>;

/** Reply of `governance.summaries`: one summary per given draft, in the same order. */
export const ReviewSummariesReply = z.object({ items: z.array(ReviewSummary) });
export type ReviewSummariesReply = z.infer<typeof ReviewSummariesReply>;

/** States `GET /reviews` lists; only drafts waiting for a decision for now. */
export const ReviewInboxState = z.enum(['pending_approval']);
export type ReviewInboxState = z.infer<typeof ReviewInboxState>;

/** Query of `GET /reviews`: `state` (default and only value `pending_approval`), `limit` (default 50, max 200), `cursor`. */
export const ReviewInboxQuery = z.object({
  state: ReviewInboxState.default('pending_approval').describe('Only `pending_approval`: drafts waiting for approval'),
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size (1–200)'),
  cursor: z.string().min(1).max(512).optional().describe('Opaque cursor from a previous page'),
});
export type ReviewInboxQuery = z.infer<typeof ReviewInboxQuery>;

/** Request of `governance.inbox`: a page of the principal's org's drafts waiting for approval, oldest request first. */
export const ReviewInboxRequest = z.strictObject({ principal: Principal, ...ReviewInboxQuery.shape });
export type ReviewInboxRequest = z.input<typeof ReviewInboxRequest>;

/** One draft waiting for review: its review summary (who asked and when) with its base's name. */
export const ReviewInboxItem = ReviewSummary.extend({ name: z.string().describe('The name of the draft') });
export type ReviewInboxItem = z.infer<typeof ReviewInboxItem>;

/** A page of {@link ReviewInboxItem}s: `{items, nextCursor}`. */
export const ReviewInboxPage = z.object({ items: z.array(ReviewInboxItem), nextCursor: z.string().nullable() });
export type ReviewInboxPage = z.infer<typeof ReviewInboxPage>;
