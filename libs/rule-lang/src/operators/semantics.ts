/**
 * Operator semantics (LANGUAGE.md §7.3): the makers of the tests a comparison runs; each entry of
 * the catalogue (catalogue.ts) names its maker. A test returns the POSITIVE result; negation is
 * applied by the caller. A literal right operand is folded in when the test is made (at compile
 * time).
 */

import type { Literal, Operand, PeriodUnit } from '../ast/operands.js';
import { compileContainsWord, containsValue } from '../values/contains.js';
import { dayFromDateText, toDay, toInstant } from '../values/dates.js';
import { compileIsIn, compileLooseEquals, isEmptyValue, isIn, looseEquals, strictEquals } from '../values/equality.js';
import { formatChecker } from '../values/formats.js';
import { toNumber } from '../values/numbers.js';
import { compilePattern } from '../values/patterns.js';
import { instantPeriodDays, shiftDay } from '../values/periods.js';

/**
 * Positive test of one comparison: left value, right value (path operands), and the clock: now in
 * days since 1970-01-01 UTC, the time of day as the fraction (its floor is today's day number).
 */
export type Test = (left: unknown, right: unknown, today: number) => boolean;

/** Runtime value of a literal: dates travel as their `YYYY-MM-DD` text (§7.3.2 rule 5, §7.3.3). */
export function literalValue(lit: Literal): unknown {
  return lit.kind === 'date' ? lit.text : lit.value;
}

/** The four orderings of §7.3.1. */
export type Order = 'gt' | 'gte' | 'lt' | 'lte';

function compare(order: Order, a: number, b: number): boolean {
  switch (order) {
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
  }
}

/** §7.3.1 against a literal: the literal decides once whether numbers or days are compared. */
function orderingAgainstLiteral(order: Order, lit: unknown): Test {
  const n = toNumber(lit);
  if (!Number.isNaN(n)) {
    switch (order) {
      case 'gt':
        return (l) => toNumber(l) > n;
      case 'gte':
        return (l) => toNumber(l) >= n;
      case 'lt':
        return (l) => toNumber(l) < n;
      case 'lte':
        return (l) => toNumber(l) <= n;
    }
  }
  const d = toDay(lit);
  if (!Number.isNaN(d)) return (l) => compare(order, toDay(l), d);
  return () => false;
}

/** §7.3.1 between two data values. NaN (not numeric / not date-like) makes every comparison false. */
function ordering(order: Order): Test {
  return (l, r) => {
    const a = toNumber(l);
    const b = toNumber(r);
    if (a === a && b === b) return compare(order, a, b);
    return compare(order, toDay(l), toDay(r));
  };
}

/** §7.3.2 against a literal, with the common literal kinds specialised. */
function equalsLiteral(lit: unknown): Test {
  if (typeof lit === 'number') return (l) => toNumber(l) === lit;
  if (typeof lit === 'string') {
    const n = toNumber(lit);
    if (!Number.isNaN(n)) return (l) => typeof l !== 'boolean' && toNumber(l) === n;
    const d = toDay(lit);
    if (!Number.isNaN(d)) return (l) => toDay(l) === d;
    const lower = lit.toLowerCase();
    if (lower !== 'true' && lower !== 'false') {
      return (l) => typeof l === 'string' && (l === lit || l.toLowerCase() === lower);
    }
  }
  return compileLooseEquals(lit);
}

function containsLiteral(lit: unknown): Test {
  if (typeof lit !== 'string') return (l) => containsValue(l, lit);
  const word = compileContainsWord(lit);
  return (l) => (typeof l === 'string' ? word(l) : Array.isArray(l) ? containsValue(l, lit) : false);
}

function stringCheck(check: ((s: string) => boolean) | null): Test {
  if (!check) return () => false;
  return (l) => typeof l === 'string' && check(l);
}

/** Builds the bounds of a period relative to today (the clock's day), cached per day. */
function periodBounds(count: number, unit: PeriodUnit): (now: number) => { past: number; future: number } {
  let cachedDay = NaN;
  let cached = { past: NaN, future: NaN };
  return (now) => {
    const today = Math.floor(now);
    if (today !== cachedDay) {
      cached = { past: shiftDay(today, count, unit, -1), future: shiftDay(today, count, unit, 1) };
      cachedDay = today;
    }
    return cached;
  };
}

/** Makes the positive test of an operator from its (already checked) right operand. */
export type TestMaker = (right: Operand | null) => Test;

/** The folded value of a literal or list operand; undefined for a path, a period or none. */
function literalOf(right: Operand | null): unknown {
  return right?.kind === 'literal' ? literalValue(right.literal) : right?.kind === 'list' ? right.items.map(literalValue) : undefined;
}

