/** §7.3.2 loose equality, §7.3.3 strict equality, §7.3.5 membership, §7.3.7 emptiness. */
import { toNumber } from './numbers.js';
import { toDay } from './dates.js';

/** Boolean-like (§7.3.2 rule 3): 1 for true / "true", 0 for false / "false" (any case), -1 otherwise. */
export function booleanLike(v: unknown): -1 | 0 | 1 {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    // Only 4- and 5-character strings can qualify; lower-case only those.
    if (v.length === 4) return v === 'true' || v.toLowerCase() === 'true' ? 1 : -1;
    if (v.length === 5) return v === 'false' || v.toLowerCase() === 'false' ? 0 : -1;
  }
  return -1;
}

/** null or a (non-array) object: rule 1 of §7.3.2. */
function isNullOrObject(v: unknown): boolean {
  return v === null || (typeof v === 'object' && !Array.isArray(v));
}

/**
 * §7.3.2 loose equality, rules 1–7 in that order. Lists are JS arrays. A date literal is passed
 * as its 'YYYY-MM-DD' string.
 *  1. either side null or a JSON object → false;
 *  2. either side an array → both arrays, same length, pairwise loosely equal in order;
 *  3. either side a boolean → both boolean-like (boolean, or "true"/"false" in any case), same truth;
 *  4. both numeric → numeric equality ("42" == 42, "7.50" == 7.5);
 *  5. both date-like → same day ("2024-03-01T22:00:00Z" == "2024-03-01");
 *  6. both strings → equal after lower-casing both (no trimming);
 *  7. otherwise false.
 */
export function looseEquals(a: unknown, b: unknown): boolean {
  // An explicit stack of pairs instead of recursion: data nested deeper than the call stack
  // (JSON.parse accepts it) must still compare, never throw.
  const pending: unknown[] = [a, b];
  const seen = new PairMemo();
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    if (seen.repeated(x, y)) continue;
    if (!looseStep(x, y, pending)) return false;
  }
  return true;
}

/**
 * Pairs of arrays/objects already compared (or queued) in one comparison. Values built in memory
 * (not parsed from JSON) may share sub-values or even contain cycles; without this, comparing
 * them could take time exponential in their depth, or never end. Created lazily: small values,
 * the usual case, never pay for it.
 */
class PairMemo {
  private steps = 0;
  private pairs: Map<object, Set<object>> | null = null;

  /** True when (x, y) was seen before: its outcome is already being decided. */
  repeated(x: unknown, y: unknown): boolean {
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (++this.steps < 64) return false;
    this.pairs ??= new Map();
    let with_ = this.pairs.get(x);
    if (!with_) this.pairs.set(x, (with_ = new Set()));
    if (with_.has(y)) return true;
    with_.add(y);
    return false;
  }
}

/** One pair of {@link looseEquals}: false when unequal; true when equal or its element pairs were queued. */
function looseStep(a: unknown, b: unknown, pending: unknown[]): boolean {
  if (isNullOrObject(a) || isNullOrObject(b)) return false; // rule 1
  const aArr = Array.isArray(a);
  const bArr = Array.isArray(b);
  if (aArr || bArr) {
    // rule 2
    if (!aArr || !bArr) return false;
    const n = a.length;
    if (n !== b.length) return false;
    for (let i = 0; i < n; i++) pending.push(a[i], b[i]);
    return true;
  }
  if (typeof a === 'boolean' || typeof b === 'boolean') {
    // rule 3
    const x = booleanLike(a);
    return x !== -1 && x === booleanLike(b);
  }
  const na = toNumber(a); // rule 4
  if (na === na) {
    const nb = toNumber(b);
    if (nb === nb) return na === nb;
  }
  const da = toDay(a); // rule 5
  if (da === da) {
    const db = toDay(b);
    if (db === db) return da === db;
  }
  if (typeof a === 'string' && typeof b === 'string') return a === b || a.toLowerCase() === b.toLowerCase(); // rule 6
  return false; // rule 7
}

/**
 * Hot-path factory: `compileLooseEquals(lit)(v) === looseEquals(v, lit)` for every v, with the
 * literal's conversions (number, day, lower case, truth value) done once.
 */
