import {
  GovernanceSubject,
  ImpactAnalysisRequest,
  ReviewDecisionRequest,
  ReviewPublishRequest,
  ReviewSummariesRequest,
  ReviewTargetRequest,
  ReviewInboxRequest,
  type ReviewInboxPage,
  type ReviewPublishReply,
  type ReviewSummariesReply,
  type ReviewSummary,
} from '@arbiter/contracts';
import { defineEndpoint, type ServiceDef } from '@arbiter/service-kit';
import type { ImpactService } from './impact-service.js';
import type { ReviewsService } from './reviews-service.js';

/** The `governance` NATS service: thin handlers from {@link GovernanceSubject} to the reviews service. */
export function governanceService(reviews: ReviewsService, version: string, impact?: ImpactService): ServiceDef {
  return {
    name: 'governance',
    version,
    description: 'Review of policy and flow drafts: publish requests, approval, rejection, publication through the registry',
    endpoints: {
      submit: defineEndpoint({
        subject: GovernanceSubject.submit,
        request: ReviewTargetRequest,
        handler: ({ principal, kind, recordId, minCoverage }, ctx): Promise<ReviewSummary> =>
          reviews.submit(principal, kind, recordId, { requestId: ctx.requestId }, minCoverage),
      }),
      get: defineEndpoint({
        subject: GovernanceSubject.get,
        request: ReviewTargetRequest,
        handler: ({ principal, kind, recordId }, ctx): Promise<ReviewSummary> =>
          reviews.get(principal, kind, recordId, { requestId: ctx.requestId }),
      }),
      approve: defineEndpoint({
        subject: GovernanceSubject.approve,
        request: ReviewDecisionRequest,
        handler: ({ principal, kind, recordId, requestId, comment }, ctx): Promise<ReviewSummary> =>
          reviews.approve(principal, kind, recordId, { requestId, comment }, { requestId: ctx.requestId }),
      }),
      reject: defineEndpoint({
        subject: GovernanceSubject.reject,
        request: ReviewDecisionRequest,
        handler: ({ principal, kind, recordId, requestId, comment }, ctx): Promise<ReviewSummary> =>
          reviews.reject(principal, kind, recordId, { requestId, comment }, { requestId: ctx.requestId }),
      }),
      publish: defineEndpoint({
        subject: GovernanceSubject.publish,
        request: ReviewPublishRequest,
        handler: ({ principal, kind, recordId, requestId, effectiveFrom, rollout }, ctx): Promise<ReviewPublishReply> =>
          reviews.publish(principal, kind, recordId, { requestId, effectiveFrom, rollout }, { requestId: ctx.requestId }),
      }),
      ...(impact
        ? {
            impact: defineEndpoint({
              subject: GovernanceSubject.impact,
              request: ImpactAnalysisRequest,
              handler: ({ principal, kind, recordId, ...req }, ctx) => impact.analyse(principal, kind, recordId, req, ctx.requestId),
            }),
          }
        : {}),
      inbox: defineEndpoint({
        subject: GovernanceSubject.inbox,
        request: ReviewInboxRequest,
        handler: ({ principal, ...query }, ctx): Promise<ReviewInboxPage> => reviews.inbox(principal, query, { requestId: ctx.requestId }),
      }),
      summaries: defineEndpoint({
        subject: GovernanceSubject.summaries,
        request: ReviewSummariesRequest,
        handler: async ({ principal, kind, drafts }): Promise<ReviewSummariesReply> => ({
          items: await reviews.summaries(principal, kind, drafts),
        }),
      }),
    },
  };
}
