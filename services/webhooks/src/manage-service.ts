import {
  ArbiterError,
  hasCapability,
  newEvent,
  type ArbiterEvent,
  type EventCause,
  type EventDetails,
  type Principal,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryPage,
  type WebhookPage,
  type WebhookTestReply,
  type WebhookWithSecret,
  type WebhookCreateRequest,
  type WebhookDeliveriesRequest,
  type WebhookListRequest,
  type WebhookRetryRequest,
  type WebhookUpdateRequest,
} from '@arbiter/contracts';
import { cursorField, decodeCursor, pageFrom, type Db, type EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { v7 } from 'uuid';
import { z } from 'zod';
import { checkNewEndpointUrl, type AddressPolicy } from './address.js';
import { pingEvent } from './body.js';
import {
  attemptsOf,
  getDelivery,
  insertDeliveries,
  listDeliveries,
  requeueDelivery,
  type AttemptRow,
  type DeliveryRow,
} from './repositories/deliveries.js';
import { deleteEndpoint, getEndpoint, insertEndpoint, listEndpoints, updateEndpoint, type EndpointRow } from './repositories/endpoints.js';
import { newSecret } from './signing.js';

/** How long a rotated-out secret keeps signing beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/** Dependencies of {@link ManageService}. */
export interface ManageDeps {
  db: Knex;
  events: EventOutbox<Knex.Transaction>;
  policy: AddressPolicy;
  /** Wakes the dispatcher (a delivery became due). */
  kick(): void;
  now?: () => Date;
}

type ListInput = z.output<z.ZodObject<{ limit: z.ZodDefault<z.ZodCoercedNumber>; cursor: z.ZodOptional<z.ZodString> }>>;

const EndpointCursor = z.object({ at: cursorField.timestamp(), id: cursorField.uuid() });
const DeliveryCursor = z.object({ at: cursorField.timestamp(), id: cursorField.uuid() });

/** An endpoint as the API shows it. */
export function toWebhook(row: EndpointRow, now: Date): Webhook {
  const overlap = row.previous_secret_until !== null && row.previous_secret_until.getTime() > now.getTime();
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    secretRotatedAt: row.secret_rotated_at?.toISOString() ?? null,
    previousSecretUntil: overlap ? row.previous_secret_until!.toISOString() : null,
  };
}

function toDelivery(row: DeliveryRow, attempts: AttemptRow[]): WebhookDelivery {
  return {
    id: row.id,
    webhookId: row.endpoint_id,
    eventId: row.event_id,
    kind: row.event_kind,
    status: row.status,
    attempts: attempts.map((a) => ({
      at: a.at.toISOString(),
      statusCode: a.status_code,
      durationMs: a.duration_ms,
      error: a.error,
      response: a.response,
    })),
    createdAt: row.created_at.toISOString(),
    nextAttemptAt: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    deliveredAt: row.delivered_at?.toISOString() ?? null,
  };
}

/** Refuses callers who are not admins of their org (a key needs the `admin` scope). */
export function authorizeManage(p: Principal): void {
  if (!hasCapability(p, 'admin')) {
    throw new ArbiterError('forbidden', `role \`${p.role}\`${p.scopes ? ' with this key' : ''} cannot manage webhooks`);
  }
}

/** The audit event of a change to an endpoint (docs/webhooks.md), by `by`. */
export function webhookEvent<K extends WebhookEventKindOf>(
  kind: K,
  by: EventCause,
  id: string,
  details: EventDetails<K>,
  at: Date,
): ArbiterEvent {
  return newEvent(kind, by, { type: 'webhook', id }, details, { at });
}

/** The kinds the webhooks service emits. */
type WebhookEventKindOf = 'webhook created' | 'webhook changed' | 'webhook deleted' | 'webhook disabled';

const actorOf = (p: Principal): ArbiterEvent['actor'] => ({
  userId: p.userId,
  ...(p.apiKeyId !== undefined ? { apiKeyId: p.apiKeyId } : {}),
});

