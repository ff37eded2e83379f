import { describe, expect, it } from 'vitest';
import {
  dayFromDateText as d,
  dayToText,
  instantPeriodDays,
  isCalendarUnit,
  shiftDay,
  unitFromWord,
  type PeriodUnit,
} from '../../src/values/index.js';
import { calendarUnits, periodUnits } from '@arbiter/test-kit/language-doc';

describe('unitFromWord (§6.5, case-insensitive §2.3)', () => {
  const units = periodUnits();
  it.each([
    ...units.flatMap(({ unit, plural }) => [
      [unit, unit],
      [plural, unit],
    ]),
    ['Centuries', 'century'],
    ['WEEK', 'week'],
    ['Days', 'day'],
    ['yEaRs', 'year'],
  ])('%s → %s', (w, u) => {
    expect(unitFromWord(w)).toBe(u);
  });

  it.each(['', 'centurys', 'dayss', 'yr', 'yrs', 'sec', 'mins', 'fortnight', 'millennium', ' day', 'day ', 'wee\u212A', 'da-y', '30days'])(
    '%j is not a unit',
    (w) => {
      expect(unitFromWord(w)).toBeNull();
    },
  );
});

describe('isCalendarUnit', () => {
  it('is true for the calendar units of §6.5 only', () => {
    const all = periodUnits().map((u) => u.unit as PeriodUnit);
    expect(all.filter(isCalendarUnit)).toEqual(calendarUnits());
    expect(calendarUnits().length).toBeGreaterThan(0);
    expect(calendarUnits().length).toBeLessThan(all.length);
  });
});

describe('shiftDay: fixed units', () => {
  const today = d('2025-06-15');
  it('days and weeks', () => {
    expect(shiftDay(today, 30, 'day', -1)).toBe(d('2025-05-16'));
    expect(shiftDay(today, 30, 'day', 1)).toBe(d('2025-07-15'));
    expect(shiftDay(today, 2, 'week', -1)).toBe(d('2025-06-01'));
    expect(shiftDay(today, 0, 'day', -1)).toBe(today);
    expect(shiftDay(today, 0.5, 'day', 1)).toBe(today + 0.5);
  });
  it('hours, minutes and seconds are exact fractions of a day', () => {
    expect(shiftDay(today, 12, 'hour', -1)).toBe(today - 0.5);
    expect(shiftDay(today, 36, 'hour', 1)).toBe(today + 1.5);
    expect(shiftDay(today, 24, 'hour', -1)).toBe(today - 1);
    expect(shiftDay(today, 720, 'minute', 1)).toBe(today + 0.5);
    expect(shiftDay(today, 1440, 'minute', 1)).toBe(today + 1);
    expect(shiftDay(today, 43200, 'second', -1)).toBe(today - 0.5);
    expect(shiftDay(today, 86400, 'second', 1)).toBe(today + 1);
  });
});

