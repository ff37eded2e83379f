import { MASKED } from '@arbiter/contracts';
import { keyFamily } from '@arbiter/rule-lang';

/**
 * Mask paths compiled into a tree of segments: `*` matches every key or element, any other segment
 * every key of the same name in any spelling the rule language reads (its {@link keyFamily}), so
 * `applicant.creditScore` masks `credit_score`, `credit score` and `CreditScore` too.
 */
export interface CompiledMask {
  /** A path ends here: the value is masked. */
  end: boolean;
  /** The `*` segment's subtree. */
  any?: CompiledMask;
  /** The other segments' subtrees, by key family. */
  named: Map<string, CompiledMask>;
}

const node = (): CompiledMask => ({ end: false, named: new Map() });

/** Compiles mask paths (`a.b`, `items.*.card`) into one tree, once per settings load. */
export function compileMasks(paths: readonly string[]): CompiledMask {
  const root = node();
  for (const p of paths) {
    let at = root;
    for (const segment of p.split('.')) {
      if (segment === '*') at = at.any ??= node();
      else {
        const family = keyFamily(segment);
        let next = at.named.get(family);
        if (next === undefined) at.named.set(family, (next = node()));
        at = next;
      }
    }
    at.end = true;
  }
  return root;
}

/**
 * Replaces the value at every path of `masks` in `data` by `"***"`, in place (the caller owns a
 * fresh parse). A path through a list addresses its elements by index (`items.0.card`) or all of
 * them (`items.*.card`); each segment matches every spelling of its key (`creditScore`,
 * `credit_score`, `credit score`, …); a path that does not exist in the data masks nothing.
 * Answers whether anything was masked.
 */
export function applyMasks(data: unknown, masks: CompiledMask): boolean {
  return masks.any === undefined && masks.named.size === 0 ? false : maskAt(data, masks);
}

/** Masks `value` in place with `tree`, the masks that apply at the place it was read from; answers whether anything was masked. */
export function maskValue(value: unknown, tree: CompiledMask): boolean {
  return maskAt(value, tree);
}

function maskAt(value: unknown, tree: CompiledMask): boolean {
  if (value === null || typeof value !== 'object') return false;
  const container = value as Record<string, unknown>;
  let masked = false;
  for (const key of Object.keys(container)) {
    const named = tree.named.size > 0 ? tree.named.get(keyFamily(key)) : undefined;
    if (tree.any?.end === true || named?.end === true) {
      // Defined, not assigned: a key `__proto__` of the parsed data is an own property like any other.
      Object.defineProperty(container, key, { value: MASKED, enumerable: true, writable: true, configurable: true });
      masked = true;
      continue;
    }
    if (tree.any !== undefined && maskAt(container[key], tree.any)) masked = true;
    if (named !== undefined && maskAt(container[key], named)) masked = true;
  }
  return masked;
}
