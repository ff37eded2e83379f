/**
 * The `rules eval`, `rules check` and `rules test` commands as pure functions of their inputs
 * (file contents as strings): they return stdout, stderr and the exit code. No I/O here.
 */

import {
  compile,
  isRuleParseError,
  policyChecks,
  PolicyCoverage,
  validate,
  type CompiledPolicy,
  type RuleParseError,
} from '@arbiter/rule-lang';
import { answerPolicy, compileDataSchema, RUN_DEFAULTS, resolveRun, type PolicyAnswer, type ResolvedRun } from '@arbiter/run';
import { coverageLines } from './coverage-output.js';
import {
  cliLimits,
  CliUsageError,
  ExitCode,
  describeJson,
  formatParseError,
  formatPolicyCheck,
  isJsonObject,
  parseJson,
  parseNow,
  toCliEvaluation,
  unpairedSurrogateIn,
  type CommandOutput,
} from './output.js';
import { testOutput } from './test-summary.js';

/** Inputs of {@link runEval}. */
export interface EvalInput {
  /** The rule text. */
  rule: string;
  /** The data file's text: one JSON object. */
  data: string;
  /** File names, for messages. */
  ruleName?: string;
  dataName?: string;
  /** The clock for date operators (defaults to the current time). */
  now?: Date;
  /** Build the human-readable trace (default true). */
  trace?: boolean;
  /** Steps the evaluation may take (default: the library's default for the mode). */
  stepBudget?: number;
  /** Also print why the result came out (`reasons`, default false). */
  reasons?: boolean;
  /** A pulled policy run by base id: the record picked, printed after the evaluation. */
  picked?: { policyId: string; baseId: string; version: number | null };
  /** A pulled policy's JSON Schema: data that breaks it answers `schema_mismatch`, the rule unrun, as the service answers. */
  schema?: Record<string, unknown> | null;
}

/** A usage error found in a command's input: its message on stderr, exit 2 (anything else propagates: it is a bug). */
export const usageFailure = (command: string, err: unknown): CommandOutput => {
  if (err instanceof CliUsageError) return { stdout: '', stderr: `rules ${command}: ${err.message}\n`, code: ExitCode.usage };
  throw err;
};

/** Compiles or returns the parse error (anything else propagates: it is a bug). */
function tryCompile(text: string): { policy: CompiledPolicy } | { parseError: RuleParseError } {
  try {
    return { policy: compile(text) };
  } catch (err) {
    if (isRuleParseError(err)) return { parseError: err };
    throw err;
  }
}

/**
 * `rules eval`: evaluates the rule text against the data and prints the evaluation JSON
 * `{result, outcomes, trace, error?, errorCode?, reasons?}` (2-space indent; `reasons` with `--reasons`).
 * Exit 0 when the policy was evaluated (result true or false, missing data included);
 * 1 when the rule text does not parse (the JSON, with `errorCode: "parse_error"`, is still printed);
 * 2 when the data is not a JSON object or holds an unpaired UTF-16 surrogate (text that is no
 * Unicode, which the service refuses too; a rule holding one is a parse error).
 */
export function runEval(input: EvalInput): CommandOutput {
  let data: Record<string, unknown>;
  try {
    data = evalDataOf(input.data, input.dataName);
  } catch (err) {
    return usageFailure('eval', err);
  }
  const run = evalRunOf(input);
  const extras = input.schema != null ? { schema: compileDataSchema(input.schema) } : undefined;
  const compiled = tryCompile(input.rule);
  if ('parseError' in compiled) {
    const err = compiled.parseError;
    const result = answerPolicy({ parseError: err.message }, data, run, extras);
    return { stdout: pretty(result, input.picked), stderr: formatParseError(err, input.rule, input.ruleName), code: ExitCode.failed };
  }
  return { stdout: pretty(answerPolicy(compiled, data, run, extras), input.picked), stderr: '', code: ExitCode.ok };
}

/** `rules eval`'s data: one JSON object, strings well formed; a {@link CliUsageError} naming the file otherwise. */
export function evalDataOf(text: string, dataName = 'data'): Record<string, unknown> {
  const data = parseJson(text, dataName);
  if (!isJsonObject(data)) throw new CliUsageError(`${dataName}: the data must be a JSON object, got ${describeJson(data)}`);
  const surrogate = unpairedSurrogateIn(data, 'data');
  if (surrogate !== null) throw new CliUsageError(`${dataName}: ${surrogate}`);
  return data;
}

