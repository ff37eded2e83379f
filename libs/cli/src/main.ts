#!/usr/bin/env node
/**
 * The `rules` executable: wires process argv, stdin, stdout, the file system and `fetch` to
 * {@link runCli}. The only module of @arbiter/cli that does I/O.
 */

import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { text } from 'node:stream/consumers';
import { ExitCode } from './output.js';
import { runCli, type CliIo } from './run.js';
import { readTree, writeTree } from './tree-fs.js';

/** Writes to a stream, waiting for 'drain' when its buffer is full. */
function writer(stream: NodeJS.WriteStream): (chunk: string) => void | Promise<void> {
  return (chunk) => (stream.write(chunk) ? undefined : once(stream, 'drain').then(() => undefined));
}

// A closed pipe (`rules eval --jsonl ... | head`) is a normal end, not a crash.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const io: CliIo = {
  readFile: (path) => (path === '-' ? text(process.stdin) : readFile(path, 'utf8')),
  stdinLines: () => createInterface({ input: process.stdin, crlfDelay: Infinity }),
  stdout: writer(process.stdout),
  stderr: writer(process.stderr),
  remote: {
    fetch: (url, init) => fetch(url, init),
    env: (name) => process.env[name],
    readTree,
    writeTree,
    now: () => new Date(),
  },
};

try {
  process.exitCode = await runCli(process.argv.slice(2), io);
} catch (err) {
  process.stderr.write(`rules: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = ExitCode.internal;
}
