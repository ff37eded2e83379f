import { RunnableBaseEntry } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { indexEntries } from '../src/domain/index-entries.js';
import type { BaseRow, RecordRow } from '../src/repositories/records.js';
import type { ShadowRow } from '../src/repositories/shadows.js';

const at = new Date('2026-12-01T10:00:00.000Z');
const base: BaseRow = {
  id: 'b-1',
  orgId: 'acme',
  kind: 'policy',
  createdBy: 'ann',
  createdAt: at,
  latestVersion: 1,
  currentRecordId: 'r-1',
  revision: 3,
  deletedAt: null,
};
const record = (id: string, version: number | null): RecordRow => ({
  id,
  baseId: 'b-1',
  kind: 'policy',
  status: version === null ? 'draft' : 'published',
  version,
  basedOnVersion: null,
  name: 'p',
  description: '',
  rule: `An **a** is ok if the __n__ of the **a** is at least ${version ?? 2}.`,
  definition: null,
  schema: null,
  tests: [],
  createdAt: at,
  createdBy: 'ann',
  updatedAt: at,
  updatedBy: 'ann',
  publishedAt: version === null ? null : at,
  publishedBy: version === null ? null : 'ann',
  authors: [],
  pinnedVersions: null,
});
const records = [record('r-1', 1), record('r-2', null)];
const shadow: ShadowRow = {
  baseId: 'b-1',
  orgId: 'acme',
  recordId: 'r-2',
  sampleRate: 0.25,
  until: new Date('2026-12-02T10:00:00.000Z'),
  startedAt: at,
  startedBy: 'ann',
  stoppedAt: null,
  stoppedBy: null,
};
const now = new Date('2026-12-01T12:00:00.000Z');

describe('the runnable index entry of a base with a shadow', () => {
  it('carries a running shadow as `shadow`, which the contract reads', () => {
    const e = indexEntries('p', base, records, [], now.getTime(), null, shadow);
    expect(e.base).toMatchObject({
      state: 'live',
      recordId: 'r-1',
      shadow: { recordId: 'r-2', sampleRate: 0.25, until: '2026-12-02T10:00:00.000Z', since: '2026-12-01T10:00:00.000Z' },
    });
    expect(RunnableBaseEntry.parse(JSON.parse(JSON.stringify(e.base)))).toEqual(e.base);
  });

  it('leaves it out when stopped, expired, its candidate is not among the records, or there is none', () => {
    for (const s of [
      { ...shadow, stoppedAt: now },
      { ...shadow, until: new Date('2026-12-01T11:59:59.000Z') },
      { ...shadow, recordId: 'r-9' },
      null,
    ]) {
      const e = indexEntries('p', base, records, [], now.getTime(), null, s);
      expect('shadow' in e.base, JSON.stringify(s)).toBe(false);
    }
  });

  it('keeps an entry without `shadow` readable (old entries)', () => {
    const e = indexEntries('p', base, records);
    expect(RunnableBaseEntry.parse(JSON.parse(JSON.stringify(e.base)))).toEqual(e.base);
  });
});
