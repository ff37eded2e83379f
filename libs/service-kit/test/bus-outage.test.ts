import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isArbiterError, type ArbiterError } from '@arbiter/contracts';
import { eventually, freePort, probe } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectBus, defineEndpoint, type Bus } from '../src/bus.js';
import { memoryLogger, randomPrefix } from './helpers.js';

// The test's own nats-server on a free port, killed and restarted: the shared server is never touched.
const { logger } = memoryLogger('bus-outage-test');
const prefix = randomPrefix();
const Reply = z.object({ ok: z.boolean() });
let port: number;
let dir: string;
let nats: ChildProcess | undefined;
let server: Bus;
let client: Bus;

async function startNats(): Promise<void> {
  nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-sd', dir], { stdio: 'ignore' });
  await eventually(async () => {
    if (!(await probe('nats', `nats://127.0.0.1:${port}`))) throw new Error('nats-server did not start');
  }, 5000);
}

async function stopNats(): Promise<void> {
  const proc = nats;
  nats = undefined;
  if (!proc || proc.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

beforeAll(async () => {
  port = await freePort();
  dir = mkdtempSync(path.join(tmpdir(), 'bus-outage-'));
  await startNats();
  const url = `nats://127.0.0.1:${port}`;
  server = await connectBus({ url, prefix, name: 'outage-server', logger });
  client = await connectBus({ url, prefix, name: 'outage-client', logger });
  await server.serve({
    name: 'outage',
    version: '1.0.0',
    endpoints: { ping: defineEndpoint({ subject: 'outage.ping', request: z.object({}), handler: async () => ({ ok: true }) }) },
  });
});

afterAll(async () => {
  await stopNats();
  await Promise.allSettled([client?.nc.close(), server?.nc.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('Bus while NATS is down', () => {
  it('fails fast with dependency_unavailable instead of waiting the deadline, and recovers when NATS is back', async () => {
    expect(await client.request('outage.ping', {}, Reply)).toEqual({ ok: true });
    await stopNats();
    await eventually(() => expect(client.connected()).toBe(false), 5000);

    // A request that waited for its deadline would outlive the test's own time-out (30 s).
    let err: ArbiterError | undefined;
    try {
      await client.request('outage.ping', {}, Reply, { timeoutMs: 60_000 });
    } catch (e) {
      if (isArbiterError(e)) err = e;
    }
    expect([err?.code, err?.status]).toEqual(['dependency_unavailable', 503]);
    expect(err?.message).toContain('disconnected');

    await startNats();
    await eventually(() => expect([client.connected(), server.connected()]).toEqual([true, true]), 10_000);
    const reply = await eventually(() => client.request('outage.ping', {}, Reply, { timeoutMs: 500 }), 5000);
    expect(reply).toEqual({ ok: true });
  }, 30_000);
});
