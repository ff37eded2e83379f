/**
 * Which record of a pulled base runs by base id at an instant, as the service picks it
 * (docs/design/timeline.md): its versions on a timeline built from the pulled records'
 * `effectiveFrom` (else `publishedAt`) without cancelled ones, picked by `timelinePick`; a base
 * never published runs its draft. No I/O here.
 */

import type { TimelineEntry } from '@arbiter/contracts';
import { timelinePick } from '@arbiter/run';

type PulledRecord = Record<string, unknown>;

/** The pick: the record; `before`: `at` precedes the base's first version, which takes effect at that instant (epoch ms); `none`: nothing to run. */
export type PulledPick = { record: PulledRecord } | { before: number } | { none: true };

/** The timeline of a pulled base's records: each non-cancelled version at its effective instant (epoch ms), ordered. */
export function pulledTimeline(records: readonly PulledRecord[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  records.forEach((r, i) => {
    if (typeof r.version !== 'number' || r.cancelled === true) return;
    const from = Date.parse(typeof r.effectiveFrom === 'string' ? r.effectiveFrom : typeof r.publishedAt === 'string' ? r.publishedAt : '');
    if (Number.isNaN(from)) return;
    entries.push({ version: r.version, recordId: String(i), from });
  });
  return entries.sort((a, b) => a.from - b.from || a.version - b.version);
}

/**
 * The record of a pulled base that a run by base id gets at `at` (epoch ms): the version in effect
 * on its timeline; the draft when it has no version; `before` when `at` precedes its first version;
 * `none` when it has neither a version in effect nor a draft.
 */
export function pickPulled(records: readonly PulledRecord[], at: number): PulledPick {
  const versions = records.filter((r) => typeof r.version === 'number');
  if (versions.length === 0) {
    const draft = records.find((r) => r.status === 'draft');
    return draft === undefined ? { none: true } : { record: draft };
  }
  const timeline = pulledTimeline(records);
  const picked = timelinePick(timeline, at);
  if (picked !== undefined) return { record: records[Number(picked.recordId)] };
  return timeline.length > 0 ? { before: timeline[0].from } : { none: true };
}
