/** The measures `length of` and `number of` (LANGUAGE.md §5.6). */

/** `length of` / `number of` (§5.6); NaN when the value has no length/count. */
export function measureOf(kind: 'length' | 'number', v: unknown): number {
  if (v === null) return 0;
  if (Array.isArray(v)) return v.length;
  if (kind === 'number') return NaN;
  if (typeof v === 'string') {
    let n = 0;
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      if (c < 0xd800 || c > 0xdbff) n++;
      else if (i + 1 < v.length) {
        const d = v.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          n++;
          i++;
        } else n++;
      } else n++;
    }
    return n;
  }
  if (typeof v === 'object') return Object.keys(v).length;
  return NaN;
}
