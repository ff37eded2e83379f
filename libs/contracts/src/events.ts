import { v7 } from 'uuid';
import { z } from 'zod';
import { DecisionRecord } from './decisions.js';
import { EVENT_KINDS, EVENT_RESOURCE_TYPES } from './event-kinds.js';
import { Role, Scope } from './principal.js';
import { MemberType } from './registry.js';

/** Audit event kinds ({@link EVENT_KINDS}). */
export const EventKind = z.enum(EVENT_KINDS);
export type EventKind = z.infer<typeof EventKind>;

/** What an event is about ({@link EVENT_RESOURCE_TYPES}). */
export const EventResourceType = z.enum(EVENT_RESOURCE_TYPES);
export type EventResourceType = z.infer<typeof EventResourceType>;

/** Who caused an event: a user, and the API key they used when they used one. */
const EventActor = z.object({ userId: z.string(), apiKeyId: z.string().optional() });
export type EventActor = z.infer<typeof EventActor>;

/** What an event is about: a policy or flow record (with its base), a group, a user, a key or the org. */
const EventResource = z.object({ type: EventResourceType, id: z.string(), baseId: z.string().optional() });
export type EventResource = z.infer<typeof EventResource>;

/** The fields every event has, whatever its kind. */
const eventHead = {
  eventId: z.uuid(),
  orgId: z.string(),
  at: z.iso.datetime(),
  actor: EventActor,
  resource: EventResource,
};

/**
 * One audit event (docs/design/events-and-audit.md) as it travels on the bus and as the trail
 * stores and reads it back. `eventId` is a UUID v7, unique per event: it is the JetStream message
 * id (publish dedupe) and the audit store's idempotency key. Unknown keys pass.
 *
 * `details` is any JSON object here: the trail keeps what a producer of any version sent. What each
 * kind's details hold is {@link EventDetails}; events are made by {@link newEvent}, which takes them
 * typed. A `decided` event's details are a {@link DecisionRecord}, checked by the audit service
 * before it stores one.
 */
export const ArbiterEvent = z.object({ ...eventHead, kind: EventKind, details: z.record(z.string(), z.unknown()) });
export type ArbiterEvent = z.infer<typeof ArbiterEvent>;

/**
 * `details` of an `executed` event. The execution service aggregates runs: one event per
 * (org, resource record, actor) per flush window, never one per run, so the audit trail grows
 * with distinct callers and resources rather than with traffic. `from`/`to` bound the runs counted.
 */
export const ExecutedDetails = z.object({
  aggregated: z.literal(true),
  /** Runs counted by this event. */
  count: z.number().int().min(1),
  /** Runs whose result was `true`, `false` (without error), or that answered an `error`. */
  trueCount: z.number().int().min(0),
  falseCount: z.number().int().min(0),
  errorCount: z.number().int().min(0),
  /** Flow runs ending on a custom node, by outcome. */
  customCounts: z.record(z.string(), z.number().int()).optional(),
  /** Version of the record (null for a draft). */
  version: z.number().int().nullable(),
  /** How the runs named the resource: by base id, by exact record id (both through the service), or `sdk` (local runs reported by an SDK runtime). */
  via: z.array(z.enum(['base', 'record', 'sdk'])),
  from: z.iso.datetime(),
  to: z.iso.datetime(),
});
export type ExecutedDetails = z.infer<typeof ExecutedDetails>;

const RequestId = z.string().describe('The publish request (review) the event is about');

/**
 * What each kind's `details` hold, one schema per kind of {@link EVENT_KINDS}: the typed half of
 * {@link ArbiterEvent}. A kind with two shapes (a record's field edit and a group's member removal
 * are both `edited`) is a union of them. docs/design/events-and-audit.md says how to add a kind.
 */
