/** §6.5 periods: units and shifting a day by a period [D-period-units]. */
import { addMonthsToDay } from './dates.js';

export type PeriodUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year' | 'decade' | 'century';

const UNIT_WORDS: ReadonlyMap<string, PeriodUnit> = new Map<string, PeriodUnit>([
  ['second', 'second'],
  ['seconds', 'second'],
  ['minute', 'minute'],
  ['minutes', 'minute'],
  ['hour', 'hour'],
  ['hours', 'hour'],
  ['day', 'day'],
  ['days', 'day'],
  ['week', 'week'],
  ['weeks', 'week'],
  ['month', 'month'],
  ['months', 'month'],
  ['year', 'year'],
  ['years', 'year'],
  ['decade', 'decade'],
  ['decades', 'decade'],
  ['century', 'century'],
  ['centuries', 'century'],
]);

/** Every unit word, singular and plural (§6.5). */
export function unitWords(): string[] {
  return [...UNIT_WORDS.keys()];
}

const ASCII_WORD = /^[A-Za-z]+$/;

/**
 * 'days' → 'day', 'Centuries' → 'century', 'WEEK' → 'week'; null when not a unit word.
 * Case-insensitive over ASCII letters only (so e.g. the Kelvin sign U+212A, which lower-cases
 * to `k`, does not make `wee\u212A` a unit).
 */
export function unitFromWord(word: string): PeriodUnit | null {
  if (word.length > 9 || !ASCII_WORD.test(word)) return null;
  return UNIT_WORDS.get(word.toLowerCase()) ?? null;
}

/** month, year, decade, century: units that use calendar arithmetic. */
export function isCalendarUnit(u: PeriodUnit): boolean {
  return u === 'month' || u === 'year' || u === 'decade' || u === 'century';
}

/**
 * `day` shifted by `count` units (direction -1 = into the past).
 *
 * Fixed units: day ± count × length, where second/minute/hour are 1/86400, 1/1440, 1/24 day
 * (computed as count / 86400 etc., so 12 hours is exactly 0.5), week 7 days.
 * Calendar units (§6.5): the same day-of-month `count` months earlier/later (year = 12,
 * decade = 120, century = 1200 months), clamped to the month's last day
 * (31 March − 1 month = 28/29 February). `day` must be an integer day number and `count` an
 * integer for calendar units (the checker rejects `1.5 years`); otherwise the result is NaN.
 */
export function shiftDay(day: number, count: number, unit: PeriodUnit, direction: -1 | 1): number {
  switch (unit) {
    case 'second':
      return day + (direction * count) / 86400;
    case 'minute':
      return day + (direction * count) / 1440;
    case 'hour':
      return day + (direction * count) / 24;
    case 'day':
      return day + direction * count;
    case 'week':
      return day + direction * count * 7;
    default: {
      if (!Number.isInteger(count) || !Number.isInteger(day)) return NaN;
      const perUnit = unit === 'month' ? 1 : unit === 'year' ? 12 : unit === 'decade' ? 120 : 1200;
      return addMonthsToDay(day, direction * count * perUnit);
    }
  }
}

/**
 * The length in days of a period compared as instants with the clock (§6.5): one shorter than a
 * day (in seconds, minutes or hours) or not a whole number of days (`12 hours`, `0.5 days`,
 * `36 hours`); null for the others, which compare days with today (`24 hours` is one day, `0 days`
 * today only).
 */
export function instantPeriodDays(count: number, unit: PeriodUnit): number | null {
  if (isCalendarUnit(unit)) return null;
  const days =
    unit === 'second'
      ? count / 86400
      : unit === 'minute'
        ? count / 1440
        : unit === 'hour'
          ? count / 24
          : unit === 'week'
            ? count * 7
            : count;
  const shorterThanADay = days < 1 && (unit === 'second' || unit === 'minute' || unit === 'hour');
  return shorterThanADay || !Number.isInteger(days) ? days : null;
}
