import {
  WebhookCreateRequest,
  type WebhookDeleted,
  WebhookDeliveriesRequest,
  WebhookListRequest,
  WebhookRetryRequest,
  WebhookSubject,
  WebhookTargetRequest,
  WebhookUpdateRequest,
} from '@arbiter/contracts';
import { defineEndpoint, type ServiceDef } from '@arbiter/service-kit';
import type { ManageService } from './manage-service.js';

/** The `webhooks.*` subjects, served in the `webhooks` queue group. */
export function webhooksService(manage: ManageService, version: string): ServiceDef {
  return {
    name: 'webhooks',
    version,
    description: "Arbiter webhooks: an org's endpoints, their signing secrets and their deliveries",
    endpoints: {
      create: defineEndpoint({ subject: WebhookSubject.create, request: WebhookCreateRequest, handler: (req) => manage.create(req) }),
      list: defineEndpoint({ subject: WebhookSubject.list, request: WebhookListRequest, handler: (req) => manage.list(req) }),
      get: defineEndpoint({
        subject: WebhookSubject.get,
        request: WebhookTargetRequest,
        handler: (req) => manage.get(req.principal, req.id),
      }),
      update: defineEndpoint({ subject: WebhookSubject.update, request: WebhookUpdateRequest, handler: (req) => manage.update(req) }),
      delete: defineEndpoint({
        subject: WebhookSubject.delete,
        request: WebhookTargetRequest,
        handler: async (req): Promise<WebhookDeleted> => manage.delete(req.principal, req.id),
      }),
      rotate: defineEndpoint({
        subject: WebhookSubject.rotate,
        request: WebhookTargetRequest,
        handler: (req) => manage.rotate(req.principal, req.id),
      }),
      test: defineEndpoint({
        subject: WebhookSubject.test,
        request: WebhookTargetRequest,
        handler: (req) => manage.test(req.principal, req.id),
      }),
      deliveries: defineEndpoint({
        subject: WebhookSubject.deliveries,
        request: WebhookDeliveriesRequest,
        handler: (req) => manage.deliveries(req),
      }),
      retry: defineEndpoint({ subject: WebhookSubject.retry, request: WebhookRetryRequest, handler: (req) => manage.retry(req) }),
    },
  };
}
