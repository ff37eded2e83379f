import { AuditEventPage, AuditSubject, type AuditFilter, type AuditQueryRequest, type Principal } from '@arbiter/contracts';
import type { Bus, RequestOptions } from '@arbiter/service-kit';

/** What the gateway needs from the audit service (docs/api.md#audit-trail). */
export interface AuditClient {
  /** A page of the caller's org's events, newest first; the audit service re-checks the caller's rights. */
  query(
    principal: Principal,
    query: AuditFilter & { limit: number; cursor?: string | undefined },
    ctx?: { requestId?: string },
  ): Promise<AuditEventPage>;
}

/**
 * The production {@link AuditClient}: `audit.query` over NATS. No audit replica listening is
 * `dependency_unavailable` (503) for the audit routes only; nothing else waits on the audit service.
 */
export class NatsAuditClient implements AuditClient {
  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
  ) {}

  query(principal: Principal, query: AuditFilter & { limit: number; cursor?: string | undefined }, ctx: { requestId?: string } = {}) {
    const { cursor, ...rest } = query;
    const payload: AuditQueryRequest = { principal, ...rest, ...(cursor !== undefined ? { cursor } : {}) };
    const opts: RequestOptions = { timeoutMs: this.timeoutMs, ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
    return this.bus.request(AuditSubject.query, payload, AuditEventPage, opts);
  }
}