/** §7.3.1 is greater than, is greater than or equal to, is less than, is no more than. */
export function orderingTest(order: Order): TestMaker {
  return (right) => (right?.kind === 'path' ? ordering(order) : orderingAgainstLiteral(order, literalOf(right)));
}

/** §7.3.2 is equal to (loose). */
export const equalToTest: TestMaker = (right) => {
  const lit = literalOf(right);
  const isPath = right?.kind === 'path';
  return isPath || right?.kind === 'list' ? (l, r) => looseEquals(l, isPath ? r : lit) : equalsLiteral(lit);
};

/** §7.3.3 is exactly (strict). */
export const exactlyTest: TestMaker = (right) => {
  const lit = literalOf(right);
  return right?.kind === 'path' ? (l, r) => strictEquals(l, r) : (l) => strictEquals(l, lit);
};

/** §7.3.5 is in. */
export const inTest: TestMaker = (right) => {
  if (right?.kind === 'path') return (l, r) => isIn(l, r);
  const lit = literalOf(right);
  return Array.isArray(lit) ? compileIsIn(lit) : () => false;
};

/** §7.3.6 contains. */
export const containsTest: TestMaker = (right) =>
  right?.kind === 'path' ? (l, r) => containsValue(l, r) : containsLiteral(literalOf(right));

/** §7.3.11 the checks named after one format: is a valid email, uuid, date. */
export function validFormatTest(format: string): TestMaker {
  return () => stringCheck(formatChecker(format));
}

/** §7.3.11 has the format "<format_name>". */
export const formatTest: TestMaker = (right) => stringCheck(formatChecker(String(literalOf(right))));

/** §7.3.12 matches pattern "<pattern>". */
export const patternTest: TestMaker = (right) => {
  const compiled = compilePattern(String(literalOf(right)));
  return compiled.ok ? stringCheck(compiled.test) : () => false;
};

/** §7.3.7 is empty. */
export const emptyTest: TestMaker = () => (l) => isEmptyValue(l);

/** §7.3.8 is later than / is earlier than. */
export function laterEarlierTest(direction: 'later' | 'earlier'): TestMaker {
  const cmp = direction === 'later' ? (a: number, b: number) => a > b : (a: number, b: number) => a < b;
  return (right) => (right?.kind === 'path' ? (l, r) => cmp(toDay(l), toDay(r)) : laterEarlier(literalOf(right), cmp));
}

/** How a period operand is compared with today: §7.3.9 is within, §7.3.10 is older than / is younger than. */
export type PeriodRelation = 'within' | 'older' | 'younger';

/** §7.3.9, §7.3.10: the tests against a period around (or before) today. */
export function periodTest(relation: PeriodRelation): TestMaker {
  return (right) => {
    if (right?.kind !== 'period') return () => false;
    const length = instantPeriodDays(right.count, right.unit);
    if (length !== null) return instantPeriodTest(relation, length);
    const bounds = periodBounds(right.count, right.unit);
    if (relation === 'within') {
      return (l, _r, today) => {
        const d = toDay(l);
        const b = bounds(today);
        return d >= b.past && d <= b.future;
      };
    }
    if (relation === 'older') return (l, _r, today) => toDay(l) < bounds(today).past;
    return (l, _r, today) => toDay(l) > bounds(today).past;
  };
}

/**
 * A period shorter than a day, or not a whole number of days, `length` days long (§6.5): instants
 * with now. A date-time is its instant; a date-only value stands for its whole UTC day [d, d + 1):
 * within when some instant of the day lies in now − P … now + P, older when the whole day ends
 * before now − P, younger when some instant of the day is after now − P.
 */
function instantPeriodTest(relation: PeriodRelation, length: number): Test {
  const test =
    relation === 'within'
      ? (start: number, end: number, now: number) => end >= now - length && start <= now + length
      : relation === 'older'
        ? (_start: number, end: number, now: number) => end < now - length
        : (_start: number, end: number, now: number) => end > now - length;
  return (l, _r, now) => {
    const t = toInstant(l);
    if (t === t) return test(t, t, now);
    const d = toDay(l);
    // The day's last instant is just before d + 1: `end >= x` is `d + 1 > x`, `end < x` is `d + 1 <= x`.
    if (d !== d) return false;
    return relation === 'within'
      ? d + 1 > now - length && d <= now + length
      : relation === 'older'
        ? d + 1 <= now - length
        : d + 1 > now - length;
  };
}

function laterEarlier(lit: unknown, cmp: (a: number, b: number) => boolean): Test {
  const d = typeof lit === 'string' ? dayFromDateTextOrDay(lit) : NaN;
  if (Number.isNaN(d)) return () => false;
  return (l) => cmp(toDay(l), d);
}

function dayFromDateTextOrDay(s: string): number {
  const d = dayFromDateText(s);
  return Number.isNaN(d) ? toDay(s) : d;
}
