import { z } from 'zod';
import { EventKind } from './events.js';
import { PageQuery, pageOf } from './http.js';
import { Principal } from './principal.js';

/**
 * Request/reply subjects of the webhooks service (docs/webhooks.md), relative to the bus prefix. One
 * queue group (`webhooks`) serves them. Every request carries the caller's `principal`; only an
 * org's admins (a key needs the `admin` scope) manage its endpoints, and only its own.
 */
export const WebhookSubject = {
  create: 'webhooks.create',
  list: 'webhooks.list',
  get: 'webhooks.get',
  update: 'webhooks.update',
  delete: 'webhooks.delete',
  rotate: 'webhooks.rotate',
  test: 'webhooks.test',
  deliveries: 'webhooks.deliveries',
  retry: 'webhooks.retry',
} as const;
export type WebhookSubject = (typeof WebhookSubject)[keyof typeof WebhookSubject];

/** Event kinds an endpoint may ask for: every kind of the trail (`decided` records are never sent). */
export const WebhookEventKind = EventKind.exclude(['decided']);
export type WebhookEventKind = z.infer<typeof WebhookEventKind>;

/** What an endpoint receives: some kinds, or `["*"]` for every kind of the trail. */
export const WebhookEvents = z.union([
  z.tuple([z.literal('*')]),
  z
    .array(WebhookEventKind)
    .min(1)
    .max(WebhookEventKind.options.length)
    .refine((kinds) => new Set(kinds).size === kinds.length, 'event kinds must not repeat'),
]);
export type WebhookEvents = z.infer<typeof WebhookEvents>;

/** Longest endpoint URL. */
export const WEBHOOK_URL_MAX = 2048;
/** Longest endpoint description. */
export const WEBHOOK_DESCRIPTION_MAX = 500;

const WebhookUrl = z.string().min(1).max(WEBHOOK_URL_MAX).describe('Where deliveries are POSTed (https unless the stack allows http)');
const WebhookDescription = z.string().trim().max(WEBHOOK_DESCRIPTION_MAX);

/** Body of `POST /webhooks`. Unknown keys are rejected. */
export const WebhookCreateBody = z.strictObject({
  url: WebhookUrl,
  events: WebhookEvents.describe('Event kinds to receive, or `["*"]` for all'),
  description: WebhookDescription.optional(),
});
export type WebhookCreateBody = z.infer<typeof WebhookCreateBody>;

/** Body of `PATCH /webhooks/{id}`: the fields to change; `enabled: true` turns a disabled endpoint back on. */
export const WebhookPatchBody = z.strictObject({
  url: WebhookUrl.optional(),
  events: WebhookEvents.optional(),
  description: WebhookDescription.optional(),
  enabled: z.boolean().optional(),
});
export type WebhookPatchBody = z.infer<typeof WebhookPatchBody>;

/** An endpoint as the API shows it (never its secret, except once, in {@link WebhookWithSecret}). */
export const Webhook = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string(),
  enabled: z.boolean(),
  disabledReason: z.string().nullable().describe('Why the endpoint was turned off (`gone`, `failing`, `by_admin`); null while enabled'),
  disabledAt: z.iso.datetime().nullable(),
  createdBy: z.string(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  secretRotatedAt: z.iso.datetime().nullable(),
  previousSecretUntil: z.iso.datetime().nullable().describe('Until then the previous secret signs too (a second signature)'),
});
export type Webhook = z.infer<typeof Webhook>;

/** An endpoint with its signing secret (`whsec_…`), answered once: at creation and rotation. */
export const WebhookWithSecret = Webhook.extend({ secret: z.string().startsWith('whsec_') });
export type WebhookWithSecret = z.infer<typeof WebhookWithSecret>;

/** A page of endpoints, oldest first. */
export const WebhookPage = pageOf(Webhook);
export type WebhookPage = z.infer<typeof WebhookPage>;

/** States of a delivery: waiting for its next attempt, answered with a 2xx, or given up. */
export const WebhookDeliveryStatus = z.enum(['pending', 'delivered', 'failed']);
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;

/** One attempt of a delivery: the answer's status (null: no answer), how long it took and the first 1 KiB of the answer or the error. */
export const WebhookAttempt = z.object({
  at: z.iso.datetime(),
  statusCode: z.number().int().nullable(),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  response: z.string().nullable(),
});
export type WebhookAttempt = z.infer<typeof WebhookAttempt>;

/** One event sent (or to be sent) to one endpoint, with its attempts, newest first. */
export const WebhookDelivery = z.object({
  id: z.uuid(),
  webhookId: z.uuid(),
  eventId: z.uuid().describe('The `webhook-id` header: the same on every attempt'),
  kind: z.string(),
  status: WebhookDeliveryStatus,
  attempts: z.array(WebhookAttempt),
  createdAt: z.iso.datetime(),
  nextAttemptAt: z.iso.datetime().nullable(),
  deliveredAt: z.iso.datetime().nullable(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

/** A page of deliveries, newest first. */
export const WebhookDeliveryPage = pageOf(WebhookDelivery);
export type WebhookDeliveryPage = z.infer<typeof WebhookDeliveryPage>;

/** Query of `GET /webhooks/{id}/deliveries`. */
export const WebhookDeliveriesQuery = PageQuery.extend({ status: WebhookDeliveryStatus.optional() });
export type WebhookDeliveriesQuery = z.infer<typeof WebhookDeliveriesQuery>;

/** Query of `GET /webhooks`. */
export const WebhookListQuery = PageQuery;

/** Reply of `POST /webhooks/{id}/test`: the ping delivery queued. */
export const WebhookTestReply = z.object({ deliveryId: z.uuid(), eventId: z.uuid() });
export type WebhookTestReply = z.infer<typeof WebhookTestReply>;

const WebhookId = z.uuid();

/** `webhooks.create`. */
export const WebhookCreateRequest = z.strictObject({ principal: Principal, ...WebhookCreateBody.shape });
export type WebhookCreateRequest = z.input<typeof WebhookCreateRequest>;
/** `webhooks.list`. */
export const WebhookListRequest = z.strictObject({ principal: Principal, ...PageQuery.shape });
export type WebhookListRequest = z.input<typeof WebhookListRequest>;
/** `webhooks.get`, `webhooks.delete`, `webhooks.rotate`, `webhooks.test`. */
export const WebhookTargetRequest = z.strictObject({ principal: Principal, id: WebhookId });
export type WebhookTargetRequest = z.input<typeof WebhookTargetRequest>;
/** `webhooks.update`. */
export const WebhookUpdateRequest = z.strictObject({ principal: Principal, id: WebhookId, ...WebhookPatchBody.shape });
export type WebhookUpdateRequest = z.input<typeof WebhookUpdateRequest>;
/** `webhooks.deliveries`. */
export const WebhookDeliveriesRequest = z.strictObject({ principal: Principal, id: WebhookId, ...WebhookDeliveriesQuery.shape });
export type WebhookDeliveriesRequest = z.input<typeof WebhookDeliveriesRequest>;
/** `webhooks.retry`: the delivery goes back to `pending`, due now. */
export const WebhookRetryRequest = z.strictObject({ principal: Principal, id: WebhookId, deliveryId: z.uuid() });
export type WebhookRetryRequest = z.input<typeof WebhookRetryRequest>;
/** Reply of `webhooks.delete`. */
export const WebhookDeleted = z.object({ id: z.uuid(), deleted: z.literal(true) });
export type WebhookDeleted = z.infer<typeof WebhookDeleted>;
