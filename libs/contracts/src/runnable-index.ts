import { z } from 'zod';
import { FlowDefinition } from './flow.js';
import { ShadowIndexEntry } from './shadow.js';

/**
 * The Redis index of what is runnable, written by the registry after every commit and
 * before it replies, read by the execution service so a run never touches PostgreSQL.
 *
 * Keys (prefix = `NATS_SUBJECT_PREFIX`): `${prefix}:runnable:{kind}:base:{baseId}` →
 * {@link RunnableBaseEntry}; `${prefix}:runnable:{kind}:record:{recordId}` → {@link PolicyRecordEntry}
 * or {@link FlowRecordEntry}. Values are JSON strings. Every entry carries the base's `rev`, which
 * grows with each committed change: a write never replaces an entry with a higher `rev`, so
 * replicas racing on one base cannot leave an older state behind. A deleted base leaves tombstones
 * (`state:"deleted"`) under its base key and every record key, so runs answer 404 from Redis alone.
 * On a miss, ask `registry.{kind}.resolve`, which rebuilds the base's entries from PostgreSQL.
 */
export const RunnableKind = z.enum(['policy', 'flow']);
export type RunnableKind = z.infer<typeof RunnableKind>;

/** Key of a base's entry. */
export function runnableBaseKey(prefix: string, kind: RunnableKind, baseId: string): string {
  return `${prefix}:runnable:${kind}:base:${baseId}`;
}

/** Key of a record's entry. */
export function runnableRecordKey(prefix: string, kind: RunnableKind, recordId: string): string {
  return `${prefix}:runnable:${kind}:record:${recordId}`;
}

const Rev = z.number().int().min(1);

/** Most entries a base's {@link VersionTimeline} keeps: the latest effective instants (older as-of runs answer 404). */
export const TIMELINE_MAX_ENTRIES = 100;

/**
 * One version on a base's timeline (docs/design/timeline.md): it is the base's runnable version
 * from `from` (epoch ms: its schedule, else its publish instant) until a later entry's instant.
 * `rollbackOf`: the earlier version whose content it brings back.
 */
export const TimelineEntry = z.object({
  version: z.number().int().min(1),
  recordId: z.string(),
  from: z.number().int(),
  rollbackOf: z.number().int().min(1).optional(),
});
export type TimelineEntry = z.infer<typeof TimelineEntry>;

/**
 * The versions of a base in the order they take effect (`from` ascending, then version), without
 * cancelled ones; at most {@link TIMELINE_MAX_ENTRIES} (the latest). `@arbiter/run` `timelinePick`
 * chooses from it.
 */
export const VersionTimeline = z.array(TimelineEntry).max(TIMELINE_MAX_ENTRIES);
export type VersionTimeline = z.infer<typeof VersionTimeline>;

/**
 * Key of a base's whole timeline (a {@link VersionTimeline}, JSON), written with its entries for
 * as-of runs; the base entry carries it as `timeline` only while a version waits for its instant.
 */
export function runnableTimelineKey(prefix: string, kind: RunnableKind, baseId: string): string {
  return `${prefix}:runnable:${kind}:timeline:${baseId}`;
}

/**
 * A staged rollout of a base's latest version (docs/design/canary.md): `percent` of the runs by base
 * id get `recordId` (version `version`), the rest `previousRecordId`; the choice is `@arbiter/run`'s
 * `rolloutChoosesNew` on the run's data (a stable hash of the value at `by`, else per run). `id`
 * names this rollout (its error counters); `guard` when it rolls back by itself on errors.
 */
export const RunnableRollout = z.object({
  id: z.string(),
  percent: z.number().min(0).max(100),
  by: z.string().optional(),
  recordId: z.string(),
  version: z.number().int(),
  previousRecordId: z.string(),
  previousVersion: z.number().int(),
  guard: z.object({ maxErrorRate: z.number(), minRuns: z.number().int() }).optional(),
});
export type RunnableRollout = z.infer<typeof RunnableRollout>;

/**
 * A base: its current runnable record (the version in effect, else the draft) with the hashes a
 * worker caches by, and the id of every version (`versions["3"]` → record id) for pinned runs.
 */
export const RunnableBaseEntry = z.discriminatedUnion('state', [
  z.object({
    state: z.literal('live'),
    rev: Rev,
    orgId: z.string(),
    baseId: z.string(),
    recordId: z.string(),
    version: z.number().int().nullable(),
    /** sha256 (hex) of the rule text, or of the definition's JSON for a flow. */
    ruleHash: z.string(),
    /** sha256 (hex) of the schema's JSON; null without a schema. */
    schemaHash: z.string().nullable(),
    versions: z.record(z.string(), z.string()),
    /** The base's running shadow candidate (docs/design/shadow-runs.md); absent without one. */
    shadow: ShadowIndexEntry.optional(),
    /**
     * Present while a scheduled version waits for its instant: the whole timeline, so a run picks
     * by its own clock (`recordId` is then the version runnable when the entry was written).
     */
    timeline: VersionTimeline.optional(),
    /** A running staged rollout (absent otherwise: never null). */
    rollout: RunnableRollout.optional(),
  }),
  z.object({ state: z.literal('deleted'), rev: Rev, orgId: z.string(), baseId: z.string() }),
]);
export type RunnableBaseEntry = z.infer<typeof RunnableBaseEntry>;

const recordCommon = {
  rev: Rev,
  orgId: z.string(),
  baseId: z.string(),
  recordId: z.string(),
};
const liveCommon = {
  state: z.literal('live'),
  ...recordCommon,
  status: z.enum(['draft', 'published']),
  version: z.number().int().nullable(),
  schema: z.record(z.string(), z.unknown()).nullable(),
  schemaHash: z.string().nullable(),
};
const deletedRecord = z.object({ state: z.literal('deleted'), ...recordCommon });

/** A live policy record as a run needs it; `ruleHash` is the sha256 (hex) of `rule`. */
export const LivePolicyRecordEntry = z.object({ ...liveCommon, kind: z.literal('policy'), rule: z.string(), ruleHash: z.string() });
export type LivePolicyRecordEntry = z.infer<typeof LivePolicyRecordEntry>;

/** A live flow record as a run needs it; `ruleHash` is the sha256 (hex) of the definition's JSON. */
export const LiveFlowRecordEntry = z.object({ ...liveCommon, kind: z.literal('flow'), definition: FlowDefinition, ruleHash: z.string() });
export type LiveFlowRecordEntry = z.infer<typeof LiveFlowRecordEntry>;

/** The entry of a policy record key: live, or the tombstone of a deleted base. */
export const PolicyRecordEntry = z.discriminatedUnion('state', [LivePolicyRecordEntry, deletedRecord]);
export type PolicyRecordEntry = z.infer<typeof PolicyRecordEntry>;

/** The entry of a flow record key: live, or the tombstone of a deleted base. */
export const FlowRecordEntry = z.discriminatedUnion('state', [LiveFlowRecordEntry, deletedRecord]);
export type FlowRecordEntry = z.infer<typeof FlowRecordEntry>;
