#!/usr/bin/env node
// Runs every Arbiter service on this machine, one process each, against the local NATS, Redis
// and PostgreSQL (docs/architecture.md). Each service also starts alone: node services/<name>/dist/main.js.
// SIGINT/SIGTERM are passed on to every service, which drain and exit; if one service dies,
// the others are stopped too so a broken stack never looks healthy.
// "ready" is printed once the gateway's /readyz is 200 with every service started here answering
// on the bus (its GATEWAY_READY_SERVICES is set to them): a request sent after it is served.
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
const backEnds = services.filter((name) => name !== 'gateway');
/** How often readiness is asked, and how often a wait that goes on says what it waits for. */
const POLL_MS = 200;
const REPORT_EVERY_MS = 5_000;

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

const env = {
  ...process.env,
  // Unset or empty: the services started here.
  GATEWAY_READY_SERVICES: process.env.GATEWAY_READY_SERVICES || backEnds.join(',') || 'none',
};
for (const name of services) {
  const child = spawn(process.execPath, [path.join(root, 'services', name, 'dist/main.js')], {
    cwd: root,
    env: { ...env, SERVICE_NAME: name },
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

/** The gateway's readiness: `{status, checks}` of `/readyz`, or why it did not answer. */
async function readiness(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return { ok: res.status === 200, body: await res.json() };
  } catch (err) {
    return { ok: false, body: { error: err instanceof Error ? err.message : String(err) } };
  }
}

if (services.includes('gateway')) {
  const port = process.env.PORT ?? '8080';
  const host = process.env.HOST && !['0.0.0.0', '::'].includes(process.env.HOST) ? process.env.HOST : '127.0.0.1';
  const shown = host === '127.0.0.1' ? 'localhost' : host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/readyz`;
  let lastReport = Date.now();
  for (;;) {
    if (stopping) break;
    const { ok, body } = await readiness(url);
    if (ok) {
      console.error(`start: ready: ${backEnds.join(', ')} answer on the bus; the API is http://${shown}:${port}`);
      break;
    }
    if (Date.now() - lastReport >= REPORT_EVERY_MS) {
      lastReport = Date.now();
      const waiting = body.checks ? Object.keys(body.checks).filter((k) => body.checks[k] !== 'ok') : [];
      console.error(`start: not ready yet: ${waiting.length > 0 ? `waiting for ${waiting.join(', ')}` : (body.error ?? 'no answer')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
