import { z } from 'zod';
import { EVENT_KINDS, EVENT_RESOURCE_TYPES } from './event-kinds.js';

/** Audit event kinds ({@link EVENT_KINDS}). */
export const EventKind = z.enum(EVENT_KINDS);
export type EventKind = z.infer<typeof EventKind>;

/** What an event is about ({@link EVENT_RESOURCE_TYPES}). */
export const EventResourceType = z.enum(EVENT_RESOURCE_TYPES);
export type EventResourceType = z.infer<typeof EventResourceType>;

/**
 * One audit event (DESIGN.md §7). `eventId` is a UUID v7, unique per event: it is the JetStream
 * message id (publish dedupe) and the audit store's idempotency key. Unknown keys pass.
 */
export const ArbiterEvent = z.object({
  eventId: z.uuid(),
  orgId: z.string(),
  kind: EventKind,
  at: z.iso.datetime(),
  actor: z.object({ userId: z.string(), apiKeyId: z.string().optional() }),
  resource: z.object({ type: EventResourceType, id: z.string(), baseId: z.string().optional() }),
  details: z.record(z.string(), z.unknown()),
});
export type ArbiterEvent = z.infer<typeof ArbiterEvent>;

/** Subject of an event: `${prefix}.events.${orgId}.${kind}` with spaces of the kind turned into `_`. */
export function eventSubject(prefix: string, orgId: string, kind: EventKind): string {
  return `${prefix}.events.${orgId}.${kind.replaceAll(' ', '_')}`;
}

/** Subject filter of every event of the stack (`${prefix}.events.>`). */
export function eventSubjectFilter(prefix: string): string {
  return `${prefix}.events.>`;
}

/**
 * Name of the one JetStream stream holding the events of a stack: the prefix in upper case with
 * characters a stream name cannot hold turned into `_`, plus `_EVENTS` (`arbiter` → `ARBITER_EVENTS`).
 */
export function eventStreamName(prefix: string): string {
  return `${prefix.toUpperCase().replace(/[^A-Z0-9_-]/g, '_')}_EVENTS`;
}

/**
 * The stream where the audit service parks a message it could not store after its last try
 * (`AUDIT_MAX_DELIVERIES`): `<events stream>_DEAD`, subject {@link deadEventSubject}. Each message
 * keeps the original payload, with headers naming its subject, stream sequence, deliveries and why.
 */
export function deadEventStreamName(prefix: string): string {
  return `${eventStreamName(prefix)}_DEAD`;
}

/** Subject of the parked messages (`${prefix}.events_dead`, outside the events stream's `${prefix}.events.>`). */
export function deadEventSubject(prefix: string): string {
  return `${prefix}.events_dead`;
}
