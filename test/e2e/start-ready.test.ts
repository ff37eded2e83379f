/**
 * "Ready" means every service answers: `npm start`'s script (scripts/start.mjs) says ready only
 * once the gateway's `/readyz` is 200 with each back-end service answering its `<group>.ping` on
 * the bus, so the first request after it is served (it was a 503 `no service answers exec.eval`
 * for about two seconds); and `/readyz` reports each dependency.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, freePort, withDatabase } from '@arbiter/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { call, removeStackData, SHARED_SERVERS, startStack, type Stack } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';
const SERVICES = ['execution', 'registry', 'governance', 'audit', 'webhooks', 'mcp'];

describe('scripts/start.mjs', () => {
  const id = randomBytes(5).toString('hex');
  const database = `arbiter_e2e_start_${id}`;
  const prefix = `e2e_start_${id}`;
  const adminKey = `arb_e2e_${randomBytes(24).toString('base64url')}`;
  let child: ChildProcess | undefined;
  let output = '';

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await removeStackData(database, prefix);
  });

  it('says ready only when every service answers: a /run sent right after it is 200', async () => {
    const port = await freePort();
    child = spawn(process.execPath, [path.join(root, 'scripts/start.mjs')], {
      cwd: root,
      env: {
        ...process.env,
        NATS_URL: SHARED_SERVERS.nats,
        REDIS_URL: SHARED_SERVERS.redis,
        DATABASE_URL: withDatabase(SHARED_SERVERS.postgres, database),
        NATS_SUBJECT_PREFIX: prefix,
        PORT: String(port),
        HOST: '127.0.0.1',
        OPS_PORT: '0',
        LOG_LEVEL: 'warn',
        POLICY_BOOTSTRAP_ADMIN_KEY: adminKey,
        POLICY_BOOTSTRAP_ORG: 'default',
        AUTH_JWT_SECRET: '',
        AUTH_ISSUER: '',
        AUTH_AUDIENCE: '',
        // start.mjs chooses the services the gateway waits for: the ones it started.
        GATEWAY_READY_SERVICES: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ready = new Promise<string>((resolve, reject) => {
      const keep = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const line = output.split('\n').find((l) => l.startsWith('start: ready'));
        if (line !== undefined) resolve(line);
      };
      child!.stdout!.on('data', keep);
      child!.stderr!.on('data', keep);
      child!.once('exit', (code) => reject(new Error(`start.mjs exited with ${code} before ready:\n${output.slice(-3000)}`)));
    });
    const line = await ready;
    expect(line).toBe(`start: ready: ${SERVICES.join(', ')} answer on the bus; the API is http://localhost:${port}`);

    // At once, no retry: the first request after "ready" is served.
    const base = { baseUrl: `http://127.0.0.1:${port}` };
    const run = await call(base, 'POST', '/run', { key: adminKey, body: { rule: RULE, data: { driver: { age: 18 } } } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.result).toBe(true);
    const readyz = await call(base, 'GET', '/readyz');
    expect(readyz.status).toBe(200);
    expect(readyz.body.checks).toEqual({
      database: 'ok',
      redis: 'ok',
      nats: 'ok',
      execution: 'ok',
      registry: 'ok',
      governance: 'ok',
      audit: 'ok',
      webhooks: 'ok',
      mcp: 'ok',
    });
  }, 180_000);
});

describe('GET /readyz', () => {
  let stack: Stack;
  afterAll(async () => stack?.stop());

  it('reports each back-end service; only the required ones (GATEWAY_READY_SERVICES) decide its status', async () => {
    stack = await startStack({ services: ['execution', 'registry', 'gateway'] });
    const up = await call(stack, 'GET', '/readyz');
    expect(up.status).toBe(200);
    expect(up.body).toEqual({
      status: 'ok',
      checks: {
        database: 'ok',
        redis: 'ok',
        nats: 'ok',
        execution: 'ok',
        registry: 'ok',
        governance: 'failed',
        audit: 'failed',
        webhooks: 'failed',
        mcp: 'failed',
      },
    });

    await stack.stopService('execution');
    const down = await call(stack, 'GET', '/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'unavailable', checks: { execution: 'failed', registry: 'ok', nats: 'ok' } });

    await stack.startService('execution');
    await eventually(async () => expect((await call(stack, 'GET', '/readyz')).status).toBe(200));
  }, 120_000);
});