export const EventDetails = {
  /** A policy, flow or group was made; `basedOnVersion` when a policy's or flow's draft was made from one of its versions. */
  created: z.object({ name: z.string(), basedOnVersion: z.number().int().nullable().optional() }),
  /** The fields of a draft or group that were changed, or a member removed from a group. */
  edited: z.union([z.object({ fields: z.array(z.string()) }), z.object({ removedMemberId: z.string(), memberType: MemberType })]),
  /** A draft was submitted for review, with the hash of the content to be reviewed. */
  'approval requested': z.object({ requestId: RequestId, contentHash: z.string() }),
  approved: z.object({ requestId: RequestId, comment: z.string().optional() }),
  rejected: z.object({ requestId: RequestId, comment: z.string().optional() }),
  /**
   * The version made; `requestId` when it was published through a review; `effectiveFrom` when it
   * was scheduled for a later instant; `rollbackOf` when it brings back an earlier version's content.
   */
  published: z.object({
    version: z.number().int(),
    requestId: RequestId.optional(),
    effectiveFrom: z.iso.datetime().optional(),
    rollbackOf: z.number().int().optional(),
  }),
  /** A member added to a group, or a user given a role (`added` when they were not a member). */
  assigned: z.union([z.object({ memberId: z.string(), memberType: MemberType }), z.object({ role: Role, added: z.boolean() })]),
  executed: ExecutedDetails,
  /** A policy or flow base was soft-deleted (no details), or a group was deleted (its name). */
  deleted: z.object({ name: z.string().optional() }),
  'key created': z.object({
    name: z.string(),
    scopes: z.array(Scope),
    owner: z.string(),
    expiresAt: z.iso.datetime().nullable(),
    /** The key the new key was made with; null when made with a bearer token or at bootstrap. */
    createdWithKeyId: z.string().nullable(),
    /** The admin who issued a key for another member (or the admin CLI). */
    issuedBy: z.string().optional(),
  }),
  /** `memberRemoved` when the key went with its owner's membership; `revokedWith` when another key of the owner revoked it. */
  'key revoked': z.object({
    name: z.string(),
    owner: z.string(),
    memberRemoved: z.string().optional(),
    revokedWith: z.string().optional(),
  }),
  'member removed': z.object({ role: Role, keysRevoked: z.number().int().min(0) }),
  /** The org settings changed: `governanceApproval` always, `minCoverage` when it changed. */
  'settings changed': z.object({
    governanceApproval: z.object({ from: z.boolean(), to: z.boolean() }),
    minCoverage: z.object({ from: z.number().int(), to: z.number().int() }).optional(),
  }),
  /** A soft-deleted base was brought back: its current record's name and when it had been deleted. */
  restored: z.object({ name: z.string(), deletedAt: z.iso.datetime() }),
  /** A base (with its records) or a group (with its members) copied from another org's bundle. */
  imported: z.union([
    z.object({ name: z.string(), sourceOrgId: z.string(), sourceBaseId: z.string(), records: z.number().int() }),
    z.object({ name: z.string(), sourceOrgId: z.string(), sourceGroupId: z.string(), members: z.number().int() }),
  ]),
  decided: DecisionRecord,
  /** An endpoint was registered (docs/webhooks.md): where, for which kinds (`*`: all), why. Never its secret. */
  'webhook created': z.object({ url: z.string(), events: z.array(z.string()), description: z.string() }),
  /** An endpoint's fields that changed (to their new values), or its secret rotated. */
  'webhook changed': z.union([
    z.object({
      changes: z.object({
        url: z.string().optional(),
        events: z.array(z.string()).optional(),
        description: z.string().optional(),
        enabled: z.boolean().optional(),
      }),
    }),
    z.object({ secretRotated: z.literal(true) }),
  ]),
  'webhook deleted': z.object({ url: z.string() }),
  /** The webhooks service turned an endpoint off: it answered 410 (`gone`) or failed for the whole retry window (`failing`). */
  'webhook disabled': z.object({ reason: z.enum(['gone', 'failing']), url: z.string() }),
  /** A shadow candidate of a base started (docs/design/shadow-runs.md); `replaced` names the candidate of the shadow it replaced. */
  'shadow started': z.object({
    recordId: z.string(),
    sampleRate: z.number(),
    until: z.string().nullable(),
    replaced: z.string().optional(),
  }),
  /** A base's shadow was stopped, with its counts at that moment. */
  'shadow stopped': z.object({
    recordId: z.string(),
    sampled: z.number().int(),
    compared: z.number().int(),
    changed: z.number().int(),
  }),
  /** A scheduled version was cancelled before its instant (docs/design/timeline.md): it never runs by base id. */
  'schedule cancelled': z.object({ version: z.number().int(), effectiveFrom: z.iso.datetime() }),
  /**
   * A staged rollout started (with a publish), moved, was promoted or rolled back
   * (docs/design/canary.md); `reason: 'guard'` when its error guard rolled it back, with the error
   * rates of the last runs of each version that tripped it.
   */
  'rollout changed': z.object({
    action: z.enum(['started', 'percent', 'promoted', 'rolled_back']),
    version: z.number().int(),
    previousVersion: z.number().int(),
    percent: z.number(),
    fromPercent: z.number().optional(),
    by: z.string().nullable().optional(),
    reason: z.literal('guard').optional(),
    errorRates: z.object({ version: z.number(), previousVersion: z.number(), runs: z.number().int() }).optional(),
  }),
} as const satisfies { readonly [K in EventKind]: z.ZodType };

