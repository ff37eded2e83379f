import type { ImpactReport, MeResponse } from '@arbiter/contracts';
import { ROLE_CAPABILITIES } from '@arbiter/contracts/access';
import { can } from './session.js';

/** An impact report as the review view shows it: a policy's (`policyId`) or a flow's (`flowId`). */
export type ShownImpact = ImpactReport;

/** One side of a changed decision (`before` or `after`). */
export type ImpactSide = NonNullable<ShownImpact['examples']>[number]['before'];

/** What the panel knows of the draft's report: the current one, none, or one made stale by an edit. */
export type ImpactState = { kind: 'current'; report: ShownImpact } | { kind: 'none' } | { kind: 'stale'; was: ShownImpact };

/** The counts of a report, in the order shown, with their labels. */
export const IMPACT_COUNTS = [
  ['replayed', 'Replayed'],
  ['unchanged', 'Unchanged'],
  ['changed', 'Changed'],
  ['errors', 'Errors'],
  ['unreplayable', 'Unreplayable'],
] as const satisfies ReadonlyArray<readonly [keyof ShownImpact, string]>;

/**
 * Why the signed-in caller may not run an impact analysis of a draft, or null when they may: it
 * needs the `edit` capability (editors analyse drafts; publishers and admins any record).
 */
export function impactRunReason(me: MeResponse): string | null {
  if (can(me, 'edit')) return null;
  if (me.scopes !== undefined && ROLE_CAPABILITIES[me.role].includes('edit')) {
    return 'The API key you signed in with has no `edit` scope: an impact analysis needs it.';
  }
  return `Your role (${me.role}) cannot run an impact analysis: editors, publishers and admins can.`;
}

/**
 * What the report says about its examples, besides them, or null when it shows them all: the API
 * leaves them out for callers without the `audit` right (they hold recorded inputs, read by the
 * same people as `GET /decisions`), and leaves out those that did not fit a report.
 */
export function examplesNote(report: ShownImpact): string | null {
  if (report.examples === undefined) {
    return report.changed > 0 ? 'Examples need the `audit` right (admins and auditors): they show recorded decision inputs.' : null;
  }
  if (report.examplesTruncated === true) {
    return 'Some examples were left out: their recorded inputs are too large to keep in one report.';
  }
  return null;
}

/**
 * The report to show after the review summary answered `impact` (null: none, or stale), given the
 * report shown before it: a report that disappears after the draft changed is stale, not absent.
 */
export function nextImpactState(previous: ImpactState, impact: ShownImpact | null | undefined): ImpactState {
  if (impact) return { kind: 'current', report: impact };
  if (previous.kind === 'current') return { kind: 'stale', was: previous.report };
  return previous.kind === 'stale' ? previous : { kind: 'none' };
}

/** A side of a changed decision in a few words: the result, or the error code. */
export function sideText(side: ImpactSide): string {
  return side.errorCode !== null ? `error: ${side.errorCode}` : JSON.stringify(side.result);
}

/** A flow side's path (the node ids it went through) in a few words. */
export function pathText(path: readonly string[]): string {
  return path.length > 0 ? path.join(' → ') : '(no node)';
}

/** A recorded input as text: on one line when short, else indented. */
export function inputText(input: unknown): string {
  const line = JSON.stringify(input);
  return line.length <= 60 ? line : JSON.stringify(input, null, 2);
}

/** The transitions of a report as rows `[from, to, count]`, most frequent first. */
export function transitionRows(report: ShownImpact): Array<[string, string, number]> {
  return transitionsOf(report.transitions);
}

/** Counts by `from→to` key as rows `[from, to, count]`, most frequent first (impact reports and shadow reports alike). */
export function transitionsOf(transitions: Record<string, number>): Array<[string, string, number]> {
  return Object.entries(transitions)
    .map(([key, n]): [string, string, number] => {
      const [from = key, to = ''] = key.split('→');
      return [from, to, n];
    })
    .sort((a, b) => b[2] - a[2] || a[0].localeCompare(b[0]));
}
