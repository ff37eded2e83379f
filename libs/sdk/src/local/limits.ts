import { ArbiterError, UNPAIRED_SURROGATE_MESSAGE, unpairedSurrogateAt, type RunnableLimits } from '@arbiter/contracts';
import type { EvaluateOptions } from '@arbiter/rule-lang';

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
 * The execution service's trace cap (`MAX_TRACE_BYTES`): the first lines that fit, a marker line
 * saying how many were cut, then the last line. A trace within the limit is returned unchanged.
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

/**
 * What a local run checks of its data: a JSON object, as the body of `POST /run/policy/{baseId}`
 * must be, whose text (keys and strings) holds no unpaired UTF-16 surrogate, refused with the
 * service's 400 (`unpaired_surrogate`, with the path as the body's): such text is no Unicode, and
 * the answer must not depend on the door. The service's nesting limit (`MAX_DATA_DEPTH`) guards its
 * bus and worker threads, which a local run does not cross, so deep data is evaluated here
 * (docs/sdk.md says so).
 */
export function checkData(data: unknown): asserts data is Record<string, unknown> {
  if (!isObject(data)) throw new ArbiterError('validation_failed', 'data must be a JSON object');
  const at = unpairedSurrogateAt(data, 'body');
  if (at !== null) {
    throw new ArbiterError('validation_failed', `request body is invalid: \`${at}\`: ${UNPAIRED_SURROGATE_MESSAGE}`, [
      { code: 'unpaired_surrogate', message: UNPAIRED_SURROGATE_MESSAGE, path: at },
    ]);
  }
}

/** Whether {@link checkData} accepts `data` (without building the error). */
export function isAcceptedData(data: unknown): data is Record<string, unknown> {
  return isObject(data) && unpairedSurrogateAt(data, 'body') === null;
}

/** Whether `data` is an object that is not an array (what a run's data must be). */
export function isObject(data: unknown): data is Record<string, unknown> {
  return typeof data === 'object' && data !== null && !Array.isArray(data);
}

/** Evaluation options built once per limits and mode: a run allocates none. */
export interface RunModes {
  traced: EvaluateOptions;
  untraced: EvaluateOptions;
}

/** The options of both modes under `limits`. */
export function runModes(limits: RunnableLimits): RunModes {
  return { traced: { trace: true, stepBudget: limits.traceStepBudget }, untraced: { trace: false, stepBudget: limits.stepBudget } };
}
