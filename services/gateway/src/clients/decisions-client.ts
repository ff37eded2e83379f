import {
  DecisionBaseStats,
  DecisionPage,
  DecisionRecord,
  DecisionSettings,
  DecisionSubject,
  type BaseDecisionSettings,
  type DecisionFilter,
  type DecisionQueryRequest,
  type OrgDecisionSettings,
  type Principal,
} from '@arbiter/contracts';
import type { Bus, RequestOptions } from '@arbiter/service-kit';

type Ctx = { requestId?: string };

/** What the gateway needs from the audit service's decision records (issue 23). */
export interface DecisionsClient {
  query(principal: Principal, query: DecisionFilter & { limit: number; cursor?: string | undefined }, ctx?: Ctx): Promise<DecisionPage>;
  get(principal: Principal, decisionId: string, ctx?: Ctx): Promise<DecisionRecord>;
  settings(principal: Principal, ctx?: Ctx): Promise<DecisionSettings>;
  putOrgSettings(principal: Principal, settings: OrgDecisionSettings, ctx?: Ctx): Promise<DecisionSettings>;
  putBaseSettings(principal: Principal, baseId: string, settings: BaseDecisionSettings, ctx?: Ctx): Promise<DecisionSettings>;
  stats(principal: Principal, baseId: string, ctx?: Ctx): Promise<DecisionBaseStats>;
}

/** The production {@link DecisionsClient}: `audit.decisions.*` over NATS (the audit service re-checks every right). */
export class NatsDecisionsClient implements DecisionsClient {
  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
  ) {}

  query(principal: Principal, query: DecisionFilter & { limit: number; cursor?: string | undefined }, ctx: Ctx = {}) {
    const { cursor, ...rest } = query;
    const payload: DecisionQueryRequest = { principal, ...rest, ...(cursor !== undefined ? { cursor } : {}) };
    return this.bus.request(DecisionSubject.query, payload, DecisionPage, this.opts(ctx));
  }

  get(principal: Principal, decisionId: string, ctx: Ctx = {}) {
    return this.bus.request(DecisionSubject.get, { principal, decisionId }, DecisionRecord, this.opts(ctx));
  }

  settings(principal: Principal, ctx: Ctx = {}) {
    return this.bus.request(DecisionSubject.settingsGet, { principal }, DecisionSettings, this.opts(ctx));
  }

  putOrgSettings(principal: Principal, settings: OrgDecisionSettings, ctx: Ctx = {}) {
    return this.bus.request(DecisionSubject.settingsPut, { scope: 'org', principal, settings }, DecisionSettings, this.opts(ctx));
  }

  putBaseSettings(principal: Principal, baseId: string, settings: BaseDecisionSettings, ctx: Ctx = {}) {
    return this.bus.request(DecisionSubject.settingsPut, { scope: 'base', principal, baseId, settings }, DecisionSettings, this.opts(ctx));
  }

  stats(principal: Principal, baseId: string, ctx: Ctx = {}) {
    return this.bus.request(DecisionSubject.stats, { principal, baseId }, DecisionBaseStats, this.opts(ctx));
  }

  private opts(ctx: Ctx): RequestOptions {
    return { timeoutMs: this.timeoutMs, ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
  }
}
