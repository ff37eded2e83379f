import { TIMELINE_MAX_ENTRIES, type VersionTimeline } from '@arbiter/contracts';
import { timelineUntil } from '@arbiter/run';
import type { TimelineRow, VersionInstant } from '../repositories/timeline.js';

/** Most versions of one base waiting for their instant at once; one more is refused (409). */
export const MAX_PENDING_SCHEDULES = 20;

/** The effective interval of one version, as `GET …/versions` shows it. */
export interface VersionInterval {
  effectiveFrom: Date;
  effectiveUntil: Date | null;
  cancelled: boolean;
  rollbackOf: number | null;
}

/**
 * A base's timeline (docs/design/timeline.md) from its versions and timeline rows: each
 * non-cancelled version at its schedule, else its publish instant; ordered by instant then
 * version; the latest {@link TIMELINE_MAX_ENTRIES} kept.
 */
export function timelineOf(versions: readonly VersionInstant[], rows: readonly TimelineRow[]): VersionTimeline {
  const byVersion = new Map(rows.map((r) => [r.version, r]));
  const entries: VersionTimeline = [];
  for (const v of versions) {
    const row = byVersion.get(v.version);
    if (row?.cancelledAt) continue;
    entries.push({
      version: v.version,
      recordId: v.id,
      from: (row?.effectiveFrom ?? v.publishedAt).getTime(),
      ...(row?.rollbackOf != null ? { rollbackOf: row.rollbackOf } : {}),
    });
  }
  entries.sort((a, b) => a.from - b.from || a.version - b.version);
  return entries.slice(-TIMELINE_MAX_ENTRIES);
}

/** Whether some version of the timeline takes effect after `now` (epoch ms). */
export function hasPending(timeline: VersionTimeline, now: number): boolean {
  return timeline.some((e) => e.from > now);
}

/** Each version's effective interval, by version number. */
export function intervalsOf(versions: readonly VersionInstant[], rows: readonly TimelineRow[]): Map<number, VersionInterval> {
  const byVersion = new Map(rows.map((r) => [r.version, r]));
  const until = timelineUntil(timelineOf(versions, rows));
  const out = new Map<number, VersionInterval>();
  for (const v of versions) {
    const row = byVersion.get(v.version);
    const end = until.get(v.version);
    out.set(v.version, {
      effectiveFrom: row?.effectiveFrom ?? v.publishedAt,
      effectiveUntil: end === undefined || end === null ? null : new Date(end),
      cancelled: row?.cancelledAt != null,
      rollbackOf: row?.rollbackOf ?? null,
    });
  }
  return out;
}
