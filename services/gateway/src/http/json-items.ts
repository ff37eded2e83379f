/**
 * One pass over a JSON body's UTF-8 bytes that finds the elements of one top-level array member
 * (`items` of the batch routes), or one top-level object member itself (`data` of `POST /run`), as
 * byte ranges, so the data objects can be framed for the bus as the bytes they came as, never
 * parsed and written again. The same pass measures the nesting depth of the whole body and of each
 * element.
 *
 * Meant for a body JSON.parse accepts (the parser checks that beside it): on any other text it ends
 * without throwing and its answer means nothing. It tracks only strings (and their escapes),
 * brackets, commas, colons and number tokens: a multi-byte UTF-8 sequence never holds an ASCII byte,
 * so bytes can be read one at a time.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Longest run of digits written without an exponent that cannot overflow to `Infinity` (1.8e308 has 309). */
const SAFE_DIGITS = 300;

/** The elements of the array found. */
export interface ScannedElements {
  /** Byte offset of each element's first byte. */
  readonly starts: number[];
  /** Byte offset just past each element's last byte. */
  readonly ends: number[];
  /** Nesting depth of each element (a scalar 0, `{}` 1, `{"a":[]}` 2), as `jsonDepth` counts it. */
  readonly depths: number[];
  /**
   * Indexes of elements holding a number JSON.parse reads as `-0` or `±Infinity`, which
   * `JSON.stringify` writes as `0` or `null`: their bytes would not mean what the parsed value
   * written again means, so such an element is sent written again (rare; never wrong to list more).
   */
  readonly lossy: number[];
}

/** What {@link scanJsonBody} found. */
export interface JsonBodyScan {
  /** Nesting depth of the whole body. */
  readonly depth: number;
  /**
   * The last top-level member named `key` when the body is an object and that member an array
   * (its elements), or, scanned `as: 'value'`, an object (itself, as the one element); else null.
   */
  readonly elements: ScannedElements | null;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Whether the key token `bytes[from, to)` (between its quotes) means `key` (ASCII, no quote or backslash in it). */
function keyIs(bytes: Uint8Array, from: number, to: number, key: string): boolean {
  let escaped = false;
  for (let i = from; i < to; i++) {
    if (bytes[i] === BACKSLASH) {
      escaped = true;
      break;
    }
  }
  if (escaped) {
    // A key written with escapes (`"\u0069tems"`) means what JSON.parse reads.
    try {
      return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + from - 1, to - from + 2).toString('utf8')) === key;
    } catch {
      return false;
    }
  }
  if (to - from !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (bytes[from + i] !== key.charCodeAt(i)) return false;
  return true;
}

/**
 * Whether the number token `bytes[from, to)` may not survive JSON.parse then JSON.stringify
 * unchanged in value: an exponent (may overflow, or underflow to −0), a negative zero, or more
 * digits than a double can hold without overflowing.
 */
function lossyNumber(bytes: Uint8Array, from: number, to: number): boolean {
  if (to - from > SAFE_DIGITS) return true;
  let allZero = true;
  for (let i = from; i < to; i++) {
    const c = bytes[i];
    if (c === 0x65 || c === 0x45) return true; // e, E
    if (c > ZERO && c <= NINE) allZero = false;
  }
  return bytes[from] === MINUS && allZero;
}

/**
 * Scans `bytes` (a JSON text that JSON.parse accepts) once: the whole text's nesting depth and the
 * byte ranges, depths and lossy numbers of the elements of its top-level member `key` (the last
 * one, as JSON.parse keeps the last of duplicate keys): an array's elements, or (`as: 'value'`) an
 * object member as one element.
 */
export function scanJsonBody(bytes: Uint8Array, key: string, as: 'elements' | 'value' = 'elements'): JsonBodyScan {
  const wanted = as === 'elements' ? OPEN_ARRAY : OPEN_OBJECT;
  const n = bytes.length;
  let depth = 0;
  let max = 0;
  /** Set at the top-level object's `{` and after its commas: the next string is a key. */
  let expectKey = false;
  let keyMatches = false;
  let elements: ScannedElements | null = null;
  /** Inside the array being captured (depth 2 is its own level). */
  let capturing = false;
  /** Inside the object member being captured as one element (depth 2 is its own level). */
  let capturingValue = false;
  /** In capture: the byte that starts the next element is still to come. */
  let needStart = false;
  let elementStart = 0;
  let elementMax = 0;
  let elementLossy = false;

  const endElement = (at: number): void => {
    let end = at;
    while (end > elementStart && isSpace(bytes[end - 1])) end--;
    const els = elements!;
    if (elementLossy) els.lossy.push(els.starts.length);
    els.starts.push(elementStart);
    els.ends.push(end);
    els.depths.push(elementMax);
  };

  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (isSpace(c)) continue;
    if (capturing && depth === 2 && needStart && c !== CLOSE_ARRAY) {
      needStart = false;
      elementStart = i;
      elementMax = 0;
      elementLossy = false;
    }
    if (c === QUOTE) {
      const from = i + 1;
      i = from;
      while (i < n) {
        const d = bytes[i];
        if (d === QUOTE) break;
        i += d === BACKSLASH ? 2 : 1;
      }
      if (depth === 1 && expectKey) {
        expectKey = false;
        keyMatches = keyIs(bytes, from, i, key);
        if (keyMatches) elements = null; // a later duplicate replaces an earlier one
      }
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > max) max = depth;
      if (capturing && depth - 2 > elementMax) elementMax = depth - 2;
      if (capturingValue && depth - 1 > elementMax) elementMax = depth - 1;
      if (depth === 1) expectKey = c === OPEN_OBJECT;
      else if (depth === 2 && c === wanted && keyMatches && !capturing && !capturingValue) {
        elements = { starts: [], ends: [], depths: [], lossy: [] };
        if (c === OPEN_ARRAY) {
          capturing = true;
          needStart = true;
        } else {
          capturingValue = true;
          elementStart = i;
          elementMax = 1;
          elementLossy = false;
        }
      }
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (capturing && depth === 2) {
        if (!needStart) endElement(i);
        capturing = false;
        keyMatches = false;
      } else if (capturingValue && depth === 2) {
        endElement(i + 1);
        capturingValue = false;
        keyMatches = false;
      }
      depth--;
      continue;
    }
    if (c === COMMA) {
      if (depth === 1) expectKey = true;
      else if (capturing && depth === 2) {
        endElement(i);
        needStart = true;
      }
      continue;
    }
    if ((capturing || capturingValue) && (c === MINUS || (c >= ZERO && c <= NINE))) {
      let j = i + 1;
      while (j < n) {
        const d = bytes[j];
        if ((d >= ZERO && d <= NINE) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === MINUS) j++;
        else break;
      }
      if (!elementLossy && lossyNumber(bytes, i, j)) elementLossy = true;
      i = j - 1;
    }
  }
  return { depth: max, elements };
}
