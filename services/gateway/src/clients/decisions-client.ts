import {
  DecisionBaseStats,
  DecisionPage,
  DecisionRecord,
  ArbiterError,
  DecisionSettings,
  DecisionSettingsDeleted,
  DecisionSubject,
  isArbiterError,
  type BaseDecisionSettings,
  type DecisionFilter,
  type DecisionQueryRequest,
  type OrgDecisionSettings,
  type Principal,
} from '@arbiter/contracts';
import type { Bus, RequestOptions } from '@arbiter/service-kit';
import type { RegistryClient } from './registry-client.js';

type Ctx = { requestId?: string };

/** What the gateway needs from the audit service's decision records. */
export interface DecisionsClient {
  query(principal: Principal, query: DecisionFilter & { limit: number; cursor?: string | undefined }, ctx?: Ctx): Promise<DecisionPage>;
  get(principal: Principal, decisionId: string, ctx?: Ctx): Promise<DecisionRecord>;
  settings(principal: Principal, ctx?: Ctx): Promise<DecisionSettings>;
  putOrgSettings(principal: Principal, settings: OrgDecisionSettings, ctx?: Ctx): Promise<DecisionSettings>;
  putBaseSettings(principal: Principal, baseId: string, settings: BaseDecisionSettings, ctx?: Ctx): Promise<DecisionSettings>;
  deleteBaseSettings(principal: Principal, baseId: string, ctx?: Ctx): Promise<DecisionSettingsDeleted>;
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

  deleteBaseSettings(principal: Principal, baseId: string, ctx: Ctx = {}) {
    return this.bus.request(DecisionSubject.settingsDelete, { principal, baseId }, DecisionSettingsDeleted, this.opts(ctx));
  }

  stats(principal: Principal, baseId: string, ctx: Ctx = {}) {
    return this.bus.request(DecisionSubject.stats, { principal, baseId }, DecisionBaseStats, this.opts(ctx));
  }

  private opts(ctx: Ctx): RequestOptions {
    return { timeoutMs: this.timeoutMs, ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
  }
}

/**
 * Settings are kept only for bases of the caller's org: `baseId` must be the base id of a live
 * policy or flow the registry answers for the caller (a record id that is no base id, another
 * org's base, a deleted one and an unknown id are all 404). The registry's other failures (503,
 * 504, 403) are the answer.
 */
export async function requireBase(registry: RegistryClient, principal: Principal, baseId: string, ctx: Ctx = {}): Promise<void> {
  for (const kind of [registry.policies, registry.flows] as const) {
    try {
      if ((await kind.get(principal, baseId, ctx)).baseId === baseId) return;
    } catch (err) {
      if (!isArbiterError(err, 'not_found')) throw err;
    }
  }
  throw new ArbiterError('not_found', `no policy or flow base \`${baseId}\` in this org`);
}
