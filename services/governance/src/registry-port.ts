import {
  ArbiterError,
  isArbiterError,
  type ErrorReason,
  FlowPublishReviewedReply,
  FlowReviewCheckReply,
  FlowRecord,
  FlowRecordPage,
  PolicyPublishReviewedReply,
  PolicyRecord,
  PolicyRecordPage,
  RegistrySubject,
  PublishCheckReply,
  ShadowReport,
  ShadowSubject,
  type PublishCheckRequest,
  type PublishReviewedRequest,
  type RolloutStart,
  type Principal,
  type RunnableKind,
} from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';

/** What the governance service needs to know of a registry record. */
export interface RecordView {
  recordId: string;
  baseId: string;
  status: 'draft' | 'published';
  version: number | null;
  contentHash: string;
  name: string;
  /** Who changed the content since the last published version: none of them may decide its review. */
  authors: string[];
}

/** The outcome of a reviewed publish: the version (a policy or flow record) and whether this call made it. */
export interface PublishedView {
  outcome: 'published' | 'already_published';
  version: number;
  record: PolicyRecord | FlowRecord;
}

/**
 * The registry as the governance service uses it, always with the caller's principal, so the
 * registry decides visibility, tenancy (404 for another org) and rights as for any other request.
 */
export interface RegistryPort {
  /** A record by id. */
  get(p: Principal, kind: RunnableKind, recordId: string, requestId?: string): Promise<RecordView>;
  /** The draft of the base of any of its record ids, or null when it has none. */
  draftOf(p: Principal, kind: RunnableKind, recordId: string, requestId?: string): Promise<RecordView | null>;
  /** The base's shadow report (docs/api.md#shadow-runs), or null when it has none; absent: summaries carry no shadow. */
  shadowOf?(p: Principal, kind: RunnableKind, baseId: string, requestId?: string): Promise<ShadowReport | null>;
  /**
   * The publish checks of a draft, run without publishing: every reason a publish would be refused, and the content hash checked;
   * `coverage_below_minimum` when they pass but the saved tests cover less than `minCoverage` percent.
   */
  publishCheck(p: Principal, kind: RunnableKind, recordId: string, requestId?: string, minCoverage?: number): Promise<PublishCheckReply>;
  /** Why a flow draft could not be published as reviewed text (its policy nodes naming drafts); empty when it could. */
  flowReviewProblems(p: Principal, recordId: string, requestId?: string): Promise<ErrorReason[]>;
  /** Publishes the draft when its content hash is still `expectedContentHash` (else `review_stale`), at once or at `effectiveFrom`. */
  publishReviewed(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    expectedContentHash: string,
    reviewRequestId: string,
    requestId?: string,
    effectiveFrom?: string,
    rollout?: RolloutStart,
  ): Promise<PublishedView>;
}

function viewOf(r: PolicyRecord | FlowRecord): RecordView {
  const recordId = 'policyId' in r ? r.policyId : r.flowId;
  if (r.contentHash === undefined) throw new ArbiterError('internal', `the registry sent record \`${recordId}\` without its content hash`);
  return {
    recordId,
    baseId: r.baseId,
    status: r.status,
    version: r.version,
    contentHash: r.contentHash,
    name: r.name,
    authors: r.authors ?? [],
  };
}

/** {@link RegistryPort} over the bus (`<prefix>.registry.*`), each request with a deadline. */
export class NatsRegistryPort implements RegistryPort {
  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
  ) {}

  async get(p: Principal, kind: RunnableKind, recordId: string, requestId?: string): Promise<RecordView> {
    const record =
      kind === 'policy'
        ? await this.bus.request(RegistrySubject.policyGet, { principal: p, policyId: recordId }, PolicyRecord, this.opts(requestId))
        : await this.bus.request(RegistrySubject.flowGet, { principal: p, flowId: recordId }, FlowRecord, this.opts(requestId));
    return viewOf(record);
  }

  async shadowOf(p: Principal, kind: RunnableKind, baseId: string, requestId?: string): Promise<ShadowReport | null> {
    const subject = kind === 'policy' ? ShadowSubject.policyGet : ShadowSubject.flowGet;
    try {
      return await this.bus.request(subject, { principal: p, baseId }, ShadowReport, this.opts(requestId));
    } catch (err) {
      if (isArbiterError(err, 'not_found')) return null;
      throw err;
    }
  }

  async draftOf(p: Principal, kind: RunnableKind, recordId: string, requestId?: string): Promise<RecordView | null> {
    // The draft comes first in the versions list, so a page of one holds it when there is one.
    const page =
      kind === 'policy'
        ? await this.bus.request(
            RegistrySubject.policyVersions,
            { principal: p, policyId: recordId, limit: 1 },
            PolicyRecordPage,
            this.opts(requestId),
          )
        : await this.bus.request(
            RegistrySubject.flowVersions,
            { principal: p, flowId: recordId, limit: 1 },
            FlowRecordPage,
            this.opts(requestId),
          );
    const first = page.items[0];
    return first !== undefined && first.status === 'draft' ? viewOf(first) : null;
  }

  async publishCheck(p: Principal, kind: RunnableKind, recordId: string, requestId?: string, minCoverage?: number) {
    const subject = kind === 'policy' ? RegistrySubject.policyPublishCheck : RegistrySubject.flowPublishCheck;
    const payload = { principal: p, recordId, ...(minCoverage ? { minCoverage } : {}) } satisfies PublishCheckRequest;
    return this.bus.request(subject, payload, PublishCheckReply, this.opts(requestId));
  }

  async flowReviewProblems(p: Principal, recordId: string, requestId?: string): Promise<ErrorReason[]> {
    const out = await this.bus.request(
      RegistrySubject.flowReviewCheck,
      { principal: p, flowId: recordId },
      FlowReviewCheckReply,
      this.opts(requestId),
    );
    return out.problems;
  }

  async publishReviewed(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    expectedContentHash: string,
    reviewRequestId: string,
    requestId?: string,
    effectiveFrom?: string,
    rollout?: RolloutStart,
  ): Promise<PublishedView> {
    const payload = {
      principal: p,
      recordId,
      expectedContentHash,
      reviewRequestId,
      ...(effectiveFrom !== undefined ? { effectiveFrom } : {}),
      ...(rollout !== undefined ? { rollout } : {}),
    } satisfies PublishReviewedRequest;
    const out =
      kind === 'policy'
        ? await this.bus.request(RegistrySubject.policyPublishReviewed, payload, PolicyPublishReviewedReply, this.opts(requestId))
        : await this.bus.request(RegistrySubject.flowPublishReviewed, payload, FlowPublishReviewedReply, this.opts(requestId));
    return { outcome: out.outcome, version: out.record.version ?? 0, record: out.record };
  }

  private opts(requestId: string | undefined) {
    return { timeoutMs: this.timeoutMs, ...(requestId !== undefined ? { requestId } : {}) };
  }
}
