/**
 * JSON nesting depth, checked before anything recurses over a value (docs/api.md#conventions): a scalar is
 * 0, `{}` and `[]` are 1, `{"a":{}}` is 2. Both functions are iterative and stop once past the limit.
 */

/** Nesting depth of the JSON text `text` (brackets outside strings), or `limit + 1` as soon as it is exceeded. */
export function textJsonDepth(text: string, limit: number = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return max;
}

/**
 * Opening brackets in `text` (strings included), counting no further than `limit + 1`: an upper
 * bound of its nesting depth, found with native searches rather than a walk of every character.
 */
export function bracketCount(text: string, limit: number): number {
  let n = 0;
  for (let at = text.indexOf('{'); at >= 0 && n <= limit; at = text.indexOf('{', at + 1)) n++;
  for (let at = text.indexOf('['); at >= 0 && n <= limit; at = text.indexOf('[', at + 1)) n++;
  return n;
}

/**
 * Whether the JSON text `text` nests deeper than `limit`: a text with no more than `limit` opening
 * brackets cannot (the common case, answered without walking it), any other is walked.
 */
export function exceedsDepth(text: string, limit: number): boolean {
  return bracketCount(text, limit) > limit && textJsonDepth(text, limit) > limit;
}

/** Nesting depth of an in-memory JSON value, counting no further than `limit + 1`. */
export function jsonDepth(value: unknown, limit: number = Number.POSITIVE_INFINITY): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) {
      max = depth;
      if (max > limit) return max;
    }
    const children = Array.isArray(node) ? (node as unknown[]) : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return max;
}

/**
 * Deepest JSON nesting any request may carry, at the HTTP edge and on the bus: far above what
 * policies need (data is limited to `MAX_DATA_DEPTH`, 64 by default) and far below what would
 * overflow the stack of a recursive walk (`JSON.stringify`, schema compilers, zod).
 */
export const MAX_JSON_DEPTH = 256;

/** Deepest nesting of policy data (a run's data, a saved test's data): the execution service's default `MAX_DATA_DEPTH`. */
export const MAX_DATA_DEPTH = 64;
