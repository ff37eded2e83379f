import {
  type FlowDefinition,
  runnableBaseKey,
  runnableRecordKey,
  runnableTimelineKey,
  type FlowRecordEntry,
  type VersionTimeline,
  type PolicyRecordEntry,
  type RunnableBaseEntry,
  type RunnableRollout,
  ROLLOUT_MIN_RUNS_DEFAULT,
  type ShadowIndexEntry,
} from '@arbiter/contracts';
import { timelinePick } from '@arbiter/run';
import type { BaseRow, RecordRow } from '../repositories/records.js';
import type { ShadowRow } from '../repositories/shadows.js';
import type { TimelineRow } from '../repositories/timeline.js';
import type { RolloutRow } from '../repositories/rollouts.js';
import { pinnedDefinition } from './flow-review.js';
import { canonicalJson, sha256 } from './hash.js';
import { hasPending, timelineOf } from './timeline.js';

/** What one base contributes to the runnable index: its entry and one entry per record. */
export interface IndexEntries {
  rev: number;
  baseKey: string;
  base: RunnableBaseEntry;
  records: { key: string; value: PolicyRecordEntry | FlowRecordEntry }[];
  /** The whole timeline of a live base with versions (docs/design/timeline.md), under its own key for as-of runs. */
  timeline?: { key: string; value: VersionTimeline };
}

/** The hash a worker caches a record's content by: sha256 of the rule text, or of the canonical JSON of the definition a flow runs. */
export function contentHash(r: RecordRow): string {
  return r.kind === 'policy' ? sha256(r.rule ?? '') : sha256(canonicalJson(runnableDefinition(r)));
}

/** The definition a flow record runs: a version published through review runs its pinned versions. */
function runnableDefinition(r: RecordRow): FlowDefinition {
  return pinnedDefinition(r.definition!, r.pinnedVersions);
}

function schemaHash(r: RecordRow): string | null {
  return r.schema === null ? null : sha256(canonicalJson(r.schema));
}

/**
 * The index entries of a base and all its records (see `@arbiter/contracts` runnable-index): the
 * record runnable at `now` (epoch ms; the version in effect on its timeline, else the current
 * record) for a live base, with the whole timeline while a version waits for its instant;
 * tombstones everywhere for a deleted one.
 * A running shadow (not stopped, `until` not passed at `now`, candidate among the records) rides
 * along as `shadow`.
 */
export function indexEntries(
  prefix: string,
  base: BaseRow,
  records: RecordRow[],
  timelineRows: TimelineRow[] = [],
  now: number = Date.now(),
  rollout?: RolloutRow | null,
  shadow: ShadowRow | null = null,
): IndexEntries {
  const common = { rev: base.revision, orgId: base.orgId, baseId: base.id };
  const baseKey = runnableBaseKey(prefix, base.kind, base.id);
  if (base.deletedAt !== null) {
    return {
      rev: base.revision,
      baseKey,
      base: { state: 'deleted', ...common },
      records: records.map((r) => ({
        key: runnableRecordKey(prefix, base.kind, r.id),
        value: { state: 'deleted', ...common, recordId: r.id },
      })),
    };
  }
  const versions: Record<string, string> = {};
  for (const r of records) if (r.version !== null) versions[String(r.version)] = r.id;
  const timeline = timelineOf(
    records.filter((r) => r.version !== null).map((r) => ({ id: r.id, version: r.version!, publishedAt: r.publishedAt! })),
    timelineRows,
  );
  const inEffect = timelinePick(timeline, now);
  const currentId = inEffect?.recordId ?? base.currentRecordId;
  const current = records.find((r) => r.id === currentId);
  if (!current) throw new Error(`base \`${base.id}\` has no current record \`${currentId}\``);
  return {
    rev: base.revision,
    baseKey,
    base: {
      state: 'live',
      ...common,
      recordId: current.id,
      version: current.version,
      ruleHash: contentHash(current),
      schemaHash: schemaHash(current),
      versions,
      // While a version waits for its instant (or none is in effect yet), a run picks by its own clock.
      ...(hasPending(timeline, now) || (inEffect === undefined && Object.keys(versions).length > 0) ? { timeline } : {}),
      ...(rollout ? { rollout: runnableRollout(rollout) } : {}),
      ...shadowEntry(shadow, records, new Date(now)),
    },
    records: records.map((r) => ({ key: runnableRecordKey(prefix, base.kind, r.id), value: liveRecord(base, r) })),
    ...(timeline.length > 0 ? { timeline: { key: runnableTimelineKey(prefix, base.kind, base.id), value: timeline } } : {}),
  };
}

/** A running rollout as a run needs it (docs/design/canary.md). */
function runnableRollout(r: RolloutRow): RunnableRollout {
  return {
    id: r.id,
    percent: r.percent,
    ...(r.by !== null ? { by: r.by } : {}),
    recordId: r.recordId,
    version: r.version,
    previousRecordId: r.previousRecordId,
    previousVersion: r.previousVersion,
    ...(r.maxErrorRate !== null ? { guard: { maxErrorRate: r.maxErrorRate, minRuns: r.minRuns ?? ROLLOUT_MIN_RUNS_DEFAULT } } : {}),
  };
}

function liveRecord(base: BaseRow, r: RecordRow): PolicyRecordEntry | FlowRecordEntry {
  const common = {
    state: 'live' as const,
    rev: base.revision,
    orgId: base.orgId,
    baseId: base.id,
    recordId: r.id,
    status: r.status,
    version: r.version,
    schema: r.schema,
    schemaHash: schemaHash(r),
    ruleHash: contentHash(r),
  };
  return r.kind === 'policy'
    ? { ...common, kind: 'policy', rule: r.rule ?? '' }
    : { ...common, kind: 'flow', definition: runnableDefinition(r) };
}

/** The `shadow` field of a live base entry: present only while the shadow runs (docs/design/shadow-runs.md). */
function shadowEntry(shadow: ShadowRow | null, records: RecordRow[], now: Date): { shadow?: ShadowIndexEntry } {
  if (shadow === null || shadow.stoppedAt !== null) return {};
  if (shadow.until !== null && shadow.until.getTime() <= now.getTime()) return {};
  if (!records.some((r) => r.id === shadow.recordId)) return {};
  return {
    shadow: {
      recordId: shadow.recordId,
      sampleRate: shadow.sampleRate,
      until: shadow.until === null ? null : shadow.until.toISOString(),
      since: shadow.startedAt.toISOString(),
    },
  };
}
