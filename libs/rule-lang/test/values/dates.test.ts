import { describe, expect, it } from 'vitest';
import { dayFromDateText, dayOfInstant, dayToText, toDay, toInstant } from '../../src/values/index.js';

const utcDay = (y: number, m: number, d: number): number => Date.UTC(y, m - 1, d) / 86_400_000;

describe('dayFromDateText / toDay on YYYY-MM-DD', () => {
  it('counts days since 1970-01-01', () => {
    expect(dayFromDateText('1970-01-01')).toBe(0);
    expect(dayFromDateText('1970-01-02')).toBe(1);
    expect(dayFromDateText('1969-12-31')).toBe(-1);
    expect(dayFromDateText('2000-03-01')).toBe(utcDay(2000, 3, 1));
    expect(dayFromDateText('2024-03-01')).toBe(19783);
    expect(toDay('2024-03-01')).toBe(19783);
  });

  it('handles leap years (every 4, not every 100, every 400)', () => {
    expect(dayFromDateText('2024-02-29')).toBe(utcDay(2024, 2, 29));
    expect(dayFromDateText('2000-02-29')).toBe(utcDay(2000, 2, 29));
    expect(dayFromDateText('2023-02-29')).toBeNaN();
    expect(dayFromDateText('1900-02-29')).toBeNaN();
    expect(dayFromDateText('2100-02-29')).toBeNaN();
    expect(toDay('2023-02-29')).toBeNaN();
  });

  it('rejects impossible dates', () => {
    for (const s of ['2024-00-10', '2024-13-01', '2024-01-00', '2024-01-32', '2024-04-31', '2024-06-31', '2024-09-31', '2024-11-31']) {
      expect(dayFromDateText(s), s).toBeNaN();
      expect(toDay(s), s).toBeNaN();
    }
    expect(dayFromDateText('2024-01-31')).toBe(utcDay(2024, 1, 31));
  });

  it('rejects other shapes', () => {
    for (const s of [
      '2024-3-01',
      '2024-03-1',
      '24-03-01',
      '20240301',
      '2024/03/01',
      ' 2024-03-01',
      '2024-03-01 ',
      '+2024-03-01',
      '2024-03-01\n',
      '２０２４-03-01',
      '',
    ]) {
      expect(dayFromDateText(s), JSON.stringify(s)).toBeNaN();
      expect(toDay(s), JSON.stringify(s)).toBeNaN();
    }
    // dayFromDateText takes only the plain date, never a date-time
    expect(dayFromDateText('2024-03-01T10:00:00Z')).toBeNaN();
  });

  it('covers years 0000-9999 without the Date.UTC two-digit-year quirk', () => {
    expect(dayFromDateText('0000-01-01')).toBe(-719528);
    expect(dayFromDateText('0000-02-29')).toBe(-719528 + 59); // year 0 is a leap year
    expect(dayFromDateText('0099-12-31')).toBe(dayFromDateText('0100-01-01') - 1);
    expect(dayFromDateText('9999-12-31')).toBe(2932896);
  });

  it('agrees with Date.UTC over 1899-2101 (every 13th day)', () => {
    for (let day = utcDay(1899, 1, 1); day <= utcDay(2101, 12, 31); day += 13) {
      const text = new Date(day * 86_400_000).toISOString().slice(0, 10);
      expect(dayFromDateText(text)).toBe(day);
      expect(dayToText(day)).toBe(text);
    }
  });
});