describe('shiftDay: calendar units (§6.5 [D-period-units])', () => {
  const shift = (from: string, n: number, u: PeriodUnit, dir: -1 | 1): string => dayToText(shiftDay(d(from), n, u, dir));

  it('keeps the day of the month', () => {
    expect(shift('2025-06-15', 1, 'month', -1)).toBe('2025-05-15');
    expect(shift('2025-06-15', 6, 'month', 1)).toBe('2025-12-15');
    expect(shift('2025-06-15', 7, 'month', 1)).toBe('2026-01-15');
    expect(shift('2025-01-15', 1, 'month', -1)).toBe('2024-12-15');
    expect(shift('2025-01-15', 25, 'month', -1)).toBe('2022-12-15');
    expect(shift('2025-06-15', 0, 'month', -1)).toBe('2025-06-15');
  });

  it('clamps to the last day of the month', () => {
    expect(shift('2025-03-31', 1, 'month', -1)).toBe('2025-02-28');
    expect(shift('2024-03-31', 1, 'month', -1)).toBe('2024-02-29');
    expect(shift('2025-01-31', 1, 'month', 1)).toBe('2025-02-28');
    expect(shift('2025-05-31', 1, 'month', -1)).toBe('2025-04-30');
    expect(shift('2025-08-31', 3, 'month', 1)).toBe('2025-11-30');
    expect(shift('2025-03-30', 1, 'month', -1)).toBe('2025-02-28');
  });

  it('years are 12 months (leap days clamp)', () => {
    expect(shift('2024-02-29', 1, 'year', 1)).toBe('2025-02-28');
    expect(shift('2024-02-29', 1, 'year', -1)).toBe('2023-02-28');
    expect(shift('2024-02-29', 4, 'year', -1)).toBe('2020-02-29');
    expect(shift('2025-11-22', 18, 'year', -1)).toBe('2007-11-22');
    expect(shift('2025-03-01', 1, 'year', -1)).toBe('2024-03-01');
  });

  it('decades are 120 months, centuries 1200', () => {
    expect(shift('2025-06-15', 1, 'decade', -1)).toBe('2015-06-15');
    expect(shift('2025-06-15', 2, 'decade', 1)).toBe('2045-06-15');
    expect(shift('2025-06-15', 1, 'century', -1)).toBe('1925-06-15');
    expect(shift('2000-02-29', 1, 'century', -1)).toBe('1900-02-28');
    expect(shift('2000-02-29', 4, 'century', -1)).toBe('1600-02-29');
  });

  it('is NaN for a fractional calendar count (a parse error upstream)', () => {
    expect(shiftDay(d('2025-06-15'), 1.5, 'year', -1)).toBeNaN();
  });

  it('§7.3.10: with today 2025-11-22, 2007-11-22 is exactly 18 years (neither older nor younger)', () => {
    const bound = shiftDay(d('2025-11-22'), 18, 'year', -1);
    const older = (birth: string): boolean => d(birth) < bound;
    const younger = (birth: string): boolean => d(birth) > bound;
    expect([older('2007-11-22'), younger('2007-11-22')]).toEqual([false, false]);
    expect([older('2007-11-21'), younger('2007-11-21')]).toEqual([true, false]);
    expect([older('2007-11-23'), younger('2007-11-23')]).toEqual([false, true]);
    // becomes older than 18 years exactly on the day after the 18th birthday
    expect(d('2007-11-22') < shiftDay(d('2025-11-23'), 18, 'year', -1)).toBe(true);
  });

  it('§7.3.9: with today 2025-06-15, within 30 days reaches past and future, inclusive', () => {
    const today = d('2025-06-15');
    const lo = shiftDay(today, 30, 'day', -1);
    const hi = shiftDay(today, 30, 'day', 1);
    const within = (s: string): boolean => lo <= d(s) && d(s) <= hi;
    expect(within('2025-05-20')).toBe(true);
    expect(within('2025-07-10')).toBe(true);
    expect(within('2025-04-01')).toBe(false);
    expect(within('2025-05-16')).toBe(true);
    expect(within('2025-07-15')).toBe(true);
    expect(within('2025-05-15')).toBe(false);
    expect(within('2025-07-16')).toBe(false);
  });

  it('shifts a day by 12 hours by half a day (today ± 0.5)', () => {
    const today = d('2025-06-15');
    const lo = shiftDay(today, 12, 'hour', -1);
    const hi = shiftDay(today, 12, 'hour', 1);
    expect(lo <= today && today <= hi).toBe(true);
    expect(lo <= today - 1).toBe(false);
    expect(today + 1 <= hi).toBe(false);
  });
});

describe('instantPeriodDays', () => {
  it('gives the length in days of periods that compare instants: shorter than a day, or not whole days', () => {
    expect(instantPeriodDays(12, 'hour')).toBe(0.5);
    expect(instantPeriodDays(30, 'minute')).toBe(30 / 1440);
    expect(instantPeriodDays(0, 'hour')).toBe(0);
    expect(instantPeriodDays(0.5, 'day')).toBe(0.5);
    expect(instantPeriodDays(36, 'hour')).toBe(1.5);
    expect(instantPeriodDays(1.5, 'week')).toBe(10.5);
  });

  it('is null for periods that compare days: whole days, weeks and calendar units', () => {
    for (const [count, unit] of [
      [24, 'hour'],
      [48, 'hour'],
      [1440, 'minute'],
      [86400, 'second'],
      [0, 'day'],
      [3, 'day'],
      [2, 'week'],
      [1, 'month'],
      [18, 'year'],
    ] as const) {
      expect(instantPeriodDays(count, unit), `${count} ${unit}`).toBeNull();
    }
  });
});
