/**
 * Linear time, counted rather than timed: re2js also matches UTF-8 byte arrays, so a matcher
 * handed a counting proxy over the input's bytes shows how often it reads them. A backtracking
 * matcher re-reads the input each time it retries a split of `aaaa…` (exponentially often on
 * `^(a+)+$`); a linear one reads each byte about once.
 */
export function countedReads(test: (s: string) => boolean, input: string): { matched: boolean; reads: number } {
  let count = 0;
  const bytes = new Proxy(Array.from(Buffer.from(input, 'utf8')), {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) count++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  const matched = test(bytes as unknown as string);
  return { matched, reads: count };
}
