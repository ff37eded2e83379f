import { z } from 'zod';

/**
 * Audit event kinds: the spec's nine strings (spec §6, DESIGN.md §7), then the identity and
 * lifecycle kinds of DESIGN.md §10 (`assigned` stays the kind of a role assignment or change and of
 * a group membership added).
 */
export const EventKind = z.enum([
  'created',
  'edited',
  'approval requested',
  'approved',
  'rejected',
  'published',
  'assigned',
  'executed',
  'deleted',
  'key created',
  'key revoked',
  'member removed',
  'settings changed',
  'restored',
  'imported',
]);
export type EventKind = z.infer<typeof EventKind>;

/** What an event is about. */
export const EventResourceType = z.enum(['policy', 'flow', 'group', 'user', 'apikey', 'org']);
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