export function compileLooseEquals(literal: unknown): (v: unknown) => boolean {
  if (isNullOrObject(literal)) return () => false;
  if (Array.isArray(literal)) return (v) => looseEquals(v, literal);
  if (typeof literal === 'boolean') {
    const truth = literal ? 1 : 0;
    // Rules 1 and 2 give false for null/object/array v, and booleanLike is -1 for those.
    return (v) => booleanLike(v) === truth;
  }
  if (typeof literal === 'number') {
    // v boolean: rule 3, a number is not boolean-like → false. v number or numeric string: rule 4.
    // Anything else: a number is neither date-like nor a string → false.
    return (v) => (typeof v === 'number' ? v === literal : typeof v === 'string' && toNumber(v) === literal);
  }
  if (typeof literal === 'string') {
    const litTruth = booleanLike(literal);
    const litNum = toNumber(literal);
    const litDay = toDay(literal);
    const litLower = literal.toLowerCase();
    return (v) => {
      if (typeof v === 'string') {
        if (litNum === litNum) {
          const n = toNumber(v);
          if (n === n) return n === litNum;
        }
        if (litDay === litDay) {
          const d = toDay(v);
          if (d === d) return d === litDay;
        }
        return v === literal || v.toLowerCase() === litLower;
      }
      if (typeof v === 'boolean') return litTruth !== -1 && litTruth === (v ? 1 : 0);
      if (typeof v === 'number') return v === litNum;
      return false;
    };
  }
  return (v) => looseEquals(v, literal);
}

/**
 * §7.3.3 strict: same kind and value, no conversions; deep JSON equality (objects by key set and
 * values, arrays in order, null equals null, 1 and 1.0 equal). A date literal is passed as its
 * 'YYYY-MM-DD' string, so it is exactly equal only to that text. `undefined` (not a JSON value)
 * equals nothing.
 */
export function strictEquals(a: unknown, b: unknown): boolean {
  // Explicit stack of pairs, as in looseEquals: deep data never overflows the call stack.
  const pending: unknown[] = [a, b];
  const seen = new PairMemo();
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    if (seen.repeated(x, y)) continue;
    if (x === y) {
      if (x === undefined) return false; // same string / number / boolean / null / reference
      continue;
    }
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false; // (NaN ≠ NaN)
    const xArr = Array.isArray(x);
    if (xArr !== Array.isArray(y)) return false;
    if (xArr) {
      const xs = x as unknown[];
      const ys = y as unknown[];
      const n = xs.length;
      if (n !== ys.length) return false;
      for (let i = 0; i < n; i++) pending.push(xs[i], ys[i]);
      continue;
    }
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    let count = 0;
    for (const k in xo) {
      if (!Object.hasOwn(xo, k)) continue;
      if (!Object.hasOwn(yo, k)) return false;
      pending.push(xo[k], yo[k]);
      count++;
    }
    for (const k in yo) if (Object.hasOwn(yo, k)) count--;
    if (count !== 0) return false;
  }
  return true;
}

/**
 * §7.3.7 (for a present value): "" [] {} null → true; numbers and booleans never empty.
 * `undefined` (an absent property) is also reported empty, as §7.3.7 specifies for absent properties.
 */
export function isEmptyValue(v: unknown): boolean {
  if (v === null || v === undefined || v === '') return true;
  if (typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.length === 0;
  for (const k in v) if (Object.hasOwn(v, k)) return false;
  return true;
}

/** §7.3.5: right must be an array containing an element loosely equal to left; right not an array or left an array → false. */
export function isIn(left: unknown, right: unknown): boolean {
  if (!Array.isArray(right) || Array.isArray(left)) return false;
  const n = right.length;
  for (let i = 0; i < n; i++) if (looseEquals(left, right[i])) return true;
  return false;
}

/** Hot-path factory for `is in <list literal>`: `compileIsIn(list)(v) === isIn(v, list)`. */
export function compileIsIn(list: readonly unknown[]): (v: unknown) => boolean {
  const tests = list.map(compileLooseEquals);
  const n = tests.length;
  return (v) => {
    if (Array.isArray(v)) return false;
    for (let i = 0; i < n; i++) if (tests[i](v)) return true;
    return false;
  };
}
