import type { TimelineEntry, VersionTimeline } from '@arbiter/contracts';

/**
 * The version of a base runnable at `at` (epoch ms) on its timeline (docs/design/timeline.md): the
 * entry whose instant is the latest at or before `at` (between equal instants, the higher
 * version). Undefined before the first entry. Pure: the execution service and the SDK's local
 * runtime call it with the same timeline and clock, so every replica and runtime choose alike.
 */
export function timelinePick(timeline: VersionTimeline, at: number): TimelineEntry | undefined {
  let best: TimelineEntry | undefined;
  for (const e of timeline) {
    if (e.from > at) continue;
    if (best === undefined || e.from > best.from || (e.from === best.from && e.version > best.version)) best = e;
  }
  return best;
}

/**
 * When each entry stops being runnable: the instant of the next entry that takes over, null while
 * none does. By version number.
 */
export function timelineUntil(timeline: VersionTimeline): Map<number, number | null> {
  const ordered = [...timeline].sort((a, b) => a.from - b.from || a.version - b.version);
  const until = new Map<number, number | null>();
  ordered.forEach((e, i) => until.set(e.version, i + 1 < ordered.length ? ordered[i + 1].from : null));
  return until;
}

/**
 * A run's clock in epoch ms from an ISO instant (`asOf`, else `now`), else `fallback` (the current
 * time). Undefined when the text is not a date.
 */
export function instantOf(iso: string | undefined, fallback: number): number | undefined {
  if (iso === undefined) return fallback;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
}
