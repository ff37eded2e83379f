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

/** The value at a dotted data path (`customer.id`, `items.0.sku`), undefined when any step is missing. */
export function valueAtPath(data: unknown, path: string): unknown {
  let at: unknown = data;
  let start = 0;
  while (start <= path.length) {
    let end = path.indexOf('.', start);
    if (end === -1) end = path.length;
    const name = path.slice(start, end);
    if (at === null || typeof at !== 'object') return undefined;
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(name)) return undefined;
      at = at[Number(name)];
    } else {
      if (!Object.prototype.hasOwnProperty.call(at, name)) return undefined;
      at = (at as Record<string, unknown>)[name];
    }
    start = end + 1;
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

const utf8 = new TextEncoder();

/** The bucket (0..9,999) of a value: FNV-1a 32 of its canonical JSON's UTF-8 bytes, then murmur3's fmix32. */
export function rolloutBucket(value: unknown): number {
  const bytes = utf8.encode(canonicalJson(value));
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, 0x01000193);
  }
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
