/** Shared pieces of the `rules` CLI: exit codes, outputs, JSON input helpers. No I/O here. */

import { unpairedSurrogateAt } from '@arbiter/contracts';
import type { PolicyCheck, Reasons, RuleParseError } from '@arbiter/rule-lang';
import type { RunLimits } from '@arbiter/run';

/**
 * Exit codes of every `rules` command.
 * - `ok` (0): the command did its job (for `eval`: the policy was evaluated, whatever the result).
 * - `failed` (1): the rule text does not parse, or (`test`) at least one case failed.
 * - `usage` (2): bad arguments, an unreadable file, or input that is not the JSON the command needs.
 * - `internal` (70): a bug in the CLI or the library; please report it.
 */
export const ExitCode = { ok: 0, failed: 1, usage: 2, internal: 70 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** What a command produced: the text for stdout and stderr, and the exit code. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
  code: ExitCode;
}

/** A usage problem (bad arguments or input); reported on stderr with exit code 2. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
  /** Whether the command's synopsis should follow the message (true for argument errors). */
  readonly showUsage: boolean;
  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = options.showUsage ?? true;
  }
}

/** The evaluation JSON the CLI prints: the library result without the structured trace. */
export interface CliEvaluation {
  result: boolean;
  outcomes: Record<string, boolean>;
  trace: string[];
  error?: string;
  errorCode?: string;
  /** Why the result came out (`--reasons`, LANGUAGE.md §10.4). */
  reasons?: Reasons;
}

/** Keeps the public fields of an evaluation in a fixed order; `error`/`errorCode`/`reasons` only when present. */
export function toCliEvaluation(r: CliEvaluation): CliEvaluation {
  const out: CliEvaluation = { result: r.result, outcomes: r.outcomes, trace: r.trace };
  if (r.error !== undefined) out.error = r.error;
  if (r.errorCode !== undefined) out.errorCode = r.errorCode;
  if (r.reasons !== undefined) out.reasons = r.reasons;
  return out;
}

/** Drops a leading byte-order mark, which `JSON.parse` rejects. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How a JSON value is named in messages: `an array`, `null`, `a number`, … */
export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const t = typeof value;
  return t === 'object' ? 'an object' : t === 'undefined' ? 'nothing' : `a ${t}`;
}

/** Parses JSON text or throws a {@link CliUsageError} naming `what` (e.g. the file name). */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(stripBom(text));
  } catch (err) {
    throw new CliUsageError(`${what}: invalid JSON: ${(err as Error).message}`);
  }
}

/** Parses a `--now` value: an ISO 8601 date (`2025-01-31`) or date-time (`2025-01-31T12:00:00Z`). */
export function parseNow(value: string): Date {
  const iso = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
  const date = iso.test(value) ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) {
    throw new CliUsageError(`--now: \`${value}\` is not an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)`);
  }
  return date;
}

/** `--step-budget N`: a non-negative integer number of steps (LANGUAGE.md §8.1). */
export function parseStepBudget(value: string): number {
  const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw new CliUsageError(`--step-budget: \`${value}\` is not a non-negative integer (e.g. 1000000)`);
  return n;
}

/**
 * A parse error for people: the library message (first line, unchanged), then where it is
 * (`--> FILE:L:C`), the offending source line with a caret under the column, and the help when
 * there is one.
 */
export function formatParseError(err: RuleParseError, text: string, fileName?: string): string {
  const lines = [err.message];
  if (err.line !== undefined && err.column !== undefined) lines.push(...sourceLines(text, err.line, err.column, fileName));
  if (err.help) lines.push(`help: ${err.help}`);
  return lines.join('\n') + '\n';
}

/** A static-check finding as `rules check` prints it: `warning[<check>]: <message>`, then where it is, as a parse error. */
export function formatPolicyCheck(check: PolicyCheck, text: string, fileName?: string): string {
  return (
    [`${check.severity}[${check.check}]: ${check.message}`, ...sourceLines(text, check.line, check.column, fileName)].join('\n') + '\n'
  );
}

/** `--> file:line:column`, the source line and a caret under the column. */
function sourceLines(text: string, line: number, column: number, fileName?: string): string[] {
  const lines: string[] = [];
  if (fileName !== undefined) lines.push(`  --> ${fileName}:${line}:${column}`);
  const source = stripBom(text).split(/\r\n|\n|\r/)[line - 1];
  if (source !== undefined) {
    const gutter = String(line);
    const before = Array.from(source).slice(0, Math.max(0, column - 1));
    const pad = before.map((ch) => (ch === '\t' ? '\t' : ' ')).join('');
    lines.push(`  ${gutter} | ${source}`, `  ${' '.repeat(gutter.length)} | ${pad}^`);
  }
  return lines;
}

/**
 * Why `value` is refused as data, when a string or key in it holds an unpaired UTF-16 surrogate
 * (text that is no Unicode, refused by the service too): the message naming its path from `root`,
 * else null.
 */
export function unpairedSurrogateIn(value: unknown, root: string): string | null {
  const at = unpairedSurrogateAt(value, root);
  return at === null
    ? null
    : `\`${root}\` must not contain an unpaired UTF-16 surrogate (\`\\ud800\`–\`\\udfff\` alone), found at \`${at}\``;
}

/**
 * The limits a command runs under: `--step-budget` in both trace modes when given, and no trace
 * cap (a trace printed here crosses no bus).
 */
export function cliLimits(stepBudget: number | undefined): Partial<RunLimits> {
  return {
    maxTraceBytes: Infinity,
    maxReasonsBytes: Infinity,
    ...(stepBudget !== undefined && { stepBudget, tracedStepBudget: stepBudget }),
  };
}
