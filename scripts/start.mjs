#!/usr/bin/env node
// Runs every Arbiter service on this machine, one process each, against the local NATS, Redis
// and PostgreSQL (DESIGN.md §1). Each service also starts alone: node services/<name>/dist/main.js.
// SIGINT/SIGTERM are passed on to every service, which drain and exit; if one service dies,
// the others are stopped too so a broken stack never looks healthy.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Back-end services first; the gateway last, so the API answers once what it routes to is up.
const ORDER = ['execution', 'registry', 'governance', 'audit', 'webhooks', 'mcp', 'gateway'];
const services = ORDER.filter((name) => existsSync(path.join(root, 'services', name, 'dist/main.js')));
if (services.length === 0) {
  console.error('start: no built service found; run `npm run build` first');
  process.exit(1);
}

const children = new Map();
let stopping = false;

function stopAll(code) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const child of children.values()) child.kill('SIGTERM');
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
  }, 10_000).unref();
}

for (const name of services) {
  const child = spawn(process.execPath, [path.join(root, 'services', name, 'dist/main.js')], {
    cwd: root,
    env: { ...process.env, SERVICE_NAME: name },
    stdio: 'inherit',
  });
  children.set(name, child);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      console.error(`start: ${name} exited (${signal ?? code}); stopping the stack`);
      stopAll(code || 1);
    }
    if (children.size === 0) process.exit(process.exitCode ?? 0);
  });
}
console.error(`start: running ${services.join(', ')} (Ctrl-C stops them)`);

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
