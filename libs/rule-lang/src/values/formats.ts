/**
 * §7.3.11 format checks [D-format-set]. Exact, lower-case names; an unknown name is a parse
 * error, so `formatChecker` returns null for it.
 *
 * Where each definition comes from (ajv-formats v3, "full" mode, checked against the §7.3.11 table):
 *
 * | format    | source                               | why                                                         |
 * |-----------|--------------------------------------|-------------------------------------------------------------|
 * | date      | ajv-formats `date`                   | matches: YYYY-MM-DD, real calendar date                     |
 * | time      | here                                 | ajv `time` requires an offset; ajv `iso-time` also allows   |
 * |           |                                      | `+hh`, `+hhmm` and ss=60 only at 23:59 UTC; spec: optional  |
 * |           |                                      | Z/±hh:mm, ss 00–60                                          |
 * | date-time | ajv `date` + this file's time check  | ajv accepts a space for `T` and the offset forms above      |
 * | email     | ajv-formats `email` + label length   | ajv does not limit domain labels to 63 characters           |
 * | hostname  | ajv-formats `hostname`, no final `.` | ajv accepts a trailing dot                                  |
 * | ipv4      | ajv-formats `ipv4`                   | matches: 0–255, no leading zeros                            |
 * | ipv6      | ajv-formats `ipv6`                   | matches: RFC 4291 text forms, embedded IPv4, no zone/[ ]    |
 * | uri       | here                                 | ajv's is full RFC 3986; the spec's is the simple definition |
 * | uuid      | ajv-formats `uuid`, length 36        | ajv accepts a `urn:uuid:` prefix                            |
 *
 * Ranges decided here: in offsets, hh 00–23 and mm 00–59 (as RFC 3339). Letters in email and
 * hostname are ASCII letters (internationalised forms are other JSON Schema formats).
 */
import { fullFormats } from 'ajv-formats/dist/formats.js';

export const FORMAT_NAMES: readonly string[] = Object.freeze([
  'date',
  'time',
  'date-time',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uuid',
]);

type StringCheck = (s: string) => boolean;

/** The string validator of an ajv-formats full-mode format (a RegExp, a function or a {validate} definition). */
function fromAjv(name: 'date' | 'email' | 'hostname' | 'ipv4' | 'ipv6' | 'uuid'): StringCheck {
  const f: unknown = fullFormats[name];
  const v: unknown = typeof f === 'object' && f !== null && 'validate' in f ? f.validate : f;
  if (v instanceof RegExp) {
    if (v.global || v.sticky) throw new Error(`ajv-formats "${name}": unexpected stateful RegExp`);
    return (s) => v.test(s);
  }
  if (typeof v === 'function') return v as StringCheck;
  throw new Error(`ajv-formats "${name}": no string validator found`);
}

const ajvDate = fromAjv('date');
const ajvEmail = fromAjv('email');
const ajvHostname = fromAjv('hostname');
const ajvIpv4 = fromAjv('ipv4');
const ajvIpv6 = fromAjv('ipv6');
const ajvUuid = fromAjv('uuid');

/** Two ASCII digits at s[i], s[i+1] as a number, or -1. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * `hh:mm:ss[.fraction][Z|z|±hh:mm]` starting at index `i` and running to the end of `s`;
 * hh 00–23, mm 00–59, ss 00–60; offset hh 00–23, mm 00–59; the offset is required when `offsetRequired`.
 */
function timeAt(s: string, i: number, offsetRequired: boolean): boolean {
  const n = s.length;
  const hh = two(s, i);
  const mm = two(s, i + 3);
  const ss = two(s, i + 6);
  if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) return false;
  if (s.charCodeAt(i + 2) !== 58 || s.charCodeAt(i + 5) !== 58) return false;
  let j = i + 8;
  if (j < n && s.charCodeAt(j) === 46 /* . */) {
    const start = ++j;
    while (j < n) {
      const c = s.charCodeAt(j);
      if (c < 48 || c > 57) break;
      j++;
    }
    if (j === start) return false;
  }
  if (j === n) return !offsetRequired;
  const z = s.charCodeAt(j);
  if (z === 90 /* Z */ || z === 122 /* z */) return j + 1 === n;
  if (z !== 43 /* + */ && z !== 45 /* - */) return false;
  const oh = two(s, j + 1);
  const om = two(s, j + 4);
  return j + 6 === n && s.charCodeAt(j + 3) === 58 && oh >= 0 && oh <= 23 && om >= 0 && om <= 59;
}

function isTime(s: string): boolean {
  return timeAt(s, 0, false);
}

function isDateTime(s: string): boolean {
  const t = s.charCodeAt(10);
  return (t === 84 /* T */ || t === 116) /* t */ && ajvDate(s.slice(0, 10)) && timeAt(s, 11, true);
}

/** ajv's email, plus: every domain label has at most 63 characters. */
function isEmail(s: string): boolean {
  if (!ajvEmail(s)) return false;
  // ajv's local part cannot contain '@', so the domain starts after the only '@'.
  let run = 0;
  for (let i = s.indexOf('@') + 1; i < s.length; i++) {
    if (s.charCodeAt(i) === 46 /* . */) run = 0;
    else if (++run > 63) return false;
  }
  return true;
}

/** ajv's hostname (labels of 1–63 letters/digits/hyphens, no hyphen at either end, ≤ 253 chars), minus the trailing dot. */
function isHostname(s: string): boolean {
  return s.charCodeAt(s.length - 1) !== 46 /* . */ && ajvHostname(s);
}

/**
 * The spec's simple absolute URI: scheme `[A-Za-z][A-Za-z0-9+.-]*`, `:`, then any characters
 * except whitespace (JS `\s`: Unicode white space) and control characters (C0, DEL, C1), every
 * `%` followed by two hex digits. Nothing is required after the `:` (RFC 3986 allows an empty
 * hier-part, e.g. `about:`). Linear: the two alternatives are disjoint.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what a URI may not hold
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:(?:[^\s\x00-\x1f\x7f-\x9f%]|%[0-9A-Fa-f]{2})*$/;

function isUri(s: string): boolean {
  return URI.test(s);
}

/** ajv's uuid (8-4-4-4-12 hex, any case, any version) without its optional `urn:uuid:` prefix. */
function isUuid(s: string): boolean {
  return s.length === 36 && ajvUuid(s);
}

const CHECKERS: ReadonlyMap<string, StringCheck> = new Map<string, StringCheck>([
  ['date', ajvDate],
  ['time', isTime],
  ['date-time', isDateTime],
  ['email', isEmail],
  ['hostname', isHostname],
  ['ipv4', ajvIpv4],
  ['ipv6', ajvIpv6],
  ['uri', isUri],
  ['uuid', isUuid],
]);

const ASCII_UPPER = /[A-Z]/g;

/**
 * Checker for a §7.3.11 format name, or null when the name is unknown. Names ignore letter case
 * like the fixed words (`"EMAIL"` is `"email"`), over ASCII letters only (so the Kelvin sign,
 * which lower-cases to `k`, makes no name).
 */
export function formatChecker(name: string): ((s: string) => boolean) | null {
  return CHECKERS.get(name) ?? CHECKERS.get(name.replace(ASCII_UPPER, (c) => c.toLowerCase())) ?? null;
}
