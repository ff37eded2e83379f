/** An unpaired UTF-16 surrogate: in `u` mode a well-formed pair is one code point, so only a lone half matches. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/**
 * Whether PostgreSQL can store and compare `text`: no U+0000 (a `text` column refuses it) and no
 * unpaired UTF-16 surrogate (a `jsonb` value refuses its `\ud800` escape, and UTF-8 cannot encode it).
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);
}

/** Whether `text` holds an unpaired UTF-16 surrogate. */
export function hasUnpairedSurrogate(text: string): boolean {
  return UNPAIRED_SURROGATE.test(text);
}

/** What a refusal of an unpaired surrogate says (the service's 400 `unpaired_surrogate`, and the SDK's and CLI's). */
export const UNPAIRED_SURROGATE_MESSAGE = 'text must not contain an unpaired UTF-16 surrogate (`\\ud800`–`\\udfff` alone)';

/**
 * The path (`root`, then `.key` or `.index` per level) of the first string or key in `value` that
 * holds an unpaired UTF-16 surrogate, or null. An iterative walk: any depth, no recursion; paths
 * are built only once one is found (the common answer, null, allocates no path).
 */
export function unpairedSurrogateAt(value: unknown, root: string): string | null {
  return containsUnpairedSurrogate(value) ? pathOfUnpairedSurrogate(value, root) : null;
}

/** Whether a string or key anywhere in `value` holds an unpaired UTF-16 surrogate. */
function containsUnpairedSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return UNPAIRED_SURROGATE.test(value);
  if (value === null || typeof value !== 'object') return false;
  const nodes: object[] = [value];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === 'string') {
          if (UNPAIRED_SURROGATE.test(child)) return true;
        } else if (child !== null && typeof child === 'object') nodes.push(child);
      }
      continue;
    }
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      if (UNPAIRED_SURROGATE.test(key)) return true;
      const child = (node as Record<string, unknown>)[key];
      if (typeof child === 'string') {
        if (UNPAIRED_SURROGATE.test(child)) return true;
      } else if (child !== null && typeof child === 'object') nodes.push(child);
    }
  }
  return false;
}

/** The path of the first unpaired surrogate in `value` (INVARIANT: there is one). */
function pathOfUnpairedSurrogate(value: unknown, root: string): string {
  if (typeof value === 'string') return root;
  const nodes: unknown[] = [value];
  const paths: string[] = [root];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const path = paths.pop()!;
    if (typeof node === 'string') {
      if (UNPAIRED_SURROGATE.test(node)) return path;
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) {
        nodes.push(node[i]);
        paths.push(`${path}.${i}`);
      }
      continue;
    }
    const keys = Object.keys(node);
    for (const key of keys) if (UNPAIRED_SURROGATE.test(key)) return path;
    for (let i = keys.length - 1; i >= 0; i--) {
      nodes.push((node as Record<string, unknown>)[keys[i]]);
      paths.push(`${path}.${keys[i]}`);
    }
  }
  return root;
}
