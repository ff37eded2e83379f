/**
 * `rules eval --jsonl`: one request `{"rule": "...", "data": {...}}` per input line, one result
 * object per output line. Works on any async sequence of lines and a write function, so it
 * streams (see main.ts for the stdin/stdout wiring) and is testable without processes.
 */

import { compile, type CompiledPolicy, type Reasons } from '@arbiter/rule-lang';
import { answerPolicy, compileRule, resolveRun, type CompiledRule, type PolicyAnswer } from '@arbiter/run';
import { cliLimits, describeJson, isJsonObject, stripBom, unpairedSurrogateIn } from './output.js';

/** One output line. `error`/`errorCode` are `null` when the evaluation had no error. */
export interface JsonlResult {
  result: boolean;
  outcomes: Record<string, boolean>;
  trace: string[];
  error: string | null;
  /** `parse_error`, `missing_selector`, `missing_property`, or `bad_input` for a malformed line. */
  errorCode: string | null;
  /** Why the result came out: only with `--reasons` (LANGUAGE.md §10.4). */
  reasons?: Reasons;
}

/** Options of {@link runJsonl}. */
export interface JsonlOptions {
  /** Build the trace (default true). */
  trace?: boolean;
  /** The clock for date operators. */
  now?: Date;
  /** Steps each evaluation may take (default: the library's default for the mode). */
  stepBudget?: number;
  /** Add why each result came out (`reasons`, default false). */
  reasons?: boolean;
  /** How many compiled policies to keep, keyed by rule text (default 1000, least recently used dropped). */
  cacheSize?: number;
  /** The compiler (tests count calls through it). */
  compile?: (text: string) => CompiledPolicy;
}

/** Counters of one run. */
export interface JsonlStats {
  /** Non-blank lines read. */
  requests: number;
  /** Lines answered with `errorCode: "bad_input"`. */
  badInput: number;
  /** Rule texts compiled (cache misses). */
  compiled: number;
  /** Requests served from the cache. */
  cacheHits: number;
}

/** A small LRU map: a hit moves the entry to the back; inserting past the bound drops the front. */
class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: K, value: V): void {
    if (this.max <= 0) return;
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as K);
    this.map.set(key, value);
  }
}

const badInput = (message: string): JsonlResult => ({ result: false, outcomes: {}, trace: [], error: message, errorCode: 'bad_input' });

const toLine = (r: PolicyAnswer): JsonlResult => {
  const line: JsonlResult = {
    result: r.result,
    outcomes: r.outcomes,
    trace: r.trace,
    error: r.error ?? null,
    errorCode: r.errorCode ?? null,
  };
  if (r.reasons !== undefined) line.reasons = r.reasons;
  return line;
};

/** Reads one request line; returns the rule and data, or the `bad_input` message. */
export function parseRequest(line: string, lineNo: number): { rule: string; data: Record<string, unknown> } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(lineNo === 1 ? stripBom(line) : line);
  } catch (err) {
    return { error: `line ${lineNo}: invalid JSON: ${(err as Error).message}` };
  }
  if (!isJsonObject(json))
    return { error: `line ${lineNo}: expected an object {"rule": string, "data": object}, got ${describeJson(json)}` };
  const { rule, data } = json;
  if (typeof rule !== 'string') return { error: `line ${lineNo}: \`rule\` must be a string, got ${describeJson(rule)}` };
  if (!isJsonObject(data)) return { error: `line ${lineNo}: \`data\` must be a JSON object, got ${describeJson(data)}` };
  const surrogate = unpairedSurrogateIn(data, 'data');
  if (surrogate !== null) return { error: `line ${lineNo}: ${surrogate}` };
  return { rule, data };
}

/**
 * Answers every line of `lines` with one JSON line through `write`, in order. Never stops on a
 * bad line: invalid JSON, a line that is not an object, a non-string `rule` or a non-object
 * `data` is answered with `errorCode: "bad_input"` and an error naming the line number (1-based,
 * blank lines counted but not answered). Compiled policies and parse errors are cached by rule
 * text. `write` may return a promise (e.g. to wait for a stream to drain).
 */
export async function runJsonl(
  lines: AsyncIterable<string> | Iterable<string>,
  write: (chunk: string) => void | Promise<void>,
  options: JsonlOptions = {},
): Promise<JsonlStats> {
  const run = resolveRun(
    {
      ...(options.trace !== undefined && { trace: options.trace }),
      ...(options.now !== undefined && { now: options.now.toISOString() }),
      ...(options.reasons === true && { flags: { reasons: true } }),
    },
    cliLimits(options.stepBudget),
  );
  const doCompile = options.compile ?? compile;
  const cache = new LruCache<string, CompiledRule>(options.cacheSize ?? 1000);
  const stats: JsonlStats = { requests: 0, badInput: 0, compiled: 0, cacheHits: 0 };
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === '') continue;
    stats.requests++;
    const out = answer(line, lineNo);
    if (out.errorCode === 'bad_input') stats.badInput++;
    await write(JSON.stringify(out) + '\n');
  }
  return stats;

  function answer(line: string, n: number): JsonlResult {
    const req = parseRequest(line, n);
    if ('error' in req) return badInput(req.error);
    let compiled = cache.get(req.rule);
    if (compiled) stats.cacheHits++;
    else {
      stats.compiled++;
      try {
        compiled = compileRule(req.rule, doCompile);
      } catch (err) {
        return internal(err, n);
      }
      cache.set(req.rule, compiled);
    }
    try {
      return toLine(answerPolicy(compiled, req.data, run));
    } catch (err) {
      return internal(err, n);
    }
  }
}

/** A library bug must not end the stream: answer the line and carry on. */
function internal(err: unknown, lineNo: number): JsonlResult {
  const message = err instanceof Error ? err.message : String(err);
  return { result: false, outcomes: {}, trace: [], error: `line ${lineNo}: internal error: ${message}`, errorCode: 'internal_error' };
}
