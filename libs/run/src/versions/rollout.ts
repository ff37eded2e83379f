/**
 * The choice of a staged rollout (docs/design/canary.md): which of a base's two versions answers a
 * run by base id. Pure and the same everywhere: the execution service and the SDK's local runtime
 * call these functions, so every replica and every runtime send the same data to the same version.
 *
 * A run whose data holds a value at the rollout's `by` path gets the bucket of that value — FNV-1a
 * (32 bits) of its canonical JSON (object keys sorted, UTF-8), mixed by murmur3's finaliser, modulo
 * 10,000 — and the new version when the bucket is below `percent × 100`. Without `by`, or when the
 * data has no value there (absent or null), the run draws a bucket at random.
 */

/** What the choice reads of a rollout. */
export interface RolloutSplit {
  /** Share of runs (0–100, to a hundredth) that get the new version. */
  readonly percent: number;
  /** Data path (`customer.id`) whose value picks the version. */
  readonly by?: string | undefined;
}

/** Buckets of the choice: a share is counted in hundredths of a percent. */
export const ROLLOUT_BUCKETS = 10_000;

/** Paths split once: a rollout's `by` is one of few. */
const segmentsOf = new Map<string, string[]>();
const MAX_PATHS = 256;

/** The value at a dotted data path (`customer.id`, `items.0.sku`), undefined when any step is missing. */
export function valueAtPath(data: unknown, path: string): unknown {
  let segments = segmentsOf.get(path);
  if (segments === undefined) {
    segments = path.split('.');
    if (segmentsOf.size >= MAX_PATHS) segmentsOf.clear();
    segmentsOf.set(path, segments);
  }
  let at: unknown = data;
  for (const name of segments) {
    if (at === null || typeof at !== 'object') return undefined;
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(name)) return undefined;
      at = at[Number(name)];
    } else {
      if (!Object.prototype.hasOwnProperty.call(at, name)) return undefined;
      at = (at as Record<string, unknown>)[name];
    }
  }
  return at;
}

/** JSON text with object keys in code-unit order at every depth: the same text for equal values. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a over the UTF-8 bytes of `text` from `from` on, as they are encoded (no copy). `plain`:
 * stop (answer -1) at a character JSON text escapes (a control character, `"`, `\\`, a lone
 * surrogate), so a string without one hashes as its JSON text without writing it.
 */
function fnvUtf8(h: number, text: string, plain: boolean): number {
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (plain && (c < 0x20 || c === 0x22 || c === 0x5c)) return -1;
      h = Math.imul(h ^ c, FNV_PRIME);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else if (plain) return -1;
      else c = 0xfffd;
    }
    if (c < 0x800) {
      h = Math.imul(h ^ (0xc0 | (c >> 6)), FNV_PRIME);
    } else if (c < 0x10000) {
      h = Math.imul(h ^ (0xe0 | (c >> 12)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME);
    } else {
      h = Math.imul(h ^ (0xf0 | (c >> 18)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 12) & 0x3f)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME);
    }
    h = Math.imul(h ^ (0x80 | (c & 0x3f)), FNV_PRIME);
  }
  return h;
}

/** The bucket (0..9,999) of a value: FNV-1a 32 of its canonical JSON's UTF-8 bytes, then murmur3's fmix32. */
export function rolloutBucket(value: unknown): number {
  let h = -1;
  if (typeof value === 'string') {
    // The JSON text of most strings is the string in quotes: hashed without writing it.
    h = fnvUtf8(Math.imul(FNV_OFFSET ^ 0x22, FNV_PRIME), value, true);
    if (h !== -1) h = Math.imul(h ^ 0x22, FNV_PRIME);
  }
  if (h === -1) h = fnvUtf8(FNV_OFFSET, canonicalJson(value), false);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % ROLLOUT_BUCKETS;
}

/** Buckets below this get the new version. */
export function rolloutThreshold(percent: number): number {
  return Math.min(ROLLOUT_BUCKETS, Math.max(0, Math.round(percent * 100)));
}

/**
 * Whether a run on `data` gets the new version: by the bucket of the value at `by`, else a random
 * bucket (`random`: a number in [0, 1), `Math.random` unless given).
 */
export function rolloutChoosesNew(split: RolloutSplit, data: unknown, random: () => number = Math.random): boolean {
  const threshold = rolloutThreshold(split.percent);
  if (threshold <= 0) return false;
  if (threshold >= ROLLOUT_BUCKETS) return true;
  const value = split.by === undefined ? undefined : valueAtPath(data, split.by);
  const bucket = value === undefined || value === null ? Math.floor(random() * ROLLOUT_BUCKETS) : rolloutBucket(value);
  return bucket < threshold;
}
