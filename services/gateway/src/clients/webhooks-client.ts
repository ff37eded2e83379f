import {
  Webhook,
  WebhookDeleted,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookPage,
  WebhookSubject,
  WebhookTestReply,
  WebhookWithSecret,
  type PageQuery,
  type Principal,
  type WebhookCreateBody,
  type WebhookCreateRequest,
  type WebhookDeliveriesQuery,
  type WebhookDeliveriesRequest,
  type WebhookListRequest,
  type WebhookPatchBody,
  type WebhookRetryRequest,
  type WebhookTargetRequest,
  type WebhookUpdateRequest,
} from '@arbiter/contracts';
import type { Bus, RequestOptions } from '@arbiter/service-kit';
import type { z } from 'zod';

/** The request's id, passed on to the service's logs. */
export interface WebhooksCallContext {
  requestId?: string;
}

/**
 * What the gateway needs from the webhooks service (docs/webhooks.md). Authorization (an org's
 * admins) and tenancy are the service's; refusals arrive as `ArbiterError`s. Nobody listening →
 * `dependency_unavailable` (503) for these routes only.
 */
export interface WebhooksClient {
  create(p: Principal, body: WebhookCreateBody, ctx?: WebhooksCallContext): Promise<WebhookWithSecret>;
  list(p: Principal, query: PageQuery, ctx?: WebhooksCallContext): Promise<WebhookPage>;
  get(p: Principal, id: string, ctx?: WebhooksCallContext): Promise<Webhook>;
  update(p: Principal, id: string, body: WebhookPatchBody, ctx?: WebhooksCallContext): Promise<Webhook>;
  remove(p: Principal, id: string, ctx?: WebhooksCallContext): Promise<WebhookDeleted>;
  rotate(p: Principal, id: string, ctx?: WebhooksCallContext): Promise<WebhookWithSecret>;
  test(p: Principal, id: string, ctx?: WebhooksCallContext): Promise<WebhookTestReply>;
  deliveries(p: Principal, id: string, query: WebhookDeliveriesQuery, ctx?: WebhooksCallContext): Promise<WebhookDeliveryPage>;
  retry(p: Principal, id: string, deliveryId: string, ctx?: WebhooksCallContext): Promise<WebhookDelivery>;
}

/** The production {@link WebhooksClient}: request/reply on `<prefix>.webhooks.*`. */
export class NatsWebhooksClient implements WebhooksClient {
  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
  ) {}

  create(p: Principal, body: WebhookCreateBody, ctx?: WebhooksCallContext) {
    return this.send(WebhookSubject.create, { principal: p, ...body } satisfies WebhookCreateRequest, WebhookWithSecret, ctx);
  }

  list(p: Principal, query: PageQuery, ctx?: WebhooksCallContext) {
    return this.send(WebhookSubject.list, { principal: p, ...query } satisfies WebhookListRequest, WebhookPage, ctx);
  }

  get(p: Principal, id: string, ctx?: WebhooksCallContext) {
    return this.send(WebhookSubject.get, { principal: p, id } satisfies WebhookTargetRequest, Webhook, ctx);
  }

  update(p: Principal, id: string, body: WebhookPatchBody, ctx?: WebhooksCallContext) {
    return this.send(WebhookSubject.update, { principal: p, id, ...body } satisfies WebhookUpdateRequest, Webhook, ctx);
  }

  remove(p: Principal, id: string, ctx?: WebhooksCallContext) {
    return this.send(WebhookSubject.delete, { principal: p, id } satisfies WebhookTargetRequest, WebhookDeleted, ctx);
  }

  rotate(p: Principal, id: string, ctx?: WebhooksCallContext) {
    return this.send(WebhookSubject.rotate, { principal: p, id } satisfies WebhookTargetRequest, WebhookWithSecret, ctx);
  }

  test(p: Principal, id: string, ctx?: WebhooksCallContext) {
    return this.send(WebhookSubject.test, { principal: p, id } satisfies WebhookTargetRequest, WebhookTestReply, ctx);
  }

  deliveries(p: Principal, id: string, query: WebhookDeliveriesQuery, ctx?: WebhooksCallContext) {
    return this.send(
      WebhookSubject.deliveries,
      { principal: p, id, ...query } satisfies WebhookDeliveriesRequest,
      WebhookDeliveryPage,
      ctx,
    );
  }

  retry(p: Principal, id: string, deliveryId: string, ctx?: WebhooksCallContext) {
    return this.send(WebhookSubject.retry, { principal: p, id, deliveryId } satisfies WebhookRetryRequest, WebhookDelivery, ctx);
  }

  private send<T>(subject: WebhookSubject, payload: unknown, reply: z.ZodType<T>, ctx?: WebhooksCallContext): Promise<T> {
    const opts: RequestOptions = { timeoutMs: this.timeoutMs, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
    return this.bus.request(subject, payload, reply, opts);
  }
}
