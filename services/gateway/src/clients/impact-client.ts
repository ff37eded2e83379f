import {
  GovernanceSubject,
  ImpactReport,
  type ImpactAnalysisRequest,
  type ImpactRequest,
  type Principal,
  type RunnableKind,
} from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';

/** Impact analysis of a policy or flow record (the governance service). */
export interface ImpactClient {
  analyse(
    principal: Principal,
    kind: RunnableKind,
    recordId: string,
    body: ImpactRequest,
    ctx?: { requestId?: string },
  ): Promise<ImpactReport>;
}

/** The production {@link ImpactClient}: `governance.impact` over NATS, with its own deadline (`IMPACT_TIMEOUT_MS`). */
export class NatsImpactClient implements ImpactClient {
  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
  ) {}

  analyse(
    principal: Principal,
    kind: RunnableKind,
    recordId: string,
    body: ImpactRequest,
    ctx: { requestId?: string } = {},
  ): Promise<ImpactReport> {
    const payload: ImpactAnalysisRequest = { principal, kind, recordId, ...body };
    return this.bus.request(GovernanceSubject.impact, payload, ImpactReport, {
      timeoutMs: this.timeoutMs,
      ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}),
    });
  }
}
