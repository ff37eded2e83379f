/**
 * `rules pull` and `rules push`: an org's policies, flows and groups between an Arbiter gateway
 * (`GET /export`, `POST /import`) and a directory of files (see bundle-files.ts). All I/O goes
 * through {@link RemoteIo}. The API key is sent, never printed.
 */

import { BundleFileError, bundleToFiles, filesToBundle, type FileTree } from './bundle-files.js';
import { CliUsageError, ExitCode, type CommandOutput } from './output.js';

/** What pull and push need from the outside world. */
export interface RemoteIo {
  fetch(url: string, init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal }): Promise<Response>;
  env(name: string): string | undefined;
  /** The managed files under `dir` (see `MANAGED_ENTRIES`); rejects when `dir` cannot be read. */
  readTree(dir: string): Promise<FileTree>;
  /** Replaces the managed files under `dir` with `files`; refuses a non-empty directory that was not pulled into. */
  writeTree(dir: string, files: FileTree): Promise<void>;
  now(): Date;
}

/** Options of pull and push. */
export interface SyncOptions {
  url: string;
  key?: string | undefined;
  dir: string;
  dryRun?: boolean;
  /** Deadline of the HTTP call (ms). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;

function apiKey(opts: SyncOptions, io: RemoteIo): string {
  const key = opts.key ?? io.env('ARBITER_API_KEY');
  if (key === undefined || key === '') throw new CliUsageError('missing the API key: pass --key KEY or set ARBITER_API_KEY');
  return key;
}

function endpoint(base: string, path: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new CliUsageError(`--url \`${base}\` is not a URL (e.g. http://localhost:3000)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliUsageError(`--url must be http:// or https://`);
  return `${base.replace(/\/+$/, '')}${path}`;
}

const failed = (stderr: string): CommandOutput => ({ stdout: '', stderr, code: ExitCode.failed });

/** A line for a failed HTTP answer: its status and, for an RFC 9457 problem, title, detail and reasons. */
async function httpFailure(command: string, res: Response): Promise<CommandOutput> {
  const text = await res.text().catch(() => '');
  let problem: { title?: unknown; detail?: unknown; errors?: unknown } | undefined;
  try {
    problem = JSON.parse(text) as typeof problem;
  } catch {
    problem = undefined;
  }
  const head = `rules ${command}: HTTP ${res.status}`;
  if (problem === undefined || typeof problem !== 'object' || problem === null) return failed(`${head}: ${text.slice(0, 500)}\n`);
  const title = typeof problem.title === 'string' ? `: ${problem.title}` : '';
  const detail = typeof problem.detail === 'string' ? `: ${problem.detail}` : '';
  const reasons = Array.isArray(problem.errors)
    ? problem.errors
        .slice(0, 50)
        .map(
          (e: { message?: unknown; path?: unknown }) =>
            `  - ${typeof e.message === 'string' ? e.message : JSON.stringify(e.message)}${typeof e.path === 'string' ? ` (${e.path})` : ''}\n`,
        )
        .join('')
    : '';
  return failed(`${head}${title}${detail}\n${reasons}`);
}

async function request(
  io: RemoteIo,
  command: string,
  opts: SyncOptions,
  method: string,
  path: string,
  body?: string,
): Promise<Response | CommandOutput> {
  const url = endpoint(opts.url, path);
  const headers: Record<string, string> = { 'x-api-key': apiKey(opts, io), accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await io.fetch(url, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    return failed(`rules ${command}: cannot reach ${url}: ${(err as Error).message}${cause ? ` (${cause})` : ''}\n`);
  }
}

/** `rules pull`: writes the org's bundle into `dir` as files. */
export async function runPull(opts: SyncOptions, io: RemoteIo): Promise<CommandOutput> {
  const res = await request(io, 'pull', opts, 'GET', '/export');
  if (!(res instanceof Response)) return res;
  if (!res.ok) return httpFailure('pull', res);
  let files: FileTree;
  try {
    files = bundleToFiles(JSON.parse(await res.text()));
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof BundleFileError)
      return failed(`rules pull: the export is not a bundle: ${err.message}\n`);
    throw err;
  }
  try {
    await io.writeTree(opts.dir, files);
  } catch (err) {
    return failed(`rules pull: cannot write \`${opts.dir}\`: ${(err as Error).message}\n`);
  }
  const count = (prefix: string, file: string) => [...files.keys()].filter((p) => p.startsWith(prefix) && p.endsWith(file)).length;
  return {
    stdout: `pulled ${count('policies/', '/policy.json')} policies and ${count('flows/', '/flow.json')} flows into ${opts.dir}\n`,
    stderr: '',
    code: ExitCode.ok,
  };
}

interface PlanItem {
  type: string;
  name: string;
  action: string;
  reason?: string;
}

/** `rules push`: sends the bundle in `dir` to `POST /import` (with `--dry-run`, the plan only) and prints the plan. */
export async function runPush(opts: SyncOptions, io: RemoteIo): Promise<CommandOutput> {
  let body: string;
  try {
    body = JSON.stringify(filesToBundle(await io.readTree(opts.dir), io.now()));
  } catch (err) {
    if (err instanceof BundleFileError) return failed(`rules push: ${opts.dir}: ${err.message}\n`);
    return failed(`rules push: cannot read \`${opts.dir}\`: ${(err as Error).message}\n`);
  }
  const res = await request(io, 'push', opts, 'POST', `/import?dryRun=${opts.dryRun === true}`, body);
  if (!(res instanceof Response)) return res;
  if (!res.ok) return httpFailure('push', res);
  const plan = (await res.json()) as { created: number; unchanged: number; conflicts: number; items: PlanItem[] };
  const lines = plan.items.map((i) => `${i.action.padEnd(10)} ${i.type.padEnd(7)} ${i.name}${i.reason ? `  (${i.reason})` : ''}\n`);
  const summary = opts.dryRun
    ? `dry run: ${plan.created} to create, ${plan.unchanged} unchanged, ${plan.conflicts} conflicts\n`
    : `imported: ${plan.created} created, ${plan.unchanged} unchanged\n`;
  return { stdout: lines.join('') + summary, stderr: '', code: plan.conflicts > 0 ? ExitCode.failed : ExitCode.ok };
}
