import {
  ArbiterError,
  hasCapability,
  type AuditEvent,
  type AuditEventPage,
  type AuditQueryRequest,
  type Principal,
} from '@arbiter/contracts';
import type { z } from 'zod';
import type { Db } from '@arbiter/service-kit';
import { queryEvents, type EventRow } from './repositories/events.js';

/** The parsed `audit.query` request (defaults applied). */
export type AuditQueryInput = z.output<typeof AuditQueryRequest>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The cursor of the page after `row`: its keyset position, base64url JSON. */
export function encodeCursor(row: { at: Date; event_id: string }): string {
  return Buffer.from(JSON.stringify({ at: row.at.toISOString(), id: row.event_id }), 'utf8').toString('base64url');
}

/** The keyset position in a cursor made by {@link encodeCursor}; `bad_request` for anything else. */
export function decodeCursor(cursor: string): { at: Date; eventId: string } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null) {
      const { at, id } = parsed as { at?: unknown; id?: unknown };
      const when = typeof at === 'string' ? new Date(at) : undefined;
      if (when && !Number.isNaN(when.getTime()) && typeof id === 'string' && UUID.test(id)) return { at: when, eventId: id };
    }
  } catch {
    // fall through: not one of our cursors
  }
  throw new ArbiterError('bad_request', `invalid cursor \`${cursor.slice(0, 40)}\``);
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
    ...(req.cursor !== undefined ? { before: decodeCursor(req.cursor) } : {}),
    limit: req.limit + 1,
  });
  const more = rows.length > req.limit;
  const kept = more ? rows.slice(0, req.limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(toAuditEvent), nextCursor: more && last ? encodeCursor(last) : null };
}
