/**
 * Argument parsing and dispatch of the `rules` CLI. All I/O goes through {@link CliIo}, so the
 * whole CLI runs in tests without spawning a process; main.ts supplies the real one.
 */

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { runCheck, runEval, runTests } from './commands.js';
import type { FileTree } from './bundle-files.js';
import { runFlowTests } from './flow-tests.js';
import { runJsonl } from './jsonl.js';
import { runPulledEval } from './pulled-eval.js';
import { CliUsageError, ExitCode, parseNow, parseStepBudget, type CommandOutput } from './output.js';
import { runPull, runPush, type RemoteIo } from './sync.js';
import { COMMAND_USAGE, MAIN_USAGE } from './usage.js';

/** The outside world as the CLI sees it. */
export interface CliIo {
  /** A file's text; `-` means all of stdin. Rejects when the file cannot be read. */
  readFile(path: string): Promise<string>;
  /** Stdin, line by line (for `eval --jsonl`). */
  stdinLines(): AsyncIterable<string>;
  /** Writes to stdout; may return a promise that settles when the stream can take more. */
  stdout(chunk: string): void | Promise<void>;
  stderr(chunk: string): void | Promise<void>;
  /** HTTP, environment and directory access for `pull` and `push` (absent: those commands are unavailable). */
  remote?: RemoteIo;
}

type Command = keyof typeof COMMAND_USAGE;
const isCommand = (name: string): name is Command => Object.hasOwn(COMMAND_USAGE, name);

const OPTIONS = {
  eval: {
    rule: { type: 'string', short: 'r' },
    data: { type: 'string', short: 'd' },
    now: { type: 'string' },
    'as-of': { type: 'string' },
    bundle: { type: 'string' },
    base: { type: 'string' },
    'step-budget': { type: 'string' },
    'no-trace': { type: 'boolean' },
    reasons: { type: 'boolean' },
    jsonl: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
  check: { help: { type: 'boolean', short: 'h' } },
  test: {
    cases: { type: 'string', short: 'c' },
    now: { type: 'string' },
    'step-budget': { type: 'string' },
    verbose: { type: 'boolean', short: 'v' },
    coverage: { type: 'boolean' },
    min: { type: 'string' },
    json: { type: 'boolean' },
    bundle: { type: 'string' },
    version: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
  pull: {
    url: { type: 'string' },
    key: { type: 'string' },
    dir: { type: 'string', default: 'rules' },
    help: { type: 'boolean', short: 'h' },
  },
  push: {
    url: { type: 'string' },
    key: { type: 'string' },
    dir: { type: 'string', default: 'rules' },
    'dry-run': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
} as const satisfies Record<Command, ParseArgsConfig['options']>;

/** Runs `rules <argv…>` and resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    await io.stderr(MAIN_USAGE);
    return ExitCode.usage;
  }
  if (name === '--help' || name === '-h') {
    await io.stdout(MAIN_USAGE);
    return ExitCode.ok;
  }
  if (name === 'help') {
    const topic = rest[0];
    if (topic === undefined) {
      await io.stdout(MAIN_USAGE);
      return ExitCode.ok;
    }
    if (isCommand(topic)) {
      await io.stdout(COMMAND_USAGE[topic]);
      return ExitCode.ok;
    }
    await io.stderr(`rules: unknown command \`${topic}\`\n\n${MAIN_USAGE}`);
    return ExitCode.usage;
  }
  if (!isCommand(name)) {
    await io.stderr(`rules: unknown command \`${name}\`\n\n${MAIN_USAGE}`);
    return ExitCode.usage;
  }
  try {
    const out = await dispatch(name, rest, io);
    if (out.stdout) await io.stdout(out.stdout);
    if (out.stderr) await io.stderr(out.stderr);
    return out.code;
  } catch (err) {
    if (!(err instanceof CliUsageError)) throw err;
    const synopsis = COMMAND_USAGE[name].split('\n\n')[0];
    const hint = err.showUsage ? `\n${synopsis}\nRun \`rules ${name} --help\` for details.\n` : '';
    await io.stderr(`rules ${name}: ${err.message}\n${hint}`);
    return ExitCode.usage;
  }
}

/** Parses a command's arguments, or throws a {@link CliUsageError}. */
function parse<C extends Command>(command: C, args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], options: OPTIONS[command], allowPositionals: true, strict: true });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) throw new CliUsageError((err as Error).message);
    throw err;
  }
}

const ok = (stdout: string): CommandOutput => ({ stdout, stderr: '', code: ExitCode.ok });

