/**
 * §6.4 / §7.2 dates. All date comparisons work on whole UTC calendar days [D-date-granularity],
 * represented as an integer *day number*: days since 1970-01-01 (negative before it).
 *
 * Calendar arithmetic is done here with Howard Hinnant's days-from-civil algorithms (proleptic
 * Gregorian calendar), not with `Date`: no string parsing, no allocation, and no `Date.UTC`
 * quirk that maps years 0–99 to 1900–1999.
 */

const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

export function isLeapYear(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

/** Number of days in month `m` (1–12) of year `y`. */
export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : MONTH_DAYS[m];
}

/** Day number of the (valid) calendar date y-m-d. No validation. */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400; // [0, 399]
  const mp = m > 2 ? m - 3 : m + 9; // March = 0
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1; // [0, 365]
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy; // [0, 146096]
  return era * 146097 + doe - 719468;
}

// Scratch output of civilFromDays (module-level so that the hot path allocates nothing).
let civY = 1970;
let civM = 1;
let civD = 1;

/** Sets civY/civM/civD to the calendar date of integer day number `z`. */
function civilFromDays(z: number): void {
  const zz = z + 719468;
  const era = Math.floor(zz / 146097);
  const doe = zz - era * 146097; // [0, 146096]
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100)); // [0, 365]
  const mp = Math.floor((5 * doy + 2) / 153); // [0, 11]
  civD = doy - Math.floor((153 * mp + 2) / 5) + 1;
  civM = mp < 10 ? mp + 3 : mp - 9;
  civY = yoe + era * 400 + (civM <= 2 ? 1 : 0);
}

