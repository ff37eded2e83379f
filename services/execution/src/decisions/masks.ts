import { MASKED } from '@arbiter/contracts';

/** A mask path split into its segments (`*` matches every key or element). */
export type CompiledMask = readonly string[];

/** Splits mask paths (`a.b`, `items.*.card`) into segments, once per settings load. */
export function compileMasks(paths: readonly string[]): CompiledMask[] {
  return paths.map((p) => p.split('.'));
}

/**
 * Replaces the value at every path of `masks` in `data` by `"***"`, in place (the caller owns a
 * fresh parse). A path through a list addresses its elements by index (`items.0.card`) or all of
 * them (`items.*.card`); a path that does not exist in the data masks nothing. Answers whether
 * anything was masked.
 */
export function applyMasks(data: unknown, masks: readonly CompiledMask[]): boolean {
  let masked = false;
  for (const mask of masks) if (maskAt(data, mask, 0)) masked = true;
  return masked;
}

function maskAt(node: unknown, mask: CompiledMask, at: number): boolean {
  if (node === null || typeof node !== 'object') return false;
  const segment = mask[at];
  const last = at === mask.length - 1;
  const container = node as Record<string, unknown>;
  const keys = segment === '*' ? Object.keys(container) : Object.hasOwn(container, segment) ? [segment] : [];
  let masked = false;
  for (const key of keys) {
    if (last) {
      container[key] = MASKED;
      masked = true;
    } else if (maskAt(container[key], mask, at + 1)) masked = true;
  }
  return masked;
}
