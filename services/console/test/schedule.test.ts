import { afterEach, describe, expect, it } from 'vitest';
import { effectiveFromOf, publishedNotice, rollbackNotice } from '../src/lib/schedule.js';

const zone = process.env.TZ;

afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe('the "Takes effect at" field', () => {
  it('is empty or not a time: at once', () => {
    expect(effectiveFromOf('')).toBeUndefined();
    expect(effectiveFromOf('2027-01-01')).toBeUndefined();
    expect(effectiveFromOf('tomorrow')).toBeUndefined();
    expect(effectiveFromOf('2027-13-45T99:00')).toBeUndefined();
  });

  it('reads the local time and sends it with the zone offset at that date', () => {
    process.env.TZ = 'Europe/Berlin';
    expect(effectiveFromOf('2027-01-01T09:30')).toBe('2027-01-01T09:30:00+01:00');
    expect(effectiveFromOf('2027-07-01T09:30:15')).toBe('2027-07-01T09:30:15+02:00');
    expect(Date.parse(effectiveFromOf('2027-01-01T09:30')!)).toBe(Date.parse('2027-01-01T08:30:00Z'));
    process.env.TZ = 'America/St_Johns';
    expect(effectiveFromOf('2027-01-01T09:30')).toBe('2027-01-01T09:30:00-03:30');
    process.env.TZ = 'Asia/Kolkata';
    expect(effectiveFromOf('2027-01-01T00:05')).toBe('2027-01-01T00:05:00+05:30');
    process.env.TZ = 'UTC';
    expect(effectiveFromOf('2027-01-01T09:30')).toBe('2027-01-01T09:30:00Z');
  });

  it('says whether the new version runs at once or when', () => {
    expect(publishedNotice(2, undefined)).toBe('Version 2 published.');
    expect(publishedNotice(2, '2027-01-01T09:30:00Z')).toMatch(/^Version 2 is scheduled for .+\.$/);
    expect(rollbackNotice(3, 1, undefined)).toBe('Version 3 brings back version 1.');
    expect(rollbackNotice(3, 1, '2027-01-01T09:30:00Z')).toMatch(/^Version 3 is scheduled for .+: it brings back version 1\.$/);
  });
});
