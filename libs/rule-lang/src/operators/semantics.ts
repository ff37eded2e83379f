/**
 * Operator semantics (LANGUAGE.md §7.3): each operator of the catalogue (catalogue.ts) as the test
 * a comparison runs. Each returns the POSITIVE result; negation is applied by the caller. A literal
 * right operand is folded in when the test is made (at compile time).
 */

import type { Literal, Operand, PeriodUnit } from '../ast/types.js';
import type { CanonicalOperator } from './catalogue.js';
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

type Order = 'gt' | 'gte' | 'lt' | 'lte';
const ORDER: Partial<Record<CanonicalOperator, Order>> = {
  'is greater than': 'gt',
  'is greater than or equal to': 'gte',
  'is less than': 'lt',
  'is no more than': 'lte',
};

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

/** The positive test for an operator with its (already checked) right operand. */
export function compileTest(name: CanonicalOperator, right: Operand | null): Test {
  const lit = right?.kind === 'literal' ? literalValue(right.literal) : right?.kind === 'list' ? right.items.map(literalValue) : undefined;
  const isPath = right?.kind === 'path';
  const order = ORDER[name];
  if (order) return isPath ? ordering(order) : orderingAgainstLiteral(order, lit);
  switch (name) {
    case 'is equal to':
      return isPath || right?.kind === 'list' ? (l, r) => looseEquals(l, isPath ? r : lit) : equalsLiteral(lit);
    case 'is exactly':
      return isPath ? (l, r) => strictEquals(l, r) : (l) => strictEquals(l, lit);
    case 'is in':
      if (isPath) return (l, r) => isIn(l, r);
      return Array.isArray(lit) ? compileIsIn(lit) : () => false;
    case 'contains':
      return isPath ? (l, r) => containsValue(l, r) : containsLiteral(lit);
    case 'is a valid email':
      return stringCheck(formatChecker('email'));
    case 'is a valid uuid':
      return stringCheck(formatChecker('uuid'));
    case 'is a valid date':
      return stringCheck(formatChecker('date'));
    case 'format check':
      return stringCheck(formatChecker(String(lit)));
    case 'pattern': {
      const compiled = compilePattern(String(lit));
      return compiled.ok ? stringCheck(compiled.test) : () => false;
    }
    case 'is empty':
      return (l) => isEmptyValue(l);
    case 'is later than':
      if (isPath) return (l, r) => toDay(l) > toDay(r);
      return laterEarlier(lit, (a, b) => a > b);
    case 'is earlier than':
      if (isPath) return (l, r) => toDay(l) < toDay(r);
      return laterEarlier(lit, (a, b) => a < b);
    case 'period':
    case 'is older than':
    case 'is younger than': {
      if (right?.kind !== 'period') return () => false;
      const length = instantPeriodDays(right.count, right.unit);
      if (length !== null) return instantPeriodTest(name, length);
      const bounds = periodBounds(right.count, right.unit);
      if (name === 'period') {
        return (l, _r, today) => {
          const d = toDay(l);
          const b = bounds(today);
          return d >= b.past && d <= b.future;
        };
      }
      if (name === 'is older than') return (l, _r, today) => toDay(l) < bounds(today).past;
      return (l, _r, today) => toDay(l) > bounds(today).past;
    }
    default:
      throw new Error(`INVARIANT: no test for operator \`${name}\``);
  }
}

/**
 * A period shorter than a day, or not a whole number of days, `length` days long (§6.5): instants
 * with now. A date-time is its instant; a date-only value stands for its whole UTC day [d, d + 1):
 * within when some instant of the day lies in now − P … now + P, older when the whole day ends
 * before now − P, younger when some instant of the day is after now − P.
 */
function instantPeriodTest(name: 'period' | 'is older than' | 'is younger than', length: number): Test {
  const test =
    name === 'period'
      ? (start: number, end: number, now: number) => end >= now - length && start <= now + length
      : name === 'is older than'
        ? (_start: number, end: number, now: number) => end < now - length
        : (_start: number, end: number, now: number) => end > now - length;
  return (l, _r, now) => {
    const t = toInstant(l);
    if (t === t) return test(t, t, now);
    const d = toDay(l);
    // The day's last instant is just before d + 1: `end >= x` is `d + 1 > x`, `end < x` is `d + 1 <= x`.
    if (d !== d) return false;
    return name === 'period'
      ? d + 1 > now - length && d <= now + length
      : name === 'is older than'
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