/** The `details` of a `K` event. */
export type EventDetails<K extends EventKind = EventKind> = z.infer<(typeof EventDetails)[K]>;

/** An event of kind `K` with its typed details; `TypedEvent` alone is the union of every kind, discriminated by `kind`. */
export type TypedEvent<K extends EventKind = EventKind> = {
  [P in K]: Omit<ArbiterEvent, 'kind' | 'details'> & { kind: P; details: EventDetails<P> };
}[K];

/**
 * {@link ArbiterEvent} with every kind's details checked ({@link EventDetails}): what {@link newEvent}
 * makes. Tests hold producers to it; the audit trail itself takes any details ({@link ArbiterEvent}).
 */
export const TypedEvent = z.discriminatedUnion(
  'kind',
  EVENT_KINDS.map((kind) => z.object({ ...eventHead, kind: z.literal(kind), details: EventDetails[kind] })) as unknown as [
    z.ZodObject,
    ...z.ZodObject[],
  ],
) as unknown as z.ZodType<TypedEvent>;

/** Who caused an event and in which org: a `Principal`, or an org id with an {@link EventActor}. */
export interface EventCause {
  readonly orgId: string;
  readonly userId: string;
  readonly apiKeyId?: string | undefined;
}

/**
 * The one way to make an event of kind `kind`: `details` typed by the kind, a fresh UUID v7
 * `eventId` and the time now unless given (an event id derived from what it counts makes a retry
 * harmless, as a run report's do).
 */
export function newEvent<K extends EventKind>(
  kind: K,
  by: EventCause,
  resource: EventResource,
  details: EventDetails<K>,
  opts: { at?: Date | string; eventId?: string } = {},
): TypedEvent<K> {
  const at = opts.at ?? new Date();
  return {
    eventId: opts.eventId ?? v7(),
    orgId: by.orgId,
    kind,
    at: typeof at === 'string' ? at : at.toISOString(),
    actor: { userId: by.userId, ...(by.apiKeyId !== undefined ? { apiKeyId: by.apiKeyId } : {}) },
    resource,
    details,
  };
}

/** Runs of one record by one caller, as counted by the execution service or reported by an SDK runtime. */
export interface ExecutedCounts {
  count: number;
  trueCount: number;
  falseCount: number;
  errorCount: number;
  /** Results that were neither `true` nor `false`, by result; left out of the details when empty. */
  customCounts?: Readonly<Record<string, number>> | ReadonlyMap<string, number>;
  version: number | null;
  via: Iterable<ExecutedDetails['via'][number]>;
  /** First and last run: a time is written as an ISO 8601 text, a text is kept as given. */
  from: Date | number | string;
  to: Date | number | string;
}

/** The details of an `executed` event, the one builder of both services that count runs. */
export function executedDetails(c: ExecutedCounts): ExecutedDetails {
  const custom = c.customCounts !== undefined && isMap(c.customCounts) ? Object.fromEntries(c.customCounts) : c.customCounts;
  return {
    aggregated: true,
    count: c.count,
    trueCount: c.trueCount,
    falseCount: c.falseCount,
    errorCount: c.errorCount,
    ...(custom !== undefined && Object.keys(custom).length > 0 ? { customCounts: custom } : {}),
    version: c.version,
    via: [...new Set(c.via)].sort(),
    from: isoTime(c.from),
    to: isoTime(c.to),
  };
}

const isMap = (v: object): v is ReadonlyMap<string, number> => v instanceof Map;
const isoTime = (t: Date | number | string): string => (typeof t === 'string' ? t : new Date(t).toISOString());

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
