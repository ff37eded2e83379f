import type { ArbiterEvent, EventKind, EventResourceType, Principal } from '@arbiter/contracts';
import { newId } from './ids.js';

/** An audit event caused by `principal` (DESIGN.md §7). */
export function makeEvent(
  principal: Principal,
  kind: EventKind,
  resource: { type: EventResourceType; id: string; baseId?: string },
  details: Record<string, unknown> = {},
  at: Date = new Date(),
): ArbiterEvent {
  return {
    eventId: newId(),
    orgId: principal.orgId,
    kind,
    at: at.toISOString(),
    actor: { userId: principal.userId, ...(principal.apiKeyId ? { apiKeyId: principal.apiKeyId } : {}) },
    resource,
    details,
  };
}
