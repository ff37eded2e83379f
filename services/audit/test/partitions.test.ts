/**
 * Month arithmetic of the monthly partitions: a partition covers the month its name says, for any
 * year an ISO 8601 date holds (1 to 9999): `Date.UTC` reads the years 0 to 99 as 1900 to 1999.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents } from '../src/repositories/events.js';
import { addMonths, createPartition, listPartitions, monthOf, monthStart } from '../src/repositories/partitions.js';
import type { Audit } from '../src/service.js';
import { event, startTestEnv, type TestEnv } from './support.js';

let t: TestEnv;
let audit: Audit;

beforeAll(async () => {
  t = await startTestEnv();
  audit = await t.startAudit();
});
afterAll(async () => t?.close());

describe('month arithmetic', () => {
  it('starts the months of the years 1 to 99 in those years', () => {
    expect(monthStart(101).toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(monthStart(9912).toISOString()).toBe('0099-12-01T00:00:00.000Z');
    expect(monthOf(new Date('0001-01-01T00:00:00.000Z'))).toBe(101);
  });

  it('adds months across years, forwards and backwards, in any year', () => {
    expect(addMonths(9912, 1)).toBe(10001);
    expect(addMonths(101, 13)).toBe(202);
    expect(addMonths(202612, 2)).toBe(202702);
    expect(addMonths(202701, -1)).toBe(202612);
    expect(addMonths(202603, -27)).toBe(202312);
    expect(() => addMonths(101, -1)).toThrow(RangeError);
    expect(() => monthStart(0)).toThrow(RangeError);
  });

  it('makes the partition of January of the year 1 hold that month, and names it with a four-digit year', async () => {
    await createPartition(audit.db, 101);
    expect(await listPartitions(audit.db)).toContain(101);
    const first = event('executed', { orgId: 'year-one', at: '0001-01-01T00:00:00.000Z' });
    const last = event('executed', { orgId: 'year-one', at: '0001-01-31T23:59:59.999Z' });
    expect(await insertEvents(audit.db, [first, last])).toBe(2);
    const { rows } = (await t.sql.raw(`select tableoid::regclass::text as part from audit_events where org_id = 'year-one'`)) as {
      rows: { part: string }[];
    };
    expect(rows.map((r) => r.part)).toEqual(['audit_events_p000101', 'audit_events_p000101']);
  });
});
