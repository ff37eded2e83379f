import type { ShadowReport } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { transitionsOf } from '../src/lib/impact.js';
import { mostlyDropped, shadowExamplesNote, shadowStatus } from '../src/lib/shadow.js';

const report = (over: Partial<ShadowReport> = {}): ShadowReport => ({
  baseId: 'b',
  candidate: { recordId: 'r', version: null, status: 'draft' },
  sampleRate: 0.25,
  until: null,
  since: '2026-12-02T10:00:00.000Z',
  startedBy: 'eddie',
  state: 'running',
  stoppedAt: null,
  sampled: 10,
  compared: 10,
  same: 6,
  changed: 4,
  errors: 0,
  dropped: 0,
  transitions: { 'true→false': 3, 'false→true': 1 },
  examplesHidden: true,
  ...over,
});

describe('the shadow panel', () => {
  it('says what is shadowed, on what share, and whether it still runs', () => {
    expect(shadowStatus(report())).toBe(
      'Shadowing the draft on 25 % of the runs by base id since 2026-12-02T10:00:00.000Z, running until stopped.',
    );
    expect(
      shadowStatus(report({ state: 'stopped', stoppedAt: 'T', candidate: { recordId: 'r', version: 3, status: 'published' } })),
    ).toContain('version 3');
    expect(shadowStatus(report({ state: 'stopped', stoppedAt: 'T' }))).toContain('stopped at T');
  });

  it('explains hidden examples only when there are changes, and warns when most runs were dropped', () => {
    expect(shadowExamplesNote(report())).toContain('audit');
    expect(shadowExamplesNote(report({ changed: 0 }))).toBeNull();
    expect(shadowExamplesNote(report({ examplesHidden: undefined, examples: [] }))).toContain('masks');
    expect(mostlyDropped(report())).toBe(false);
    expect(mostlyDropped(report({ sampled: 10, dropped: 2 }))).toBe(true);
  });

  it('lists transitions most frequent first', () => {
    expect(transitionsOf(report().transitions)).toEqual([
      ['true', 'false', 3],
      ['false', 'true', 1],
    ]);
  });
});
