import {
  ShadowReport,
  ShadowSubject,
  type Principal,
  type RunnableKind,
  type ShadowBaseRequest,
  type ShadowBody,
  type ShadowSetRequest,
} from '@arbiter/contracts';
import type { Bus, RequestOptions } from '@arbiter/service-kit';

type Ctx = { requestId?: string };

/** What the gateway needs of the registry's shadow runs (docs/design/shadow-runs.md). */
export interface ShadowClient {
  set(principal: Principal, kind: RunnableKind, baseId: string, body: ShadowBody, ctx?: Ctx): Promise<ShadowReport>;
  get(principal: Principal, kind: RunnableKind, baseId: string, ctx?: Ctx): Promise<ShadowReport>;
  stop(principal: Principal, kind: RunnableKind, baseId: string, ctx?: Ctx): Promise<ShadowReport>;
}

/** The production {@link ShadowClient}: `registry.{kind}.shadow.*` over NATS (the registry re-checks every right). */
export class NatsShadowClient implements ShadowClient {
  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
  ) {}

  set(principal: Principal, kind: RunnableKind, baseId: string, body: ShadowBody, ctx: Ctx = {}): Promise<ShadowReport> {
    const subject = kind === 'policy' ? ShadowSubject.policySet : ShadowSubject.flowSet;
    return this.bus.request(subject, { principal, baseId, ...body } satisfies ShadowSetRequest, ShadowReport, this.opts(ctx));
  }

  get(principal: Principal, kind: RunnableKind, baseId: string, ctx: Ctx = {}): Promise<ShadowReport> {
    const subject = kind === 'policy' ? ShadowSubject.policyGet : ShadowSubject.flowGet;
    return this.bus.request(subject, { principal, baseId } satisfies ShadowBaseRequest, ShadowReport, this.opts(ctx));
  }

  stop(principal: Principal, kind: RunnableKind, baseId: string, ctx: Ctx = {}): Promise<ShadowReport> {
    const subject = kind === 'policy' ? ShadowSubject.policyStop : ShadowSubject.flowStop;
    return this.bus.request(subject, { principal, baseId } satisfies ShadowBaseRequest, ShadowReport, this.opts(ctx));
  }

  private opts(ctx: Ctx): RequestOptions {
    return { timeoutMs: this.timeoutMs, ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
  }
}