/** The run `rules eval` makes of its options (trace, clock, reasons, step budget), by the run layer's defaults. */
export function evalRunOf(input: Pick<EvalInput, 'trace' | 'now' | 'reasons' | 'stepBudget'>): ResolvedRun {
  return resolveRun(
    {
      ...(input.trace !== undefined && { trace: input.trace }),
      ...(input.now !== undefined && { now: input.now.toISOString() }),
      ...(input.reasons === true && { flags: { reasons: true } }),
    },
    cliLimits(input.stepBudget),
  );
}

const pretty = (r: PolicyAnswer, picked?: EvalInput['picked']): string =>
  JSON.stringify({ ...toCliEvaluation(r), ...picked }, null, 2) + '\n';

/**
 * `rules check`: syntax and static checks. Prints `ok` (exit 0), or the parse error on stderr
 * (first line `Parse error: line L, column C: …`, then the source line and a caret; exit 1).
 * A policy that parses may have static-check warnings (docs/cli.md): each goes to stderr as
 * `warning[<check>]: <message>` with its place; they never change the exit code.
 */
export function runCheck(rule: string, ruleName?: string): CommandOutput {
  const { valid } = validate(rule);
  if (valid) {
    const { checks, complete } = policyChecks(rule);
    const warnings = checks.map((c) => formatPolicyCheck(c, rule, ruleName));
    if (!complete) warnings.push('note: the static checks stopped at their work bound; a warning may be missing\n');
    return { stdout: 'ok\n', stderr: warnings.join(''), code: ExitCode.ok };
  }
  // validate() only tells the message; compile again for the position and help.
  const compiled = tryCompile(rule);
  if ('parseError' in compiled) return { stdout: '', stderr: formatParseError(compiled.parseError, rule, ruleName), code: ExitCode.failed };
  // INVARIANT: validate() and compile() run the same checks; this line is unreachable.
  return { stdout: '', stderr: `${validate(rule).error ?? 'Parse error'}\n`, code: ExitCode.failed };
}

/** What a saved case expects: a result, and optionally an error code (`null`: no error). */
export interface CaseExpectation {
  result: boolean;
  /** Absent: not checked. `null`: the evaluation must have no error. A string: that `errorCode`. */
  errorCode?: string | null;
}

/** One saved case of a cases file. */
export interface TestCase {
  name: string;
  data: Record<string, unknown>;
  expect: CaseExpectation;
  /** This case's clock (ISO 8601), overriding `--now`. */
  now?: Date;
}

/**
 * Reads a cases file: a JSON array of `{name, data, expect, now?}` where `expect` is a boolean or
 * `{result: boolean, errorCode?: string | null}`. Throws a {@link CliUsageError} naming the
 * first bad case.
 */
export function parseCases(text: string, fileName = 'cases'): TestCase[] {
  return parseCaseList(parseJson(text, fileName), fileName, parseExpectation);
}

/**
 * A JSON array of cases `{name, data, expect, now?}`, each `expect` read by `expectOf` (a policy's
 * expectation, a flow's result). Throws a {@link CliUsageError} naming the first bad case.
 */
export function parseCaseList<E>(
  json: unknown,
  where: string,
  expectOf: (expect: unknown, named: string) => E,
): Array<{ name: string; data: Record<string, unknown>; expect: E; now?: Date }> {
  if (!Array.isArray(json))
    throw new CliUsageError(`${where}: expected a JSON array of cases [{"name", "data", "expect"}], got ${describeJson(json)}`);
  return json.map((raw: unknown, index) => {
    const at = `${where}: case ${index + 1}`;
    if (!isJsonObject(raw)) throw new CliUsageError(`${at}: expected an object {"name", "data", "expect"}, got ${describeJson(raw)}`);
    const { name, data, expect, now } = raw;
    if (typeof name !== 'string' || name === '')
      throw new CliUsageError(`${at}: \`name\` must be a non-empty string, got ${describeJson(name)}`);
    const named = `${at} (\`${name}\`)`;
    if (!isJsonObject(data)) throw new CliUsageError(`${named}: \`data\` must be a JSON object, got ${describeJson(data)}`);
    const surrogate = unpairedSurrogateIn(data, 'data');
    if (surrogate !== null) throw new CliUsageError(`${named}: ${surrogate}`);
    const c: { name: string; data: Record<string, unknown>; expect: E; now?: Date } = { name, data, expect: expectOf(expect, named) };
    if (now !== undefined) {
      if (typeof now !== 'string') throw new CliUsageError(`${named}: \`now\` must be an ISO 8601 string, got ${describeJson(now)}`);
      try {
        c.now = parseNow(now);
      } catch (err) {
        throw new CliUsageError(`${named}: ${(err as Error).message.replace(/^--now/, '`now`')}`);
      }
    }
    return c;
  });
}