describe('toDay on date-times (§7.2 date-like)', () => {
  it('takes the written date when there is no offset', () => {
    expect(toDay('2024-03-01T22:00')).toBe(19783);
    expect(toDay('2024-03-01T23:59:59')).toBe(19783);
    expect(toDay('2024-03-01T00:00:00.000001')).toBe(19783);
  });

  it('accepts T and Z in either case', () => {
    expect(toDay('2024-03-01T22:00:00Z')).toBe(19783);
    expect(toDay('2024-03-01t22:00:00z')).toBe(19783);
    expect(toDay('2024-03-01T22:00Z')).toBe(19783);
    expect(toDay('2024-03-01t22:00z')).toBe(19783);
  });

  it('converts an offset to UTC before truncating to the day', () => {
    expect(toDay('2024-03-01T23:30:00-02:00')).toBe(dayFromDateText('2024-03-02'));
    expect(toDay('2024-03-01T21:59:59-02:00')).toBe(dayFromDateText('2024-03-01'));
    expect(toDay('2024-03-01T22:00:00-02:00')).toBe(dayFromDateText('2024-03-02'));
    expect(toDay('2024-03-01T01:00:00+02:00')).toBe(dayFromDateText('2024-02-29'));
    expect(toDay('2024-03-01T02:00:00+02:00')).toBe(dayFromDateText('2024-03-01'));
    expect(toDay('2023-12-31T23:00-05:00')).toBe(dayFromDateText('2024-01-01'));
    expect(toDay('2024-01-01T00:30+00:45')).toBe(dayFromDateText('2023-12-31'));
    expect(toDay('2024-03-01T12:00:00+00:00')).toBe(dayFromDateText('2024-03-01'));
    expect(toDay('2024-03-01T12:00:00-00:00')).toBe(dayFromDateText('2024-03-01'));
    expect(toDay('2024-03-01T00:00:00+23:59')).toBe(dayFromDateText('2024-02-29'));
  });

  it('agrees with Date.parse on a sample of instants with offsets', () => {
    const samples = [
      '2024-03-01T23:30:00-02:00',
      '2024-02-28T20:15:30.5+05:30',
      '1999-12-31T19:00:00-05:00',
      '2000-01-01T04:59:59+05:00',
      '2024-12-31T22:00:00-03:00',
      '1970-01-01T00:00:00+01:00',
    ];
    for (const s of samples) expect(toDay(s), s).toBe(Math.floor(Date.parse(s) / 86_400_000));
  });

  it('accepts seconds, fractions of any length and a leap second', () => {
    expect(toDay('2024-03-01T10:20:30')).toBe(19783);
    expect(toDay('2024-03-01T10:20:30.1')).toBe(19783);
    expect(toDay('2024-03-01T10:20:30.123456789Z')).toBe(19783);
    expect(toDay('2016-12-31T23:59:60Z')).toBe(dayFromDateText('2016-12-31'));
  });

  it('rejects impossible times, offsets and dates', () => {
    for (const s of [
      '2024-03-01T24:00',
      '2024-03-01T23:60',
      '2024-03-01T10:00:61',
      '2024-03-01T10:00:00+24:00',
      '2024-03-01T10:00:00+05:60',
      '2023-02-29T10:00:00Z',
      '2024-02-30T00:00',
    ])
      expect(toDay(s), s).toBeNaN();
  });

  it('rejects malformed date-times', () => {
    for (const s of [
      '2024-03-01 10:00',
      '2024-03-01T',
      '2024-03-01T10',
      '2024-03-01T1:00',
      '2024-03-01T10:0',
      '2024-03-01T10:00:0',
      '2024-03-01T10:00:00.',
      '2024-03-01T10:00.5',
      '2024-03-01T10:00:00+0200',
      '2024-03-01T10:00:00+02',
      '2024-03-01T10:00:00+2:00',
      '2024-03-01T10:00:00ZZ',
      '2024-03-01T10:00:00Z ',
      '2024-03-01T10:00:00 Z',
      '2024-03-01T10:00:00UTC',
      '2024-03-01T10:00:00+02:00Z',
      '2024-03-01T10:00:00,5',
      '2024-03-01X10:00',
      '2024-03-01T10:00:00.5.5',
      '2024-03-01T10:00:00+02:000',
    ])
      expect(toDay(s), s).toBeNaN();
  });

  it('is NaN for anything that is not a string', () => {
    for (const v of [0, 19783, 20240301, 1.5, true, null, undefined, {}, [], ['2024-03-01'], { date: '2024-03-01' }]) {
      expect(toDay(v)).toBeNaN();
    }
  });
});

describe('dayToText', () => {
  it('writes YYYY-MM-DD', () => {
    expect(dayToText(0)).toBe('1970-01-01');
    expect(dayToText(19783)).toBe('2024-03-01');
    expect(dayToText(-1)).toBe('1969-12-31');
    expect(dayToText(dayFromDateText('2024-02-29'))).toBe('2024-02-29');
    expect(dayToText(-719528)).toBe('0000-01-01');
  });
  it('round-trips with dayFromDateText', () => {
    for (const s of ['0001-01-01', '1600-02-29', '1999-12-31', '2000-02-29', '2038-01-19', '9999-12-31']) {
      expect(dayToText(dayFromDateText(s))).toBe(s);
    }
  });
  it('shows a fractional day as the day it falls in, and flags non-finite input', () => {
    expect(dayToText(19783.5)).toBe('2024-03-01');
    expect(dayToText(19782.5)).toBe('2024-02-29');
    expect(dayToText(NaN)).toBe('invalid date');
  });
  it('signs years outside 0000-9999', () => {
    expect(dayToText(-719529)).toBe('-0001-12-31');
    expect(dayToText(2932897)).toBe('+10000-01-01');
  });
});

describe('dayOfInstant', () => {
  it('is the UTC calendar day of an epoch-ms instant', () => {
    expect(dayOfInstant(0)).toBe(0);
    expect(dayOfInstant(86_399_999)).toBe(0);
    expect(dayOfInstant(86_400_000)).toBe(1);
    expect(dayOfInstant(-1)).toBe(-1);
    expect(dayOfInstant(Date.UTC(2025, 10, 22, 23, 59, 59, 999))).toBe(dayFromDateText('2025-11-22'));
    expect(dayOfInstant(Date.UTC(2025, 10, 23, 0, 0, 0, 0))).toBe(dayFromDateText('2025-11-23'));
  });
});

describe('toInstant', () => {
  const day = (t: string) => dayFromDateText(t);
  it('is the instant of a date-time in days, the offset applied; NaN for a date alone or anything else', () => {
    expect(toInstant('2025-06-15T12:00:00Z')).toBe(day('2025-06-15') + 0.5);
    expect(toInstant('2025-06-15T18:00:00+06:00')).toBe(day('2025-06-15') + 0.5);
    expect(toInstant('2025-06-15T23:30:00-02:00')).toBe(day('2025-06-16') + 1.5 / 24);
    expect(toInstant('2025-06-15T06:00')).toBe(day('2025-06-15') + 0.25);
    expect(toInstant('2025-06-15T00:00:00.5Z')).toBe(day('2025-06-15') + 0.5 / 86400);
    expect(toInstant('2025-06-15')).toBeNaN();
    expect(toInstant('2025-06-15T25:00:00Z')).toBeNaN();
    expect(toInstant(20250615)).toBeNaN();
  });
});
