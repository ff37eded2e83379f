import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  PageQuery,
  Webhook,
  WebhookCreateBody,
  WebhookDeleted,
  WebhookDeliveriesQuery,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookPage,
  WebhookPatchBody,
  WebhookTestReply,
  WebhookWithSecret,
} from '@arbiter/contracts';
import { z } from 'zod';
import type { WebhooksClient } from '../clients/webhooks-client.js';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';

/** Dependencies of {@link webhookRoutes}. */
export interface WebhookRoutesOptions {
  readonly authenticator: Authenticator;
  readonly webhooks: WebhooksClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];
const tags = ['webhooks'];
const IdParams = z.object({ id: z.uuid() });
const DeliveryParams = z.object({ id: z.uuid(), deliveryId: z.uuid() });
const admins = "Admins of the org (a key needs the `admin` scope); another org's endpoint is 404.";

/**
 * Webhooks (docs/webhooks.md): an org's admins register HTTP endpoints that receive its audit
 * events signed with Standard Webhooks headers, and follow and retry their deliveries. The routes
 * only pass the call to the webhooks service, which checks the caller again; when none answers,
 * these routes are 503 and nothing else is.
 */
export const webhookRoutes: FastifyPluginAsyncZod<WebhookRoutesOptions> = async (app, { authenticator, webhooks }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  const canAdmin = requireCapability('admin');
  const ctx = (request: { id: string }) => ({ requestId: request.id });

  app.post('/webhooks', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'Register an endpoint; its signing secret is in this answer only',
      description: `${admins} The URL must be https (unless the stack allows http) and not a private, loopback, link-local or metadata address.`,
      body: WebhookCreateBody,
      response: { 201: WebhookWithSecret, ...errorResponses(400, 401, 403, 413, 415, 429, 503, 504) },
    },
    handler: async (request, reply) => reply.status(201).send(await webhooks.create(principalOf(request), request.body, ctx(request))),
  });

  app.get('/webhooks', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'Endpoints of the caller org, oldest first',
      description: admins,
      querystring: PageQuery,
      response: { 200: WebhookPage, ...errorResponses(400, 401, 403, 429, 503, 504) },
    },
    handler: async (request) => webhooks.list(principalOf(request), request.query, ctx(request)),
  });

  app.get('/webhooks/:id', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'One endpoint (never its secret)',
      description: admins,
      params: IdParams,
      response: { 200: Webhook, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => webhooks.get(principalOf(request), request.params.id, ctx(request)),
  });

  app.patch('/webhooks/:id', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'Change an endpoint: URL, event kinds, description, or `enabled` (true turns a disabled one back on)',
      description: admins,
      params: IdParams,
      body: WebhookPatchBody,
      response: { 200: Webhook, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 503, 504) },
    },
    handler: async (request) => webhooks.update(principalOf(request), request.params.id, request.body, ctx(request)),
  });

  app.delete('/webhooks/:id', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'Delete an endpoint with its deliveries',
      description: admins,
      params: IdParams,
      response: { 200: WebhookDeleted, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => webhooks.remove(principalOf(request), request.params.id, ctx(request)),
  });

  app.post('/webhooks/:id/secret', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'Rotate the signing secret: the new one is in this answer only; the old one keeps signing beside it for 24 h',
      description: admins,
      params: IdParams,
      response: { 200: WebhookWithSecret, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => webhooks.rotate(principalOf(request), request.params.id, ctx(request)),
  });

  app.post('/webhooks/:id/test', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'Send a `ping` event to the endpoint (a delivery like any other)',
      description: admins,
      params: IdParams,
      response: { 202: WebhookTestReply, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request, reply) => reply.status(202).send(await webhooks.test(principalOf(request), request.params.id, ctx(request))),
  });

  app.get('/webhooks/:id/deliveries', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'Deliveries of an endpoint, newest first, each with its attempts',
      description: `${admins} Kept for \`WEBHOOKS_LOG_DAYS\` after they end.`,
      params: IdParams,
      querystring: WebhookDeliveriesQuery,
      response: { 200: WebhookDeliveryPage, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => webhooks.deliveries(principalOf(request), request.params.id, request.query, ctx(request)),
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/retry', {
    onRequest: canAdmin,
    schema: {
      tags,
      security,
      summary: 'Send a delivery again now, with a fresh retry window (same `webhook-id`)',
      description: admins,
      params: DeliveryParams,
      response: { 202: WebhookDelivery, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request, reply) =>
      reply.status(202).send(await webhooks.retry(principalOf(request), request.params.id, request.params.deliveryId, ctx(request))),
  });
};