function parseExpectation(expect: unknown, where: string): CaseExpectation {
  if (typeof expect === 'boolean') return { result: expect };
  const bad = () =>
    new CliUsageError(
      `${where}: \`expect\` must be true, false or {"result": boolean, "errorCode"?: string | null}, got ${JSON.stringify(expect) ?? 'nothing'}`,
    );
  if (!isJsonObject(expect) || typeof expect.result !== 'boolean') throw bad();
  const extra = Object.keys(expect).filter((k) => k !== 'result' && k !== 'errorCode');
  if (extra.length > 0) throw new CliUsageError(`${where}: \`expect\` has unknown key \`${extra[0]}\` (allowed: result, errorCode)`);
  if (!('errorCode' in expect)) return { result: expect.result };
  const code = expect.errorCode;
  if (code !== null && typeof code !== 'string') throw bad();
  return { result: expect.result, errorCode: code };
}

/** Inputs of {@link runTests}. */
export interface TestInput {
  rule: string;
  cases: string;
  ruleName?: string;
  casesName?: string;
  /** The clock for cases without their own `now`. */
  now?: Date;
  /** Print the trace under each failing case. */
  verbose?: boolean;
  /** Steps each case may take; the same with and without `verbose` (default DEFAULT_STEP_BUDGET). */
  stepBudget?: number;
  /** Also report which conditions the cases cover (both ways), quantifiers and references. */
  coverage?: boolean;
  /** With `coverage`: fail (exit 1) below this percentage. */
  minCoverage?: number;
  /** Print one JSON document (cases, counts and, with `coverage`, the coverage report) instead of lines. */
  json?: boolean;
}

/**
 * `rules test`: runs saved cases against the rule. One line per case (`✓ name` or
 * `✗ name: expected …, got …`), then `N passed, M failed`. Exit 0 when all pass, 1 when any
 * fails or the rule does not parse, 2 when the cases file is unreadable or malformed.
 */
export function runTests(input: TestInput): CommandOutput {
  let cases: TestCase[];
  try {
    cases = parseCases(input.cases, input.casesName);
  } catch (err) {
    return usageFailure('test', err);
  }
  const compiled = tryCompile(input.rule);
  if ('parseError' in compiled)
    return { stdout: '', stderr: formatParseError(compiled.parseError, input.rule, input.ruleName), code: ExitCode.failed };
  const out: string[] = [];
  const results: Array<{ name: string; passed: boolean; expected: CaseExpectation; got: { result: boolean; errorCode: string | null } }> =
    [];
  const coverage = input.coverage === true ? new PolicyCoverage(compiled.policy, input.rule) : null;
  for (const c of cases) {
    const now = c.now ?? input.now;
    const trace = input.verbose === true && input.json !== true;
    // The untraced budget either way: --verbose must not change which cases pass.
    const run = resolveRun(
      { trace, ...(now !== undefined && { now: now.toISOString() }) },
      cliLimits(input.stepBudget ?? RUN_DEFAULTS.stepBudget),
    );
    const options = run.now === undefined ? { stepBudget: run.stepBudget } : { now: run.now, stepBudget: run.stepBudget };
    // A coverage run answers as a plain untraced run (the rule-lang coverage test checks it).
    const r: PolicyAnswer = coverage !== null && !trace ? coverage.run(c.data, options) : answerPolicy(compiled, c.data, run);
    if (coverage !== null && trace) coverage.run(c.data, options);
    const got = { result: r.result, errorCode: r.errorCode ?? null };
    const ok = got.result === c.expect.result && (c.expect.errorCode === undefined || c.expect.errorCode === got.errorCode);
    results.push({ name: c.name, passed: ok, expected: c.expect, got });
    if (ok) {
      out.push(`✓ ${c.name}`);
      continue;
    }
    out.push(`✗ ${c.name}: expected ${describeExpectation(c.expect)}, got ${describeActual(r)}`);
    if (trace) for (const line of r.trace) out.push(`    ${line}`);
  }
  return testOutput({
    lines: out,
    cases: results,
    coverage: coverage?.report(),
    coverageLines,
    minCoverage: input.minCoverage,
    json: input.json,
  });
}

function describeExpectation(e: CaseExpectation): string {
  if (e.errorCode === undefined) return String(e.result);
  return `${e.result} with ${e.errorCode === null ? 'no error' : `errorCode ${e.errorCode}`}`;
}

function describeActual(r: PolicyAnswer): string {
  return r.error === undefined ? `${r.result}` : `${r.result} (error ${r.errorCode ?? ''}: ${r.error})`;
}
