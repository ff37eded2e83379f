import type { ArbiterEvent } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';
import { v7 } from 'uuid';
import { webhookBody } from './body.js';
import { insertDeliveries } from './repositories/deliveries.js';
import { endpointsFor } from './repositories/endpoints.js';

/**
 * Turns an event into one pending delivery per enabled endpoint of its org that asked for its kind
 * (or for `*`); the body is fixed now, as the event was. Returns how many were new (a redelivered
 * event makes none).
 */
export async function fanOut(db: Db, event: ArbiterEvent, now = new Date()): Promise<number> {
  const endpoints = await endpointsFor(db, event.orgId, event.kind);
  if (endpoints.length === 0) return 0;
  const body = webhookBody(event);
  return insertDeliveries(
    db,
    endpoints.map((e) => ({
      id: v7(),
      endpoint_id: e.id,
      org_id: event.orgId,
      event_id: event.eventId,
      event_kind: event.kind,
      body,
      created_at: now,
    })),
  );
}
