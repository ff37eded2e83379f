import {
  RunnableRevision,
  RunnableSnapshotPage,
  RunnableSubject,
  RunReportReply,
  type Principal,
  type RunnableRevisionRequest,
  type RunnableSelection,
  type RunnableSnapshotRequest,
  type RunReport,
  type RunReportRequest,
} from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';

/** Per-call context passed along for tracing. */
export interface RunnableCallContext {
  requestId?: string;
}

/** The registry's local-evaluation side, as the gateway's routes need it. */
export interface RunnableClient {
  /** One page of a selection's runnable records at the org's revision (whole, or what changed after `since`). */
  snapshotPage(
    principal: Principal,
    page: { selection: RunnableSelection; since?: number; cursor?: string },
    ctx?: RunnableCallContext,
  ): Promise<RunnableSnapshotPage>;
  /** The org's current revision. */
  revision(principal: Principal, ctx?: RunnableCallContext): Promise<number>;
  /** Turns a runtime's run counts into `executed` events. */
  report(principal: Principal, report: RunReport, ctx?: RunnableCallContext): Promise<RunReportReply>;
}

/** The production {@link RunnableClient}: request/reply on `<prefix>.registry.runnable.*`. */
export class NatsRunnableClient implements RunnableClient {
  constructor(
    private readonly bus: Pick<Bus, 'request'>,
    private readonly timeoutMs: number,
  ) {}

  snapshotPage(
    principal: Principal,
    page: { selection: RunnableSelection; since?: number; cursor?: string },
    ctx?: RunnableCallContext,
  ): Promise<RunnableSnapshotPage> {
    const payload: RunnableSnapshotRequest = { principal, ...page };
    return this.bus.request(RunnableSubject.snapshot, payload, RunnableSnapshotPage, this.options(ctx));
  }

  async revision(principal: Principal, ctx?: RunnableCallContext): Promise<number> {
    const payload: RunnableRevisionRequest = { principal };
    return (await this.bus.request(RunnableSubject.revision, payload, RunnableRevision, this.options(ctx))).revision;
  }

  report(principal: Principal, report: RunReport, ctx?: RunnableCallContext): Promise<RunReportReply> {
    const payload: RunReportRequest = { principal, ...report };
    return this.bus.request(RunnableSubject.report, payload, RunReportReply, this.options(ctx));
  }

  private options(ctx: RunnableCallContext | undefined) {
    return { timeoutMs: this.timeoutMs, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
  }
}
