/**
 * `rules pull` and `rules push`: an org's policies, flows and groups between an Arbiter gateway
 * (`GET /export`, `POST /import`, through the `@arbiter/sdk` client) and a directory of files (see
 * bundle-files.ts). All I/O goes through {@link RemoteIo}. The API key is sent, never printed.
 */

import { Arbiter, isArbiterError } from '@arbiter/sdk';
import { BundleFileError, bundleToFiles, filesToBundle, type FileTree } from './bundle-files.js';
import { CliUsageError, ExitCode, type CommandOutput } from './output.js';

/** What pull and push need from the outside world. */
export interface RemoteIo {
  /** The `fetch` the client sends with. */
  fetch(url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }): Promise<Response>;
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

/** The SDK client for `opts`: checks the URL and finds the key (flag, else `ARBITER_API_KEY`). */
function clientOf(opts: SyncOptions, io: RemoteIo): Arbiter {
  const apiKey = opts.key ?? io.env('ARBITER_API_KEY');
  if (apiKey === undefined || apiKey === '') throw new CliUsageError('missing the API key: pass --key KEY or set ARBITER_API_KEY');
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    throw new CliUsageError(`--url \`${opts.url}\` is not a URL (e.g. http://localhost:3000)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliUsageError(`--url must be http:// or https://`);
  return new Arbiter({
    baseUrl: opts.url,
    apiKey,
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    // The client only ever passes a URL string.
    fetch: (input, init) =>
      io.fetch(input as string, {
        method: init?.method ?? 'GET',
        headers: init?.headers as Record<string, string>,
        ...(typeof init?.body === 'string' ? { body: init.body } : {}),
        ...(init?.signal ? { signal: init.signal } : {}),
      }),
  });
}

const failed = (stderr: string): CommandOutput => ({ stdout: '', stderr, code: ExitCode.failed });

/** A line for a failed call: the client's error (its detail, status and code) and the reasons it names. */
function failure(command: string, err: unknown): CommandOutput {
  if (!isArbiterError(err)) throw err;
  const reasons = (err.errors ?? [])
    .slice(0, 50)
    .map((e) => `  - ${e.message}${e.path !== undefined ? ` (${e.path})` : ''}\n`)
    .join('');
  return failed(`rules ${command}: ${err.detail} (HTTP ${err.status} ${err.code})\n${reasons}`);
}

/** `rules pull`: writes the org's bundle into `dir` as files. */
export async function runPull(opts: SyncOptions, io: RemoteIo): Promise<CommandOutput> {
  const client = clientOf(opts, io);
  let files: FileTree;
  try {
    files = bundleToFiles(await client.bundles.export());
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof BundleFileError)
      return failed(`rules pull: the export is not a bundle: ${err.message}\n`);
    return failure('pull', err);
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

/** `rules push`: sends the bundle in `dir` to `POST /import` (with `--dry-run`, the plan only) and prints the plan. */
export async function runPush(opts: SyncOptions, io: RemoteIo): Promise<CommandOutput> {
  const client = clientOf(opts, io);
  let bundle: ReturnType<typeof filesToBundle>;
  try {
    bundle = filesToBundle(await io.readTree(opts.dir), io.now());
  } catch (err) {
    if (err instanceof BundleFileError) return failed(`rules push: ${opts.dir}: ${err.message}\n`);
    return failed(`rules push: cannot read \`${opts.dir}\`: ${(err as Error).message}\n`);
  }
  let plan;
  try {
    plan = await client.bundles.import(bundle as Parameters<Arbiter['bundles']['import']>[0], { dryRun: opts.dryRun === true });
  } catch (err) {
    return failure('push', err);
  }
  const lines = plan.items.map((i) => `${i.action.padEnd(10)} ${i.type.padEnd(7)} ${i.name}${i.reason ? `  (${i.reason})` : ''}\n`);
  const summary = opts.dryRun
    ? `dry run: ${plan.created} to create, ${plan.unchanged} unchanged, ${plan.conflicts} conflicts\n`
    : `imported: ${plan.created} created, ${plan.unchanged} unchanged\n`;
  return { stdout: lines.join('') + summary, stderr: '', code: plan.conflicts > 0 ? ExitCode.failed : ExitCode.ok };
}