async function dispatch(command: Command, args: readonly string[], io: CliIo): Promise<CommandOutput> {
  switch (command) {
    case 'eval': {
      const { values, positionals } = parse('eval', args);
      if (values.help) return ok(COMMAND_USAGE.eval);
      if (positionals.length > 0) throw new CliUsageError(`unexpected argument \`${positionals[0]}\` (use --rule FILE --data FILE)`);
      const now = values.now === undefined ? undefined : parseNow(values.now);
      const trace = values['no-trace'] !== true;
      const stepBudget = values['step-budget'] === undefined ? undefined : parseStepBudget(values['step-budget']);
      if (values.bundle !== undefined || values.base !== undefined || values['as-of'] !== undefined)
        return evalPulled(values, io, { now, trace, stepBudget });
      if (values.jsonl) {
        if (values.rule !== undefined || values.data !== undefined)
          throw new CliUsageError('--jsonl reads rule and data from stdin; drop --rule/--data');
        await runJsonl(io.stdinLines(), (chunk) => io.stdout(chunk), {
          trace,
          ...(values.reasons === true && { reasons: true }),
          ...(now && { now }),
          ...(stepBudget !== undefined && { stepBudget }),
        });
        return ok('');
      }
      if (values.rule === undefined) throw new CliUsageError('missing --rule FILE');
      if (values.data === undefined) throw new CliUsageError('missing --data FILE (or use --jsonl)');
      if (values.rule === '-' && values.data === '-') throw new CliUsageError('--rule and --data cannot both read stdin');
      const rule = await read(io, values.rule, 'rule');
      const data = await read(io, values.data, 'data');
      return runEval({
        rule,
        data,
        ruleName: values.rule,
        dataName: values.data,
        trace,
        ...(values.reasons === true && { reasons: true }),
        ...(now && { now }),
        ...(stepBudget !== undefined && { stepBudget }),
      });
    }
    case 'check': {
      const { values, positionals } = parse('check', args);
      if (values.help) return ok(COMMAND_USAGE.check);
      if (positionals.length !== 1)
        throw new CliUsageError(positionals.length === 0 ? 'missing FILE' : `expected one FILE, got ${positionals.length}`);
      const file = positionals[0];
      return runCheck(await read(io, file, 'rule'), file);
    }
    case 'test': {
      const { values, positionals } = parse('test', args);
      if (values.help) return ok(COMMAND_USAGE.test);
      if (positionals.length !== 1)
        throw new CliUsageError(positionals.length === 0 ? 'missing the rule FILE' : `expected one rule FILE, got ${positionals.length}`);
      const file = positionals[0];
      const now = values.now === undefined ? undefined : parseNow(values.now);
      const stepBudget = values['step-budget'] === undefined ? undefined : parseStepBudget(values['step-budget']);
      if (values.min !== undefined && values.coverage !== true) throw new CliUsageError('--min needs --coverage');
      const minCoverage = values.min === undefined ? undefined : parseMinCoverage(values.min);
      if (file.endsWith('.json')) return testFlow(file, values, io, { now, stepBudget, minCoverage });
      if (values.bundle !== undefined || values.version !== undefined)
        throw new CliUsageError('--bundle and --version apply to a flow (FILE ending in .json)');
      if (values.cases === undefined) throw new CliUsageError('missing --cases FILE');
      if (file === '-' && values.cases === '-') throw new CliUsageError('the rule FILE and --cases cannot both read stdin');
      const rule = await read(io, file, 'rule');
      const cases = await read(io, values.cases, 'cases');
      return runTests({
        coverage: values.coverage === true,
        json: values.json === true,
        ...(minCoverage !== undefined && { minCoverage }),
        rule,
        cases,
        ruleName: file,
        casesName: values.cases,
        verbose: values.verbose === true,
        ...(now && { now }),
        ...(stepBudget !== undefined && { stepBudget }),
      });
    }
    case 'pull':
    case 'push': {
      const { values, positionals } = parse(command, args);
      if (values.help) return ok(COMMAND_USAGE[command]);
      if (positionals.length > 0) throw new CliUsageError(`unexpected argument \`${positionals[0]}\``);
      if (values.url === undefined) throw new CliUsageError('missing --url URL (the gateway, e.g. http://localhost:3000)');
      if (io.remote === undefined) throw new CliUsageError(`\`${command}\` is not available here`, { showUsage: false });
      const opts = { url: values.url, key: values.key, dir: values.dir };
      return command === 'pull'
        ? runPull(opts, io.remote)
        : runPush({ ...opts, dryRun: (values as { 'dry-run'?: boolean })['dry-run'] === true }, io.remote);
    }
  }
}

/**
 * `rules eval --bundle DIR --base ID --data FILE [--as-of ISO] [--now ISO]`: a pulled policy or flow
 * run by its base id, the version in effect at `--as-of`, else `--now`, else the current time.
 */
