import type { ShadowReport } from '@arbiter/contracts';

/** The counts a shadow report shows, in order, with their labels. */
export const SHADOW_COUNTS = [
  ['sampled', 'Sampled'],
  ['compared', 'Compared'],
  ['same', 'Same'],
  ['changed', 'Changed'],
  ['errors', 'Candidate errors'],
  ['dropped', 'Dropped'],
] as const satisfies ReadonlyArray<readonly [keyof ShadowReport, string]>;

/** One line on the shadow: its candidate, share, state and how long it runs. */
export function shadowStatus(report: ShadowReport): string {
  const candidate = report.candidate.version === null ? 'the draft' : `version ${report.candidate.version}`;
  const share = `${Math.round(report.sampleRate * 1000) / 10} %`;
  const state =
    report.state === 'running'
      ? report.until === null
        ? 'running until stopped'
        : `running until ${report.until}`
      : report.state === 'expired'
        ? `ended at ${report.until ?? ''}`
        : `stopped at ${report.stoppedAt ?? ''}`;
  return `Shadowing ${candidate} on ${share} of the runs by base id since ${report.since}, ${state}.`;
}

/** The note on examples: hidden without the `audit` right, explained when there are none. */
export function shadowExamplesNote(report: ShadowReport): string | null {
  if (report.examplesHidden === true) {
    return report.changed > 0 ? 'Examples need the `audit` right (admins and auditors): they show the runs’ inputs, masked.' : null;
  }
  if (report.changed > 0 && (report.examples ?? []).length === 0) return 'No examples kept: the org’s masks could not be read.';
  return null;
}

/** Whether the counts say little: more than a tenth of the sampled runs were dropped (the service was busy). */
export function mostlyDropped(report: ShadowReport): boolean {
  return report.sampled > 0 && report.dropped * 10 > report.sampled;
}
