/**
 * What the fault suite measures in one fault's window of answers, and the table it prints: per
 * fault, the answers by status, the slowest answer, the time to recovery, the events lost and
 * duplicated among the creates of that window, and what is wrong.
 */

import { eventually } from '@arbiter/test-kit';
import type { Answer, Kind } from './load.js';

/** The slowest answer allowed: the gateway's longest deadline to a service (5 s) plus scheduling slack. */
export const MAX_ANSWER_MS = 6500;
/** Every kind of request must succeed again within this time after the fault (or its end). */
export const MAX_RECOVERY_MS = 30_000;

export interface Row {
  scenario: string;
  fault: string;
  answers: number;
  byStatus: Record<string, number>;
  slowestMs: number;
  /** Time from the fault (or its end) until every kind succeeded again; null: never; undefined: not a fault. */
  recoveryMs: number | null | undefined;
  /** Policies created (201) in this window: their `created` events are checked at the end. */
  createdIds: string[];
  lost?: number;
  duplicated?: number;
  bad: string[];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** When every kind of request has succeeded after `since` through each of `gateways`, or null if one has not yet. */
export function recoveredAt(answers: Answer[], since: number, kinds: readonly Kind[], gateways: Iterable<number>): number | null {
  let last = 0;
  for (const gateway of gateways) {
    for (const kind of kinds) {
      const ok = answers.find((a) => a.gateway === gateway && a.kind === kind && a.startedAt >= since && a.status >= 200 && a.status < 300);
      if (!ok) return null;
      last = Math.max(last, ok.startedAt + ok.ms);
    }
  }
  return last;
}

/**
 * Waits (polling the growing `answers` of the whole load) until {@link recoveredAt} holds for the
 * answers from index `from` on, through every gateway the load has used, or {@link MAX_RECOVERY_MS} has passed.
 */
export async function waitForRecovery(answers: Answer[], from: number, since: number, kinds: readonly Kind[]): Promise<number | null> {
  const gateways = new Set(answers.map((a) => a.gateway));
  const recovered = () => {
    const at = recoveredAt(answers.slice(from), since, kinds, gateways);
    if (at === null) throw new Error('not recovered yet');
    return at;
  };
  // Not recovered within the bound is a finding of the report (null), not a failure here.
  return eventually(recovered, { timeoutMs: Math.max(0, since + MAX_RECOVERY_MS - Date.now()), intervalMs: 100 }).catch(() => null);
}

/** What is wrong with the answers of one fault's window (empty when nothing is). */
export function defects(window: Answer[]): string[] {
  const bad: string[] = [];
  const count = (p: (a: Answer) => boolean) => window.filter(p).length;
  if (count((a) => a.status === 500)) bad.push(`${count((a) => a.status === 500)} × 500`);
  const notProblem = window.filter((a) => a.status >= 400 && !a.problem);
  if (notProblem.length) bad.push(`${notProblem.length} errors not RFC 9457 (e.g. ${notProblem[0].kind} ${notProblem[0].status})`);
  const slow = window.filter((a) => a.ms > MAX_ANSWER_MS);
  if (slow.length) bad.push(`${slow.length} answers slower than ${MAX_ANSWER_MS} ms (slowest ${Math.max(...slow.map((a) => a.ms))} ms)`);
  return bad;
}

/** One row of the table from a fault's window; `recovered` is when every kind succeeded again (null: never; undefined: not a fault). */
export function rowOf(
  scenario: string,
  fault: string,
  window: Answer[],
  since: number,
  recovered: number | null | undefined,
  bad: string[],
): Row {
  const byStatus: Record<string, number> = {};
  for (const a of window) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  if (recovered === null) bad.push(`not recovered within ${MAX_RECOVERY_MS} ms`);
  return {
    scenario,
    fault,
    answers: window.length,
    byStatus,
    slowestMs: Math.max(0, ...window.map((a) => a.ms)),
    recoveryMs: recovered == null ? recovered : Math.max(0, recovered - since),
    createdIds: window.filter((a) => a.createdId !== undefined).map((a) => a.createdId!),
    bad,
  };
}

/** Counts each row's creates missing from `events` (policy id → `created` events seen) and seen more than once. */
export function countEvents(rows: Row[], events: Map<string, number>): { lost: number; duplicated: number } {
  let lost = 0;
  let duplicated = 0;
  for (const row of rows) {
    row.lost = row.createdIds.filter((id) => !events.has(id)).length;
    row.duplicated = row.createdIds.filter((id) => (events.get(id) ?? 0) > 1).length;
    lost += row.lost;
    duplicated += row.duplicated;
  }
  return { lost, duplicated };
}

/** The table of every row, grouped by scenario, with `notes` under it. */
export function formatTable(rows: Row[], notes: string[]): string {
  const statuses = [...new Set(rows.flatMap((r) => Object.keys(r.byStatus)))].sort();
  const header = [
    'scenario',
    'fault',
    'answers',
    ...statuses.map((s) => (s === '0' ? 'no answer' : s)),
    'slowest ms',
    'recovery ms',
    'lost',
    'dup',
    'defects',
  ];
  const lines = rows.map((r) => [
    r.scenario,
    r.fault,
    String(r.answers),
    ...statuses.map((s) => String(r.byStatus[s] ?? 0)),
    String(r.slowestMs),
    r.recoveryMs === undefined ? '-' : r.recoveryMs === null ? 'never' : String(r.recoveryMs),
    r.lost === undefined ? '-' : String(r.lost),
    r.duplicated === undefined ? '-' : String(r.duplicated),
    r.bad.join('; ') || 'none',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(' | ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...lines.map(fmt), ...notes].join('\n');
}
