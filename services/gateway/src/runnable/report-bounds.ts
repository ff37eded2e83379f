import { ArbiterError, type Principal, type RunReport } from '@arbiter/contracts';
import { validate as isUuid, version as uuidVersion } from 'uuid';

/** What a run report may claim (`RUN_REPORT_MAX_RUNS_PER_SECOND`, `RUN_REPORT_CLOCK_SKEW_MS`). */
export interface ReportBounds {
  /** Runs one runtime may count per second of a window, for one record. */
  maxRunsPerSecond: number;
  /** How far a runtime's clock may be from the gateway's: a window may start this long before its key was made, and end this long ahead of now. */
  clockSkewMs: number;
}

/** Defaults of {@link ReportBounds}: far above what one process evaluates locally, and a few minutes of clock drift. */
export const DEFAULT_REPORT_BOUNDS: ReportBounds = { maxRunsPerSecond: 100_000, clockSkewMs: 300_000 };

/**
 * When the API key in use was made: its id is a UUID v7 minted at its creation, whose first 48 bits
 * are that instant in milliseconds. Undefined for a caller without a key, or a key id of another kind.
 */
export function keyCreatedAt(p: Principal): number | undefined {
  const id = p.apiKeyId;
  if (id === undefined || !isUuid(id) || uuidVersion(id) !== 7) return undefined;
  return Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
}

/**
 * Refuses (400 `validation_failed`, every offending field named) a report claiming what its
 * runtime cannot have run: a window starting before the API key in use was made
 * (`before_key_created`), or ending after now (`in_future`), both give or take the clock skew; or
 * more runs than the window's seconds (at least one) at `maxRunsPerSecond` (`too_many_runs`).
 * Checked before anything is sent on, so a refused report changes nothing.
 */
export function checkReportBounds(p: Principal, report: RunReport, bounds: ReportBounds, now = Date.now()): void {
  const created = keyCreatedAt(p);
  const earliest = created === undefined ? undefined : created - bounds.clockSkewMs;
  const latest = now + bounds.clockSkewMs;
  const errors: { code: string; message: string; path: string }[] = [];
  report.runs.forEach((run, i) => {
    const from = Date.parse(run.from);
    const to = Date.parse(run.to);
    if (earliest !== undefined && from < earliest) {
      errors.push({
        code: 'before_key_created',
        message: `the window starts before the API key in use was made (${new Date(created!).toISOString()})`,
        path: `body.runs.${i}.from`,
      });
    }
    if (to > latest) errors.push({ code: 'in_future', message: 'the window ends in the future', path: `body.runs.${i}.to` });
    const most = Math.max(1, Math.ceil((to - from) / 1000)) * bounds.maxRunsPerSecond;
    if (run.count > most) {
      errors.push({
        code: 'too_many_runs',
        message: `more runs than one runtime can run in the window (at most ${most}: ${bounds.maxRunsPerSecond} a second)`,
        path: `body.runs.${i}.count`,
      });
    }
  });
  if (errors.length > 0) {
    throw new ArbiterError('validation_failed', `the report claims runs its runtime cannot have run (${errors[0].message})`, errors);
  }
}
