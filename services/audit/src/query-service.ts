import {
  ArbiterError,
  hasCapability,
  type AuditEvent,
  type AuditEventPage,
  type AuditQueryRequest,
  type Principal,
} from '@arbiter/contracts';
import { z } from 'zod';
import { cursorField, decodeCursor, pageFrom, type Db } from '@arbiter/service-kit';
import { queryEvents, type EventRow } from './repositories/events.js';

/** The parsed `audit.query` request (defaults applied). */
export type AuditQueryInput = z.output<typeof AuditQueryRequest>;

/** A page of the trail ends at an event: its time and id (the keyset, newest first). */
const EventCursor = z.object({ at: cursorField.timestamp(), id: cursorField.uuid() });

/** The cursor of the page after `row`: the keyset position {@link decodeEventCursor} reads back. */
const eventCursorOf = (row: EventRow): z.input<typeof EventCursor> => ({ at: row.at.toISOString(), id: row.event_id });

/** The keyset position in an event page's cursor; 400 `invalid_cursor` for anything else. */
export function decodeEventCursor(cursor: string): { at: Date; eventId: string } {
  const { at, id } = decodeCursor(cursor, EventCursor);
  return { at: new Date(at), eventId: id };
}

/** An event as read back from its row. */
export function toAuditEvent(row: EventRow): AuditEvent {
  return {
    eventId: row.event_id,
    orgId: row.org_id,
    kind: row.kind,
    at: row.at.toISOString(),
    actor: { userId: row.actor_user_id, ...(row.actor_api_key_id !== null ? { apiKeyId: row.actor_api_key_id } : {}) },
    resource: { type: row.resource_type, id: row.resource_id, ...(row.base_id !== null ? { baseId: row.base_id } : {}) },
    details: row.details,
  };
}

/** Refuses callers whose effective rights (role ∩ key scopes) lack `audit`: admins and auditors read the trail. */
export function authorizeAuditRead(principal: Principal): void {
  if (!hasCapability(principal, 'audit')) {
    throw new ArbiterError(
      'forbidden',
      `role \`${principal.role}\`${principal.scopes ? ' with this key' : ''} cannot read the audit trail`,
    );
  }
}

/**
 * One page of the caller's org's events, newest first (by time, then event id), filtered. The org
 * is always the caller's own: another org's events are never selected.
 */
export async function queryAudit(db: Db, req: AuditQueryInput): Promise<AuditEventPage> {
  authorizeAuditRead(req.principal);
  const from = req.from !== undefined ? new Date(req.from) : undefined;
  const to = req.to !== undefined ? new Date(req.to) : undefined;
  if (from && to && from.getTime() > to.getTime()) throw new ArbiterError('bad_request', '`from` is after `to`');
  const rows = await queryEvents(db, {
    orgId: req.principal.orgId,
    ...(req.kind !== undefined ? { kinds: req.kind } : {}),
    ...(req.actor !== undefined ? { actor: req.actor } : {}),
    ...(req.resourceType !== undefined ? { resourceType: req.resourceType } : {}),
    ...(req.resourceId !== undefined ? { resourceId: req.resourceId } : {}),
    ...(req.baseId !== undefined ? { baseId: req.baseId } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(req.cursor !== undefined ? { before: decodeEventCursor(req.cursor) } : {}),
    limit: req.limit + 1,
  });
  return pageFrom(rows, req.limit, toAuditEvent, eventCursorOf);
}
