import { ImpactReport } from './decisions.js';
import { z } from 'zod';
import { Principal } from './principal.js';
import { FlowRecord, PolicyRecord, RecordIdParam, RecordReview } from './registry.js';
import { RunnableKind } from './runnable-index.js';

/**
 * Request/reply subjects of the governance service (issue 11, spec §3, DESIGN.md §5 Review),
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
  /** Impact analysis of a policy or flow record (`ImpactAnalysisRequest` → `ImpactReport`). */
  impact: 'governance.impact',
} as const;
export type GovernanceSubject = (typeof GovernanceSubject)[keyof typeof GovernanceSubject];

/** Review states of a draft (spec §2.3, §3). */
export const ReviewState = RecordReview.shape.state;
export type ReviewState = z.infer<typeof ReviewState>;

const reviewFields = {
  baseId: z.uuid(),
  /** The latest impact report of the draft's current content; null when there is none or the draft changed since. */
  impact: ImpactReport.nullable().optional(),
  state: ReviewState,
  requestId: z.uuid().nullable().describe('The latest publish request of the draft; null when it was never submitted'),
  requestedBy: z.string().nullable(),
  requestedAt: z.iso.datetime().nullable(),
  decidedBy: z.string().nullable().describe('Who approved or rejected the latest request'),
  decidedAt: z.iso.datetime().nullable(),
  comment: z.string().nullable().describe('Comment of the approval or rejection'),
  stale: z.boolean().describe('The draft changed after the latest request was submitted or approved; state is then `draft`'),
};

/** The review summary of a draft, as the bus carries it: the record id under `recordId`, with its kind. */
export const ReviewSummary = z.object({ kind: RunnableKind, recordId: z.uuid(), ...reviewFields });
export type ReviewSummary = z.infer<typeof ReviewSummary>;

/** The review summary of a policy draft over HTTP (DESIGN.md §5). */
export const PolicyReview = z.object({ policyId: z.uuid(), ...reviewFields });
export type PolicyReview = z.infer<typeof PolicyReview>;
/** The review summary of a flow draft over HTTP (DESIGN.md §5). */
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
});
export type ReviewPublishBody = z.infer<typeof ReviewPublishBody>;

const target = { principal: Principal, kind: RunnableKind, recordId: RecordIdParam };

/** Request of `governance.submit` (a `PUT` with a non-draft status when the org has governance on) and `governance.get`. */
export const ReviewTargetRequest = z.strictObject(target);
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
