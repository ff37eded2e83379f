import type { Reason, Reasons } from '@arbiter/rule-lang';
import { utf8Bytes } from './trace-cap.js';

/** Room kept for the keys around `because`, the marker and separators. */
const OVERHEAD = 64;

/** UTF-8 bytes of `v`'s JSON. */
function jsonBytes(v: unknown): number {
  return utf8Bytes(JSON.stringify(v) ?? 'null');
}

/**
 * An upper bound of the UTF-8 bytes of `entries`' JSON, cheap for the usual entries (strings,
 * numbers, small values); a value that is an object or array is measured. Infinity past `limit`.
 */
function boundOf(entries: readonly Reason[], limit: number): number {
  let bytes = 2;
  for (const e of entries) {
    // A UTF-16 unit is at most 6 bytes of JSON (an escape); the fixed keys and numbers fit in 160.
    bytes += 160 + 6 * (e.rule.length + e.text.length + (e.path?.length ?? 0) + (e.error?.length ?? 0));
    const v = e.value;
    if (typeof v === 'string') bytes += 6 * v.length + 2;
    else if (typeof v === 'object' && v !== null) bytes += jsonBytes(v);
    if (e.because !== undefined) bytes += boundOf(e.because, limit - bytes);
    if (bytes > limit) return Infinity;
  }
  return bytes;
}

/** The entries that fit in `room` bytes, in order, the deepest and last left out first; `used` is what they take. */
function fit(entries: readonly Reason[], room: number): { kept: Reason[]; used: number } {
  const kept: Reason[] = [];
  let used = 2;
  for (const e of entries) {
    const whole = jsonBytes(e) + 1;
    if (used + whole <= room) {
      kept.push(e);
      used += whole;
      continue;
    }
    const { because, ...bare } = e;
    // A value too large to show with the rest is left out too.
    if ('value' in bare && jsonBytes(bare.value) > room / 4) delete bare.value;
    const alone = jsonBytes(bare) + 1;
    if (used + alone + OVERHEAD > room) break;
    used += alone;
    if (because !== undefined) {
      const inner = fit(because, room - used - OVERHEAD);
      if (inner.kept.length > 0) {
        (bare as Reason).because = inner.kept;
        used += inner.used + 12;
      }
    }
    kept.push(bare);
  }
  return { kept, used };
}

/**
 * Keeps reasons within `maxBytes` UTF-8 bytes of JSON (LANGUAGE.md §10.4): reasons within it are
 * returned unchanged (the usual case costs a bound, not a serialisation); larger ones keep their
 * first entries, the deepest and last left out first, values too large left out, the sentence cut
 * with `…`, and say `truncated: true`.
 */
export function capReasons(reasons: Reasons, maxBytes: number): Reasons {
  if (!Number.isFinite(maxBytes)) return reasons;
  const sentenceBytes = 6 * reasons.sentence.length + 2;
  if (sentenceBytes + boundOf(reasons.because, maxBytes - sentenceBytes) + OVERHEAD <= maxBytes) return reasons;
  if (jsonBytes(reasons) <= maxBytes) return reasons;
  const sentenceRoom = Math.floor(maxBytes / 4);
  let sentence = reasons.sentence;
  if (utf8Bytes(JSON.stringify(sentence)) > sentenceRoom) {
    // A character is at most 6 bytes of JSON: this many always fit.
    sentence = `${Array.from(sentence)
      .slice(0, Math.max(0, Math.floor(sentenceRoom / 6) - 1))
      .join('')}…`;
  }
  const room = maxBytes - utf8Bytes(JSON.stringify(sentence)) - OVERHEAD;
  const { kept } = fit(reasons.because, room);
  return { result: reasons.result, sentence, because: kept, truncated: true };
}
