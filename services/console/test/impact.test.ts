import type { MeResponse } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import {
  examplesNote,
  impactRunReason,
  inputText,
  nextImpactState,
  pathText,
  sideText,
  transitionRows,
  type ShownImpact,
} from '../src/lib/impact.js';

const report = (over: Partial<ShownImpact> = {}): ShownImpact => ({
  impactId: '019ac200-0000-7000-8000-000000000001',
  baseId: 'b',
  contentHash: 'h',
  at: '2026-11-26T18:57:01.201Z',
  replayed: 10,
  unchanged: 7,
  changed: 3,
  errors: 0,
  unreplayable: 0,
  transitions: { 'true→false': 2, 'false→error': 1 },
  outcomes: {},
  examples: [],
  ...over,
});

const me = (role: MeResponse['role'], scopes?: MeResponse['scopes']): MeResponse => ({
  orgId: 'o',
  userId: 'u',
  role,
  ...(scopes !== undefined ? { scopes } : {}),
});

describe('impactRunReason', () => {
  it('lets editors, publishers and admins run it; tells a viewer, an auditor and a key without `edit` why not', () => {
    for (const role of ['editor', 'publisher', 'admin'] as const) expect(impactRunReason(me(role)), role).toBeNull();
    expect(impactRunReason(me('viewer'))).toBe('Your role (viewer) cannot run an impact analysis: editors, publishers and admins can.');
    expect(impactRunReason(me('auditor'))).toContain('Your role (auditor)');
    expect(impactRunReason(me('publisher', ['view']))).toBe(
      'The API key you signed in with has no `edit` scope: an impact analysis needs it.',
    );
    expect(impactRunReason(me('editor', ['view', 'edit']))).toBeNull();
  });
});

describe('examplesNote', () => {
  it('says why a report has no examples (the caller lacks the `audit` right), and when some were left out', () => {
    const { examples: _examples, ...counts } = report();
    expect(examplesNote(counts)).toBe('Examples need the `audit` right (admins and auditors): they show recorded decision inputs.');
    expect(examplesNote({ ...counts, changed: 0, transitions: {} })).toBeNull();
    expect(examplesNote(report())).toBeNull();
    expect(examplesNote(report({ examplesTruncated: false }))).toBeNull();
    expect(examplesNote(report({ examplesTruncated: true }))).toBe(
      'Some examples were left out: their recorded inputs are too large to keep in one report.',
    );
  });
});

describe('nextImpactState', () => {
  it('shows the summary’s report; a report that disappears after an edit is stale, never absent', () => {
    const r = report();
    expect(nextImpactState({ kind: 'none' }, null)).toEqual({ kind: 'none' });
    expect(nextImpactState({ kind: 'none' }, undefined)).toEqual({ kind: 'none' });
    const current = nextImpactState({ kind: 'none' }, r);
    expect(current).toEqual({ kind: 'current', report: r });
    const stale = nextImpactState(current, null);
    expect(stale).toEqual({ kind: 'stale', was: r });
    expect(nextImpactState(stale, null)).toEqual(stale);
    const newer = report({ impactId: '019ac200-0000-7000-8000-000000000002' });
    expect(nextImpactState(stale, newer)).toEqual({ kind: 'current', report: newer });
  });
});

describe('sideText, inputText and transitionRows', () => {
  it('writes a short input on one line and a long one indented', () => {
    expect(inputText({ applicant: { score: 604 } })).toBe('{"applicant":{"score":604}}');
    const long = { applicant: { name: 'x'.repeat(40), ssn: '***' } };
    expect(inputText(long)).toBe(JSON.stringify(long, null, 2));
  });

  it('says a side as its result or its error code', () => {
    expect(sideText({ result: true, errorCode: null, outcomes: {} })).toBe('true');
    expect(sideText({ result: 'manual review', errorCode: null, outcomes: {} })).toBe('"manual review"');
    expect(sideText({ result: false, errorCode: 'missing_selector', outcomes: {} })).toBe('error: missing_selector');
  });

  it('says a flow side as its result and its path of node ids', () => {
    const before = { result: true, errorCode: null, outcomes: {}, path: ['score', 'ok'] };
    const after = { result: 'manual review', errorCode: null, outcomes: {}, path: ['score', 'review'] };
    expect([sideText(before), pathText(before.path)]).toEqual(['true', 'score → ok']);
    expect([sideText(after), pathText(after.path)]).toEqual(['"manual review"', 'score → review']);
    expect(pathText([])).toBe('(no node)');
  });

  it('splits the transitions into before, after and count, most frequent first', () => {
    expect(transitionRows(report())).toEqual([
      ['true', 'false', 2],
      ['false', 'error', 1],
    ]);
    expect(transitionRows(report({ transitions: {} }))).toEqual([]);
  });
});