/**
 * The `webhooks.*` requests: an org's admins manage its endpoints (create, list, read, change,
 * delete, rotate the secret, send a ping) and read and retry their deliveries. Each change is
 * audited through the outbox in the change's transaction. Another org's endpoint is `not_found`.
 */
export class ManageService {
  private readonly now: () => Date;

  constructor(private readonly deps: ManageDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async create(req: WebhookCreateRequest): Promise<WebhookWithSecret> {
    const p = req.principal;
    authorizeManage(p);
    checkNewEndpointUrl(req.url, this.deps.policy);
    const now = this.now();
    const row: EndpointRow = {
      id: v7(),
      org_id: p.orgId,
      url: req.url,
      events: [...req.events],
      description: req.description ?? '',
      secret: newSecret(),
      previous_secret: null,
      previous_secret_until: null,
      secret_rotated_at: null,
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      created_by: p.userId,
      created_at: now,
      updated_at: now,
    };
    await this.change(async (trx) => {
      await insertEndpoint(trx, row);
      return webhookEvent('webhook created', p, row.id, { url: row.url, events: row.events, description: row.description }, now);
    });
    return { ...toWebhook(row, now), secret: row.secret };
  }

  async list(req: WebhookListRequest & ListInput): Promise<WebhookPage> {
    authorizeManage(req.principal);
    const after = req.cursor !== undefined ? decodeCursor(req.cursor, EndpointCursor) : undefined;
    const rows = await listEndpoints(
      this.deps.db,
      req.principal.orgId,
      after ? { createdAt: new Date(after.at), id: after.id } : undefined,
      req.limit + 1,
    );
    const now = this.now();
    return pageFrom(
      rows,
      req.limit,
      (r) => toWebhook(r, now),
      (r) => ({ at: r.created_at.toISOString(), id: r.id }),
    );
  }

  async get(p: Principal, id: string): Promise<Webhook> {
    authorizeManage(p);
    return toWebhook(await this.load(this.deps.db, p, id), this.now());
  }

  async update(req: WebhookUpdateRequest): Promise<Webhook> {
    const p = req.principal;
    authorizeManage(p);
    if (req.url !== undefined) checkNewEndpointUrl(req.url, this.deps.policy);
    const now = this.now();
    let after: EndpointRow | undefined;
    await this.change(async (trx) => {
      const before = await this.load(trx, p, req.id, true);
      const changes: Partial<EndpointRow> = {};
      const changed: { url?: string; events?: string[]; description?: string; enabled?: boolean } = {};
      if (req.url !== undefined && req.url !== before.url) changed.url = changes.url = req.url;
      if (req.events !== undefined && req.events.join('\n') !== before.events.join('\n')) changed.events = changes.events = [...req.events];
      if (req.description !== undefined && req.description !== before.description)
        changed.description = changes.description = req.description;
      if (req.enabled !== undefined && req.enabled !== before.enabled) {
        changed.enabled = changes.enabled = req.enabled;
        Object.assign(
          changes,
          req.enabled
            ? { disabled_reason: null, disabled_at: null, failing_since: null }
            : { disabled_reason: 'by_admin', disabled_at: now },
        );
      }
      if (Object.keys(changed).length === 0) {
        after = before;
        return undefined;
      }
      after = await updateEndpoint(trx, before.id, { ...changes, updated_at: now });
      return webhookEvent('webhook changed', p, before.id, { changes: changed }, now);
    });
    if (req.enabled === true) this.deps.kick();
    return toWebhook(after!, now);
  }

  async delete(p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    authorizeManage(p);
    const now = this.now();
    await this.change(async (trx) => {
      const row = await this.load(trx, p, id, true);
      await deleteEndpoint(trx, p.orgId, id);
      return webhookEvent('webhook deleted', p, id, { url: row.url }, now);
    });
    return { id, deleted: true };
  }

  /** A new secret; the current one keeps signing beside it for {@link SECRET_OVERLAP_MS}. */
  async rotate(p: Principal, id: string): Promise<WebhookWithSecret> {
    authorizeManage(p);
    const now = this.now();
    let after: EndpointRow | undefined;
    await this.change(async (trx) => {
      const before = await this.load(trx, p, id, true);
      after = await updateEndpoint(trx, id, {
        secret: newSecret(),
        previous_secret: before.secret,
        previous_secret_until: new Date(now.getTime() + SECRET_OVERLAP_MS),
        secret_rotated_at: now,
        updated_at: now,
      });
      return webhookEvent('webhook changed', p, id, { secretRotated: true }, now);
    });
    return { ...toWebhook(after!, now), secret: after!.secret };
  }

  /** Queues a `ping` to the endpoint (whatever its event kinds; even a disabled one is sent to once it is enabled). */
  async test(p: Principal, id: string): Promise<WebhookTestReply> {
    authorizeManage(p);
    const row = await this.load(this.deps.db, p, id);
    const now = this.now();
    const ping = pingEvent(p.orgId, actorOf(p), id, now);
    const deliveryId = v7();
    await insertDeliveries(this.deps.db, [
      {
        id: deliveryId,
        endpoint_id: row.id,
        org_id: p.orgId,
        event_id: ping.eventId,
        event_kind: 'ping',
        body: JSON.stringify(ping),
        created_at: now,
      },
    ]);
    this.deps.kick();
    return { deliveryId, eventId: ping.eventId };
  }

  async deliveries(req: WebhookDeliveriesRequest & ListInput): Promise<WebhookDeliveryPage> {
    authorizeManage(req.principal);
    await this.load(this.deps.db, req.principal, req.id);
    const before = req.cursor !== undefined ? decodeCursor(req.cursor, DeliveryCursor) : undefined;
    const rows = await listDeliveries(this.deps.db, {
      endpointId: req.id,
      ...(req.status !== undefined ? { status: req.status } : {}),
      ...(before ? { before: { createdAt: new Date(before.at), id: before.id } } : {}),
      limit: req.limit + 1,
    });
    const shown = rows.slice(0, req.limit);
    const attempts = groupBy(
      await attemptsOf(
        this.deps.db,
        shown.map((r) => r.id),
      ),
    );
    return pageFrom(
      rows,
      req.limit,
      (r) => toDelivery(r, attempts.get(r.id) ?? []),
      (r) => ({ at: r.created_at.toISOString(), id: r.id }),
    );
  }

  /** Sends a delivery again, due now with a fresh retry window: a failed one, a pending one early, or a delivered one once more (same `webhook-id`). */
  async retry(req: WebhookRetryRequest): Promise<WebhookDelivery> {
    authorizeManage(req.principal);
    await this.load(this.deps.db, req.principal, req.id);
    const existing = await getDelivery(this.deps.db, req.id, req.deliveryId);
    if (!existing) throw new ArbiterError('not_found', `delivery \`${req.deliveryId}\` of webhook \`${req.id}\` not found`);
    const row = await requeueDelivery(this.deps.db, req.id, req.deliveryId, this.now());
    if (!row) throw new ArbiterError('not_found', `delivery \`${req.deliveryId}\` of webhook \`${req.id}\` not found`);
    this.deps.kick();
    return toDelivery(row, groupBy(await attemptsOf(this.deps.db, [row.id])).get(row.id) ?? []);
  }

  private async load(db: Db, p: Principal, id: string, forUpdate = false): Promise<EndpointRow> {
    const row = await getEndpoint(db, p.orgId, id, forUpdate);
    if (!row) throw new ArbiterError('not_found', `webhook \`${id}\` not found`);
    return row;
  }

  /** Runs a change in a transaction with its audit event (if any) queued in it; wakes the relay after the commit. */
  private async change(fn: (trx: Knex.Transaction) => Promise<ArbiterEvent | undefined>): Promise<void> {
    const event = await this.deps.db.transaction(async (trx) => {
      const e = await fn(trx);
      if (e) await this.deps.events.enqueue(trx, [e]);
      return e;
    });
    if (event) this.deps.events.committed();
  }
}

function groupBy(rows: AttemptRow[]): Map<string, AttemptRow[]> {
  const out = new Map<string, AttemptRow[]>();
  for (const r of rows) {
    const list = out.get(r.delivery_id);
    if (list) list.push(r);
    else out.set(r.delivery_id, [r]);
  }
  return out;
}
