/** UTF-8 bytes of a string (a lone surrogate counts 3, as its replacement character), without Node's `Buffer`. */
export function utf8Bytes(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Keeps the first lines of `trace` that fit in `maxBytes` (UTF-8, counting a separator per line),
 * then a marker line saying how many lines were cut, then the trace's last line — the result or
 * the error (`budget_exceeded` included), which a reader looks for at the end — so a large trace
 * never makes a reply larger than the bus allows. A trace within the limit is returned unchanged.
 */
export function capTrace(trace: string[], maxBytes: number): string[] {
  if (trace.length === 0) return trace;
  // A UTF-16 unit is at most 3 UTF-8 bytes (a surrogate pair: 4 bytes for 2 units): short traces need no counting.
  let units = 0;
  for (const line of trace) units += line.length + 4;
  if (units * 3 <= maxBytes) return trace;
  const last = trace[trace.length - 1];
  let used = utf8Bytes(last) + 4;
  for (let i = 0; i < trace.length - 1; i++) {
    used += utf8Bytes(trace[i]) + 4;
    if (used > maxBytes) {
      const kept = trace.slice(0, i);
      kept.push(`… trace cut: ${trace.length - 1 - i} more lines (a trace is limited to ${maxBytes} bytes)`, last);
      return kept;
    }
  }
  return trace;
}
