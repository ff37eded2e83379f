import { z } from 'zod';
import { RecordIdParam } from './registry.js';
import { Principal } from './principal.js';

/**
 * Shadow runs (docs/design/shadow-runs.md): a base's candidate record (a draft or a version of the
 * same base) also runs, after the caller's answer has been sent, on a sample of the runs by base
 * id, and a report counts how often it answers differently. Nothing about the candidate reaches
 * the caller.
 */

/** Examples of changed answers kept per shadow (the latest). */
export const SHADOW_MAX_EXAMPLES = 20;
/** Largest example (its JSON, UTF-16 code units); a bigger one keeps its answers and drops its input. */
export const SHADOW_MAX_EXAMPLE_CHARS = 8_192;

/**
 * The shadow of a base as the runnable index carries it (`shadow` of a live base entry): the
 * candidate record, the share of runs by base id that also run it, until when, and since when
 * (which also names its counters in Redis). Absent when the base has no running shadow.
 */
export const ShadowIndexEntry = z.object({
  recordId: z.string(),
  sampleRate: z.number().min(0).max(1),
  until: z.string().nullable(),
  since: z.string(),
});
export type ShadowIndexEntry = z.infer<typeof ShadowIndexEntry>;

/** Body of `PUT /policy/{baseId}/shadow` and `PUT /flow/{baseId}/shadow`. */
export const ShadowBody = z.strictObject({
  recordId: z.uuid().describe('The candidate: a draft or a version of this base (its record id)'),
  sampleRate: z.number().min(0).max(1).describe('Share of the runs by base id that also run the candidate, 0 to 1'),
  until: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('When shadowing stops by itself (ISO 8601, in the future); none: until stopped or replaced'),
});
export type ShadowBody = z.infer<typeof ShadowBody>;

/** One side of a compared run: what the comparison looks at. */
export const ShadowAnswer = z.object({
  /** A policy's result; a flow's (a boolean, a return node's text or a table's result). */
  result: z.unknown(),
  outcomes: z.record(z.string(), z.unknown()).optional(),
  errorCode: z.string().nullable(),
  /** Flows: the node ids of the path taken. */
  path: z.array(z.string()).optional(),
});
export type ShadowAnswer = z.infer<typeof ShadowAnswer>;

/** A run the candidate answered differently: the input masked as decision records are, and both answers. */
export const ShadowExample = z.object({
  at: z.string(),
  /** The input with the org's and the base's masks applied; null when it was too large to keep. */
  input: z.unknown(),
  masked: z.boolean(),
  live: ShadowAnswer,
  candidate: ShadowAnswer,
});
export type ShadowExample = z.infer<typeof ShadowExample>;

/** The counts of a shadow (all readers of the base). */
export const ShadowCounts = z.object({
  /** Runs picked by the sample rate. */
  sampled: z.number().int(),
  /** Picked runs whose candidate ran and was compared (`same + changed`). */
  compared: z.number().int(),
  same: z.number().int(),
  changed: z.number().int(),
  /** Compared runs where the candidate answered an engine error (`errorCode`). */
  errors: z.number().int(),
  /** Picked runs whose candidate did not run: the service was busy, the wait ran out, or the candidate was gone. */
  dropped: z.number().int(),
  /**
   * Changed runs by `live→candidate`, each side `true`, `false`, `error` (an answer with an
   * `errorCode`) or `other` (a flow's text or table result): at most 16 kinds. A change of
   * outcomes or path only (same side on both) counts as `true→true` and the like.
   */
  transitions: z.record(z.string(), z.number().int()),
});
export type ShadowCounts = z.infer<typeof ShadowCounts>;

/** `GET /policy/{baseId}/shadow`: the shadow, running or stopped, with its report. */
export const ShadowReport = ShadowCounts.extend({
  baseId: z.string(),
  candidate: z.object({ recordId: z.string(), version: z.number().int().nullable(), status: z.enum(['draft', 'published']) }),
  sampleRate: z.number(),
  until: z.string().nullable(),
  since: z.string(),
  startedBy: z.string(),
  /** `running`; `expired` once `until` passed; `stopped` after `DELETE`. */
  state: z.enum(['running', 'expired', 'stopped']),
  stoppedAt: z.string().nullable(),
  /** The latest changed runs (at most {@link SHADOW_MAX_EXAMPLES}): only for callers with the `audit` right. */
  examples: z.array(ShadowExample).optional(),
  /** `true` when examples exist but the caller may not read them (no `audit` right). */
  examplesHidden: z.boolean().optional(),
});
export type ShadowReport = z.infer<typeof ShadowReport>;

/**
 * A shadow's counts as a draft's review summary carries them (`shadow`), when the base's shadow (running or
 * stopped) has this draft as its candidate. The counts are since `since`: the draft may have changed meanwhile.
 */
export const ShadowSummary = ShadowCounts.extend({
  state: z.enum(['running', 'expired', 'stopped']),
  sampleRate: z.number(),
  since: z.string(),
});
export type ShadowSummary = z.infer<typeof ShadowSummary>;

/** Request of `registry.{kind}.shadow.set`. */
export const ShadowSetRequest = z.strictObject({ principal: Principal, baseId: RecordIdParam, ...ShadowBody.shape });
export type ShadowSetRequest = z.input<typeof ShadowSetRequest>;

/** Request of `registry.{kind}.shadow.get` and `registry.{kind}.shadow.stop`. */
export const ShadowBaseRequest = z.strictObject({ principal: Principal, baseId: RecordIdParam });
export type ShadowBaseRequest = z.input<typeof ShadowBaseRequest>;

/** Subjects of the registry's shadow endpoints, relative to the bus prefix. */
export const ShadowSubject = {
  policySet: 'registry.policy.shadow.set',
  policyGet: 'registry.policy.shadow.get',
  policyStop: 'registry.policy.shadow.stop',
  flowSet: 'registry.flow.shadow.set',
  flowGet: 'registry.flow.shadow.get',
  flowStop: 'registry.flow.shadow.stop',
} as const;
export type ShadowSubject = (typeof ShadowSubject)[keyof typeof ShadowSubject];

/**
 * Redis key of a shadow's counters (a hash: the fields of {@link ShadowCounts}, transitions as
 * `t:<live>→<candidate>`), written by the execution service, read by the registry. One per base
 * and start: a new shadow of the base starts from zero, and the registry deletes the keys of the
 * one it replaces.
 */
export function shadowCountsKey(prefix: string, kind: 'policy' | 'flow', baseId: string, since: string): string {
  return `${prefix}:shadow:${kind}:${baseId}:${since}`;
}

/** Redis key of a shadow's examples: a list of {@link ShadowExample} JSON texts, newest first, at most {@link SHADOW_MAX_EXAMPLES}. */
export function shadowExamplesKey(prefix: string, kind: 'policy' | 'flow', baseId: string, since: string): string {
  return `${shadowCountsKey(prefix, kind, baseId, since)}:examples`;
}

/** How long a shadow's counters and examples outlive their last write (seconds). */
export const SHADOW_KEYS_TTL_SECONDS = 30 * 86_400;
