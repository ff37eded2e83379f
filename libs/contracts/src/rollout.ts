import { z } from 'zod';
import { Principal } from './principal.js';

/**
 * Staged rollouts of a new version (docs/design/canary.md, docs/api.md#staged-rollouts): a publish
 * may start one, then `POST /{kind}/{baseId}/rollout` moves its share, `.../rollout/promote` ends
 * it with the new version serving all and `.../rollout/rollback` ends it with the previous version
 * serving all (the new one stays in history).
 */
export const RolloutSubject = {
  /** Every rollout act on a policy base (`RolloutRequest` → `RolloutState`). */
  policy: 'registry.policy.rollout',
  /** Every rollout act on a flow base. */
  flow: 'registry.flow.rollout',
} as const;
export type RolloutSubject = (typeof RolloutSubject)[keyof typeof RolloutSubject];

/** Longest `by` data path. */
export const ROLLOUT_BY_MAX = 200;
/** Fewest and most runs of each version the guard compares. */
export const ROLLOUT_MIN_RUNS_MIN = 10;
export const ROLLOUT_MIN_RUNS_MAX = 10_000;
/** Runs of each version the guard compares when `minRuns` is not given. */
export const ROLLOUT_MIN_RUNS_DEFAULT = 100;

/** A share of runs in percent, 0–100, to a hundredth (the choice has 10,000 buckets). */
export const RolloutPercent = z
  .number()
  .min(0)
  .max(100)
  .refine((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6, 'at most two decimals (the choice has 10,000 buckets)')
  .describe('Share of runs by base id that get the new version, 0–100 (two decimals at most)');

/** A data path: property names (or array indexes) joined by dots, e.g. `customer.id`. */
export const RolloutBy = z
  .string()
  .min(1)
  .max(ROLLOUT_BY_MAX)
  .regex(/^[^.]+(\.[^.]+)*$/, 'a data path: names joined by single dots, e.g. `customer.id`')
  .describe(
    'Data path whose value picks the version (same value, same version: a stable hash); ' +
      'absent, or the value missing in a run’s data: chosen per run',
  );

/** What a publish adds to start a rollout (`rollout` of `PUT /policy/{id}` with `status:"published"`, and of `.../review/publish`). */
export const RolloutStart = z
  .strictObject({
    percent: RolloutPercent,
    by: RolloutBy.optional(),
    maxErrorRate: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .describe(
        'Guard: roll back by itself when the share of the new version’s answers with an `errorCode` exceeds ' +
          'the previous version’s by more than this (0–1) over the last `minRuns` runs of each',
      ),
    minRuns: z
      .number()
      .int()
      .min(ROLLOUT_MIN_RUNS_MIN)
      .max(ROLLOUT_MIN_RUNS_MAX)
      .optional()
      .describe(`Runs of each version the guard compares (default ${ROLLOUT_MIN_RUNS_DEFAULT}); needs \`maxErrorRate\``),
  })
  .refine((r) => r.minRuns === undefined || r.maxErrorRate !== undefined, { message: '`minRuns` needs `maxErrorRate`', path: ['minRuns'] });
export type RolloutStart = z.infer<typeof RolloutStart>;

/** Body of `POST /policy/{baseId}/rollout` and `POST /flow/{baseId}/rollout`: the new share. Unknown keys are rejected. */
export const RolloutPercentBody = z.strictObject({ percent: RolloutPercent });
export type RolloutPercentBody = z.infer<typeof RolloutPercentBody>;

/** A running rollout as `GET .../rollout` shows it. */
export const Rollout = z.object({
  id: z.uuid(),
  percent: z.number(),
  by: z.string().nullable(),
  version: z.number().int().describe('The new version'),
  recordId: z.uuid(),
  previousVersion: z.number().int().describe('The version the other runs get'),
  previousRecordId: z.uuid(),
  maxErrorRate: z.number().nullable(),
  minRuns: z.number().int().nullable(),
  startedAt: z.iso.datetime(),
  startedBy: z.string(),
  updatedAt: z.iso.datetime(),
  updatedBy: z.string(),
});
export type Rollout = z.infer<typeof Rollout>;

/** Answer of every rollout route: the base and its running rollout (null when none runs). */
export const RolloutState = z.object({ baseId: z.uuid(), kind: z.enum(['policy', 'flow']), rollout: Rollout.nullable() });
export type RolloutState = z.infer<typeof RolloutState>;

/**
 * Request of `registry.{kind}.rollout`. `get` (any member), `percent`, `promote`, `rollback`
 * (publisher or admin); `guard` (any caller, sent by the execution service when a guard's counters
 * trip): the registry reads the counters itself and rolls back only when they say so.
 */
export const RolloutRequest = z.strictObject({
  principal: Principal,
  baseId: z.string().min(1).max(100),
  action: z.enum(['get', 'percent', 'promote', 'rollback', 'guard']),
  percent: RolloutPercent.optional(),
  /** `guard`: the rollout the counters are of (a later rollout is not rolled back for an older one's runs). */
  rolloutId: z.string().max(100).optional(),
});
export type RolloutRequest = z.input<typeof RolloutRequest>;

/**
 * Redis keys of a guarded rollout's last outcomes per version, written by the execution service:
 * a string of `0` (answered) and `1` (answered with an `errorCode`), newest last, at most `minRuns` long.
 */
export function rolloutWindowKey(prefix: string, rolloutId: string, arm: 'new' | 'previous'): string {
  return `${prefix}:rollout:${rolloutId}:${arm}`;
}
