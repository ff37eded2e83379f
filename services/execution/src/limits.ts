import { ArbiterError, jsonDepth, RULE_TOO_LARGE } from '@arbiter/contracts';

/** Size limits checked on the main thread before a task reaches a worker (DESIGN.md §4). */
export interface Limits {
  maxRuleBytes: number;
  maxDataDepth: number;
  /** UTF-8 bytes of one evaluation's trace (see {@link capTrace}). */
  maxTraceBytes: number;
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
  let used = Buffer.byteLength(last, 'utf8') + 4;
  for (let i = 0; i < trace.length - 1; i++) {
    used += Buffer.byteLength(trace[i], 'utf8') + 4;
    if (used > maxBytes) {
      const kept = trace.slice(0, i);
      kept.push(`… trace cut: ${trace.length - 1 - i} more lines (a trace is limited to ${maxBytes} bytes)`, last);
      return kept;
    }
  }
  return trace;
}

/** Returns the UTF-8 size of `rule`; throws `payload_too_large` (reason {@link RULE_TOO_LARGE}) above `maxBytes`. */
export function checkRuleSize(rule: string, maxBytes: number): number {
  const bytes = Buffer.byteLength(rule, 'utf8');
  if (bytes > maxBytes) {
    const message = `rule text is ${bytes} bytes: the limit is ${maxBytes} bytes`;
    throw new ArbiterError('payload_too_large', message, [{ code: RULE_TOO_LARGE, message, path: 'rule' }]);
  }
  return bytes;
}

/** Throws `validation_failed` when `data` is nested deeper than `maxDepth`. */
export function checkDataDepth(data: unknown, maxDepth: number): void {
  if (jsonDepth(data, maxDepth) > maxDepth) {
    throw new ArbiterError('validation_failed', `data is nested deeper than ${maxDepth} levels`);
  }
}
