/**
 * §7.2 "numeric" values.
 *
 * A value is numeric when it is a JSON number (or a number literal) or a *numeric string*:
 * a string matching `^-?[0-9]+(\.[0-9]+)?$` (ASCII digits only; no spaces, no exponent,
 * no leading `+` or `.`).
 */

/** True when `s` matches `^-?[0-9]+(\.[0-9]+)?$`. Char-code scan: no allocation, no regex. */
export function isNumericString(s: string): boolean {
  const n = s.length;
  let i = 0;
  if (n > 0 && s.charCodeAt(0) === 45 /* - */) i = 1;
  const intStart = i;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) break;
    i++;
  }
  if (i === intStart) return false; // no integer digits
  if (i === n) return true;
  if (s.charCodeAt(i) !== 46 /* . */) return false;
  i++;
  const fracStart = i;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
    i++;
  }
  return i > fracStart; // at least one fraction digit
}

/** §7.2 numeric: a JSON number as is; a string matching ^-?[0-9]+(\.[0-9]+)?$ converted; anything else NaN. */
export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && isNumericString(v)) return +v;
  return NaN;
}
