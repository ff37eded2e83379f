import { ArbiterError } from '@arbiter/contracts';

/** Size limits checked on the main thread before a task reaches a worker (DESIGN.md §4). */
export interface Limits {
  maxRuleBytes: number;
  maxDataDepth: number;
}

/** Returns the UTF-8 size of `rule`; throws `payload_too_large` above `maxBytes`. */
export function checkRuleSize(rule: string, maxBytes: number): number {
  const bytes = Buffer.byteLength(rule, 'utf8');
  if (bytes > maxBytes) {
    throw new ArbiterError('payload_too_large', `rule text is ${bytes} bytes: the limit is ${maxBytes} bytes`);
  }
  return bytes;
}

/**
 * Nesting depth of a JSON value: a scalar is 0, `{}` and `[]` are 1, `{"a":{}}` is 2. Stops
 * counting once past `limit`, so the walk never goes deeper than the limit needs.
 */
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
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return max;
}

/** Throws `validation_failed` when `data` is nested deeper than `maxDepth`. */
export function checkDataDepth(data: unknown, maxDepth: number): void {
  if (jsonDepth(data, maxDepth) > maxDepth) {
    throw new ArbiterError('validation_failed', `data is nested deeper than ${maxDepth} levels`);
  }
}