async function evalPulled(
  values: { bundle?: string; base?: string; 'as-of'?: string; rule?: string; data?: string; jsonl?: boolean; reasons?: boolean },
  io: CliIo,
  parsed: { now: Date | undefined; trace: boolean; stepBudget: number | undefined },
): Promise<CommandOutput> {
  if (values.bundle === undefined) throw new CliUsageError('--base and --as-of need --bundle DIR (a directory `rules pull` wrote)');
  if (values.base === undefined) throw new CliUsageError('missing --base ID (the base id of a policy or flow in the pulled directory)');
  if (values.jsonl === true) throw new CliUsageError('--jsonl reads rules from stdin; it does not apply to --bundle');
  if (values.rule !== undefined) throw new CliUsageError('--rule does not apply to --bundle: the pulled policy is the rule');
  if (values.data === undefined) throw new CliUsageError('missing --data FILE');
  const asOf = values['as-of'] === undefined ? undefined : parseAsOf(values['as-of']);
  if (io.remote === undefined) throw new CliUsageError('reading a pulled directory is not available here', { showUsage: false });
  let files: FileTree;
  try {
    files = await io.remote.readTree(values.bundle);
  } catch (err) {
    throw new CliUsageError(`cannot read the pulled directory \`${values.bundle}\`: ${(err as Error).message}`, { showUsage: false });
  }
  const data = await read(io, values.data, 'data');
  return runPulledEval({
    files,
    dir: values.bundle,
    baseId: values.base,
    data,
    dataName: values.data,
    current: io.remote.now(),
    trace: parsed.trace,
    ...(asOf !== undefined && { asOf }),
    ...(parsed.now !== undefined && { now: parsed.now }),
    ...(parsed.stepBudget !== undefined && { stepBudget: parsed.stepBudget }),
    ...(values.reasons === true && { reasons: true }),
  });
}

/** `--as-of ISO`: an ISO 8601 date or date-time. */
function parseAsOf(text: string): Date {
  try {
    return parseNow(text);
  } catch (err) {
    throw new CliUsageError((err as Error).message.replace(/^--now/, '--as-of'));
  }
}

/**
 * `rules test FLOW.json`: the flow's cases (`--cases`, else the tested record's saved tests), its
 * policy nodes found in the pulled directory (`--bundle DIR`, else the one FLOW.json was pulled into
 * when it sits at `<dir>/flows/<name>/flow.json`).
 */
async function testFlow(
  file: string,
  values: { cases?: string; bundle?: string; version?: string; coverage?: boolean; json?: boolean; verbose?: boolean },
  io: CliIo,
  parsed: { now: Date | undefined; stepBudget: number | undefined; minCoverage: number | undefined },
): Promise<CommandOutput> {
  if (values.verbose === true)
    throw new CliUsageError('--verbose applies to a rule FILE (a flow prints each failing case with its result)');
  const version = values.version === undefined ? undefined : parseVersion(values.version);
  const flow = await read(io, file, 'flow');
  const cases = values.cases === undefined ? undefined : await read(io, values.cases, 'cases');
  const pulledInto = /^(?:(.*)[\\/])?flows[\\/][^\\/]+[\\/]flow\.json$/.exec(file);
  const dir = values.bundle ?? (pulledInto ? (pulledInto[1] ?? '.') : undefined);
  let bundle: FileTree | undefined;
  if (dir !== undefined) {
    if (io.remote === undefined) throw new CliUsageError('reading a pulled directory is not available here', { showUsage: false });
    try {
      bundle = await io.remote.readTree(dir);
    } catch (err) {
      // A flow.json copied out of a pull (no header beside it) runs without policies unless --bundle names them.
      if (values.bundle !== undefined)
        throw new CliUsageError(`cannot read the pulled directory \`${dir}\`: ${(err as Error).message}`, { showUsage: false });
    }
  }
  return runFlowTests({
    flow,
    flowName: file,
    ...(cases !== undefined && { cases, casesName: values.cases }),
    ...(version !== undefined && { version }),
    ...(bundle !== undefined && { bundle }),
    ...(parsed.now && { now: parsed.now }),
    ...(parsed.stepBudget !== undefined && { stepBudget: parsed.stepBudget }),
    coverage: values.coverage === true,
    ...(parsed.minCoverage !== undefined && { minCoverage: parsed.minCoverage }),
    json: values.json === true,
  });
}

/** `--version N`: a version number (1 or more). */
function parseVersion(text: string): number {
  const n = Number(text);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(n))
    throw new CliUsageError(`--version must be a version number (1, 2, …), got \`${text}\``);
  return n;
}

/** `--min N`: a percentage from 0 to 100. */
function parseMinCoverage(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100)
    throw new CliUsageError(`--min must be a percentage from 0 to 100, got \`${text}\``);
  return n;
}

async function read(io: CliIo, path: string, what: string): Promise<string> {
  try {
    return await io.readFile(path);
  } catch (err) {
    throw new CliUsageError(`cannot read ${what} file \`${path}\`: ${(err as Error).message}`, { showUsage: false });
  }
}