/** Two ASCII digits at s[i], s[i+1] as a number, or -1. (charCodeAt past the end is NaN → -1.) */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Day number of the `YYYY-MM-DD` at the start of `s` (only the first 10 chars are looked at); NaN if not a real date. */
function parseDatePrefix(s: string): number {
  const hi = two(s, 0);
  const lo = two(s, 2);
  if (hi < 0 || lo < 0 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return NaN;
  const m = two(s, 5);
  const d = two(s, 8);
  const y = hi * 100 + lo;
  if (m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return NaN;
  return daysFromCivil(y, m, d);
}

/** Day number of a literal 'YYYY-MM-DD' (NaN if not a real date, e.g. 2023-02-29). */
export function dayFromDateText(text: string): number {
  return text.length === 10 ? parseDatePrefix(text) : NaN;
}

/**
 * §7.2 date-like → integer day number (days since 1970-01-01, UTC); NaN if not date-like.
 *
 * Accepted: `YYYY-MM-DD` (a real calendar date) and `YYYY-MM-DDThh:mm[:ss[.fraction]][Z|±hh:mm]`
 * (`T` and `Z` in either case; hh 00–23, mm 00–59, ss 00–60 (leap second), fraction one or more
 * digits; offset hours 00–23 and minutes 00–59). With an offset, the instant is converted to UTC
 * first and then truncated to its day; without one the written date is taken.
 * Anything else (numbers, other strings, objects, …) → NaN. Char-code parsing: no allocation.
 */
export function toDay(v: unknown): number {
  if (typeof v !== 'string') return NaN;
  const n = v.length;
  if (n < 10) return NaN;
  const day = parseDatePrefix(v);
  if (n === 10 || day !== day) return day;
  // Date-time: `T` hh `:` mm at 10..15.
  const t = v.charCodeAt(10);
  if (t !== 84 /* T */ && t !== 116 /* t */) return NaN;
  const hh = two(v, 11);
  const mm = two(v, 14);
  if (hh < 0 || hh > 23 || v.charCodeAt(13) !== 58 || mm < 0 || mm > 59) return NaN;
  let i = 16;
  if (i < n && v.charCodeAt(i) === 58 /* : */) {
    const ss = two(v, i + 1);
    if (ss < 0 || ss > 60) return NaN;
    i += 3;
    if (i < n && v.charCodeAt(i) === 46 /* . */) {
      i++;
      const start = i;
      while (i < n) {
        const c = v.charCodeAt(i);
        if (c < 48 || c > 57) break;
        i++;
      }
      if (i === start) return NaN;
    }
  }
  if (i === n) return day; // no offset: the written date
  const z = v.charCodeAt(i);
  if (z === 90 /* Z */ || z === 122 /* z */) return i + 1 === n ? day : NaN;
  if (z !== 43 /* + */ && z !== 45 /* - */) return NaN;
  if (i + 6 !== n) return NaN;
  const oh = two(v, i + 1);
  const om = two(v, i + 4);
  if (oh < 0 || oh > 23 || v.charCodeAt(i + 3) !== 58 || om < 0 || om > 59) return NaN;
  const offset = oh * 60 + om;
  // UTC minute of the (local) day; seconds never move the day (a leap second stays in its minute).
  const utcMinute = hh * 60 + mm + (z === 43 ? -offset : offset);
  return day + Math.floor(utcMinute / 1440);
}

/**
 * 'YYYY-MM-DD' text of a day number (for traces and messages). A fractional day (a bound shifted by
 * a fixed period such as 12 hours) is shown as the day it falls in. Years outside 0000–9999 are
 * written with a sign (`-0001`, `+10000`). Non-finite input gives 'invalid date'.
 */
export function dayToText(day: number): string {
  if (!Number.isFinite(day)) return 'invalid date';
  civilFromDays(Math.floor(day));
  const y = civY;
  const ys = y >= 0 && y <= 9999 ? String(y).padStart(4, '0') : (y < 0 ? '-' : '+') + String(Math.abs(y)).padStart(4, '0');
  return ys + '-' + (civM < 10 ? '0' : '') + civM + '-' + (civD < 10 ? '0' : '') + civD;
}

/** Today's day number from epoch milliseconds (UTC calendar day). */
export function dayOfInstant(ms: number): number {
  return Math.floor(ms / 86_400_000);
}

/**
 * The clock as the comparisons receive it: the instant `ms` in days since 1970-01-01 UTC, with
 * the time of day as the fraction. Its floor is today's day number ({@link dayOfInstant}).
 */
export function nowInDays(ms: number): number {
  return ms / 86_400_000;
}

/**
 * A date-time value (§7.2 date-like, with a time) as an instant in days since 1970-01-01 UTC, the
 * time of day as the fraction (no offset: taken as UTC); NaN for a date-only value or anything
 * not date-like. Periods shorter than a day compare these with the clock (§6.5).
 */
export function toInstant(v: unknown): number {
  if (typeof v !== 'string' || v.length <= 10) return NaN;
  // toDay validates the whole text (and is NaN for anything not date-like).
  const valid = toDay(v);
  if (valid !== valid) return NaN;
  const day = parseDatePrefix(v);
  const n = v.length;
  let seconds = two(v, 11) * 3600 + two(v, 14) * 60;
  let i = 16;
  if (i < n && v.charCodeAt(i) === 58 /* : */) {
    seconds += two(v, i + 1);
    i += 3;
    if (i < n && v.charCodeAt(i) === 46 /* . */) {
      const start = i;
      i++;
      while (i < n && v.charCodeAt(i) >= 48 && v.charCodeAt(i) <= 57) i++;
      seconds += Number(v.slice(start, i));
    }
  }
  if (i < n) {
    const z = v.charCodeAt(i);
    if (z === 43 /* + */ || z === 45 /* - */) {
      const offset = two(v, i + 1) * 3600 + two(v, i + 4) * 60;
      seconds += z === 43 ? -offset : offset;
    }
  }
  return day + seconds / 86_400;
}

/**
 * The day `months` calendar months after integer day `day` (negative = earlier): same
 * day-of-month, clamped to the target month's last day. Used by periods.ts.
 */
export function addMonthsToDay(day: number, months: number): number {
  civilFromDays(day);
  const total = civY * 12 + (civM - 1) + months;
  const y = Math.floor(total / 12);
  const m = total - y * 12 + 1;
  const dim = daysInMonth(y, m);
  return daysFromCivil(y, m, civD > dim ? dim : civD);
}
