/** §7.3.6 contains / does not contain [D-contains-boundary]. */
import { looseEquals } from './equality.js';

/**
 * Case fold used for the case-insensitive match: lower-casing, kept index-aligned with the input
 * so that boundaries can be checked on the original text.
 *  - `toLowerCase()` is used as is when it keeps the length (always, except for U+0130 `İ`, whose
 *    lower case is `i` + U+0307). Otherwise each code point is lower-cased on its own and only
 *    the first code point of a longer result is kept (`İ` → `i`).
 *  - Final sigma: `toLowerCase` turns a word-final `Σ` into `ς`; both `ς` and `σ` fold to `σ`
 *    (as Unicode case folding does), so the position of the letter does not matter.
 */
function fold(s: string): string {
  let l = s.toLowerCase();
  if (l.length !== s.length) l = foldByCodePoint(s);
  return l.indexOf('ς') === -1 ? l : l.replace(FINAL_SIGMA, 'σ');
}

const FINAL_SIGMA = /ς/g;

function foldByCodePoint(s: string): string {
  let out = '';
  for (const ch of s) {
    const l = ch.toLowerCase();
    if (l.length === ch.length) out += l;
    else out += String.fromCodePoint(l.codePointAt(0)!);
  }
  return out;
}

// Letter or number (Unicode general categories L and N). Sticky: tested at a given index with no allocation.
const WORD_CHAR_AT = /[\p{L}\p{N}]/uy;

/** True when the code point starting at index `i` of `s` is a Unicode letter or number. */
function isWordCharAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c < 128) return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  WORD_CHAR_AT.lastIndex = i;
  return WORD_CHAR_AT.test(s);
}

/** Start index of the code point that ends just before index `i` (i > 0). */
function prevCodePointStart(s: string, i: number): number {
  const lo = s.charCodeAt(i - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && i >= 2) {
    const hi = s.charCodeAt(i - 2);
    if (hi >= 0xd800 && hi <= 0xdbff) return i - 2;
  }
  return i - 1;
}

function lastCodePointStart(s: string): number {
  return prevCodePointStart(s, s.length);
}

/** Whether index `i` of `s` falls between the two halves of a surrogate pair (a match there would split a character). */
function splitsPair(s: string, i: number): boolean {
  if (i <= 0 || i >= s.length) return false;
  const lo = s.charCodeAt(i);
  if (lo < 0xdc00 || lo > 0xdfff) return false;
  const hi = s.charCodeAt(i - 1);
  return hi >= 0xd800 && hi <= 0xdbff;
}

/**
 * Search for the folded needle in `haystack`, by code points (a match never starts or ends inside
 * a surrogate pair: half of a character matches nothing), requiring a non-letter/digit (or the text's edge)
 * before the match when `needBefore`, and after it when `needAfter`.
 */
function findWord(haystack: string, folded: string, needBefore: boolean, needAfter: boolean): boolean {
  const h = fold(haystack);
  const n = folded.length;
  const end = h.length - n;
  let i = h.indexOf(folded);
  while (i !== -1 && i <= end) {
    const okBefore = !needBefore || i === 0 || !isWordCharAt(haystack, prevCodePointStart(haystack, i));
    const okAfter = !needAfter || i + n === h.length || !isWordCharAt(haystack, i + n);
    if (okBefore && okAfter && !splitsPair(h, i) && !splitsPair(h, i + n)) return true;
    i = h.indexOf(folded, i + 1);
  }
  return false;
}

/**
 * §7.3.6 case-insensitive whole-word match with the letter/digit boundary rule (Unicode letters and
 * numbers: \p{L}\p{N}): if the needle's first character is a letter or digit, the character before
 * the match must not be one (or the match starts the text); likewise for its last character and
 * the character after the match. Empty needle matches.
 */
export function containsWord(haystack: string, needle: string): boolean {
  if (needle.length === 0) return true;
  return findWord(haystack, fold(needle), isWordCharAt(needle, 0), isWordCharAt(needle, lastCodePointStart(needle)));
}

/** Hot-path factory: precomputes the lower-cased needle and its boundary flags once. */
export function compileContainsWord(needle: string): (haystack: string) => boolean {
  if (needle.length === 0) return () => true;
  const folded = fold(needle);
  const needBefore = isWordCharAt(needle, 0);
  const needAfter = isWordCharAt(needle, lastCodePointStart(needle));
  return (haystack) => findWord(haystack, folded, needBefore, needAfter);
}

/** Full §7.3.6: left array → some element loosely equal to right; both strings → containsWord; anything else false. */
export function containsValue(left: unknown, right: unknown): boolean {
  if (Array.isArray(left)) {
    const n = left.length;
    for (let i = 0; i < n; i++) if (looseEquals(left[i], right)) return true;
    return false;
  }
  if (typeof left === 'string' && typeof right === 'string') return containsWord(left, right);
  return false;
}
