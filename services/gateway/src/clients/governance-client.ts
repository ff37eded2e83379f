import {
  GovernanceSubject,
  ReviewInboxPage,
  ReviewPublishReply,
  ReviewSummariesReply,
  ReviewSummary,
  type FlowRecord,
  type PolicyRecord,
  type Principal,
  type ReviewDecisionBody,
  type ReviewDecisionRequest,
  type ReviewInboxQuery,
  type ReviewInboxRequest,
  type ReviewPublishBody,
  type ReviewPublishRequest,
  type ReviewSummariesRequest,
  type ReviewTargetRequest,
  type RunnableKind,
} from '@arbiter/contracts';
import type { Bus, RequestOptions } from '@arbiter/service-kit';
import type { z } from 'zod';
import type { RegistryCallContext } from './registry-client.js';

/** A draft whose review state is asked for: the record the caller loaded, with its content hash. */
export interface DraftRef {
  recordId: string;
  baseId: string;
  contentHash: string;
}

/**
 * What the gateway needs from the governance service: the review workflow of a draft.
 * Authorization, tenancy and the state rules are the governance service's (and the registry's);
 * refusals arrive as `ArbiterError`s with their code. Nobody listening → `dependency_unavailable`.
 */
export interface GovernanceClient {
  /** Submits the draft for approval (a `PUT` with a non-draft status when the org has governance on). */
  submit(p: Principal, kind: RunnableKind, recordId: string, ctx?: RegistryCallContext, minCoverage?: number): Promise<ReviewSummary>;
  /** The review summary of a draft, or of the base's draft given a version id. */
  get(p: Principal, kind: RunnableKind, recordId: string, ctx?: RegistryCallContext): Promise<ReviewSummary>;
  /** Approves the latest request. */
  approve(p: Principal, kind: RunnableKind, recordId: string, body: ReviewDecisionBody, ctx?: RegistryCallContext): Promise<ReviewSummary>;
  /** Rejects the latest request. */
  reject(p: Principal, kind: RunnableKind, recordId: string, body: ReviewDecisionBody, ctx?: RegistryCallContext): Promise<ReviewSummary>;
  /** Publishes the approved, unchanged draft. */
  publish(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    body: ReviewPublishBody,
    ctx?: RegistryCallContext,
  ): Promise<{ review: ReviewSummary; record: PolicyRecord | FlowRecord }>;
  /** A page of the org's drafts waiting for approval (publisher or admin). */
  inbox(p: Principal, query: ReviewInboxQuery, ctx?: RegistryCallContext): Promise<ReviewInboxPage>;
  /** The review summaries of drafts, in order (one bus call; a short deadline: it only decorates records). */
  summaries(p: Principal, kind: RunnableKind, drafts: DraftRef[], ctx?: RegistryCallContext): Promise<ReviewSummary[]>;
}

/**
 * The production {@link GovernanceClient}: request/reply on `<prefix>.governance.*`. Its deadline
 * (`GOVERNANCE_TIMEOUT_MS`) must exceed the governance service's own deadline for the registry
 * (`GOVERNANCE_REGISTRY_TIMEOUT_MS`), which exceeds the registry's publish-check deadline.
 */
export class NatsGovernanceClient implements GovernanceClient {
  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
    private readonly summaryTimeoutMs = Math.min(1000, timeoutMs),
  ) {}

  submit(p: Principal, kind: RunnableKind, recordId: string, ctx?: RegistryCallContext, minCoverage?: number): Promise<ReviewSummary> {
    const payload = { principal: p, kind, recordId, ...(minCoverage ? { minCoverage } : {}) } satisfies ReviewTargetRequest;
    return this.send(GovernanceSubject.submit, payload, ReviewSummary, ctx);
  }

  get(p: Principal, kind: RunnableKind, recordId: string, ctx?: RegistryCallContext): Promise<ReviewSummary> {
    return this.send(GovernanceSubject.get, { principal: p, kind, recordId } satisfies ReviewTargetRequest, ReviewSummary, ctx);
  }

  approve(p: Principal, kind: RunnableKind, recordId: string, body: ReviewDecisionBody, ctx?: RegistryCallContext): Promise<ReviewSummary> {
    const payload = { principal: p, kind, recordId, ...body } satisfies ReviewDecisionRequest;
    return this.send(GovernanceSubject.approve, payload, ReviewSummary, ctx);
  }

  reject(p: Principal, kind: RunnableKind, recordId: string, body: ReviewDecisionBody, ctx?: RegistryCallContext): Promise<ReviewSummary> {
    const payload = { principal: p, kind, recordId, ...body } satisfies ReviewDecisionRequest;
    return this.send(GovernanceSubject.reject, payload, ReviewSummary, ctx);
  }

  publish(p: Principal, kind: RunnableKind, recordId: string, body: ReviewPublishBody, ctx?: RegistryCallContext) {
    const payload = { principal: p, kind, recordId, ...body } satisfies ReviewPublishRequest;
    return this.send(GovernanceSubject.publish, payload, ReviewPublishReply, ctx);
  }

  inbox(p: Principal, query: ReviewInboxQuery, ctx?: RegistryCallContext): Promise<ReviewInboxPage> {
    const payload = { principal: p, ...query } satisfies ReviewInboxRequest;
    return this.send(GovernanceSubject.inbox, payload, ReviewInboxPage, ctx);
  }

  async summaries(p: Principal, kind: RunnableKind, drafts: DraftRef[], ctx?: RegistryCallContext): Promise<ReviewSummary[]> {
    if (drafts.length === 0) return [];
    const payload = { principal: p, kind, drafts } satisfies ReviewSummariesRequest;
    return (await this.send(GovernanceSubject.summaries, payload, ReviewSummariesReply, ctx, this.summaryTimeoutMs)).items;
  }

  private send<T>(
    subject: GovernanceSubject,
    payload: unknown,
    reply: z.ZodType<T>,
    ctx?: RegistryCallContext,
    timeoutMs = this.timeoutMs,
  ): Promise<T> {
    const opts: RequestOptions = { timeoutMs, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
    return this.bus.request(subject, payload, reply, opts);
  }
}

/** The HTTP form of a review summary: the record id under `policyId` or `flowId`. */
export function reviewBody(s: ReviewSummary): Record<string, unknown> {
  const { kind, recordId, ...rest } = s;
  return kind === 'policy' ? { policyId: recordId, ...rest } : { flowId: recordId, ...rest };
}
