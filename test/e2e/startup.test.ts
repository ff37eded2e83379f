/**
 * Every service starts the same way (service-kit's runService): a start that cannot reach its
 * dependencies, or a bad variable, ends the process with exit code 1 and JSON log lines only, one of
 * them `fatal` saying why. Nothing here needs the machine's servers: the addresses point at closed ports.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@arbiter/test-kit';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVICES = ['execution', 'registry', 'governance', 'audit', 'webhooks', 'mcp', 'gateway'] as const;

/** Runs a service to its end; returns its exit code and every output line. */
function run(name: string, env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'services', name, 'dist/main.js')], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not exit within 45 s:\n${out}`));
    }, 45_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, lines: out.split('\n').filter((l) => l.trim() !== '') });
    });
  });
}

function parsed(lines: string[]): Array<Record<string, unknown>> {
  return lines.map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON log line: ${l}`);
    }
  });
}

describe('service start-up failures', () => {
  it.each(SERVICES)('%s with its dependencies unreachable exits 1 with one fatal JSON line', async (name) => {
    const dead = await freePort();
    const { code, lines } = await run(name, {
      NATS_URL: `nats://127.0.0.1:${dead}`,
      REDIS_URL: `redis://127.0.0.1:${dead}`,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${dead}/arbiter_unreachable`,
      AUDIT_DATABASE_URL: `postgres://postgres@127.0.0.1:${dead}/arbiter_unreachable`,
      GOVERNANCE_DATABASE_URL: `postgres://postgres@127.0.0.1:${dead}/arbiter_unreachable`,
      DB_CONNECT_TIMEOUT_MS: '500',
      REDIS_CONNECT_TIMEOUT_MS: '500',
      PORT: '0',
    });
    expect(code).toBe(1);
    const logs = parsed(lines);
    const fatal = logs.filter((l) => l.level === 60);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ service: name, msg: `${name} failed to start` });
    expect(fatal[0]!.err).toBeTruthy();
  });

  it.each(SERVICES)('%s with a bad variable exits 1 naming it', async (name) => {
    const { code, lines } = await run(name, { LOG_LEVEL: 'loud', NATS_URL: 'not a url' });
    expect(code).toBe(1);
    const [fatal] = parsed(lines);
    expect(fatal).toMatchObject({ level: 60, service: name, variables: ['LOG_LEVEL', 'NATS_URL'] });
    expect(fatal!.msg).toMatch(/^invalid configuration: /);
    expect(lines).toHaveLength(1);
  });
});
