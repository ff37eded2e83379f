/**
 * End-to-end: the stack on a NATS server that requires credentials, with the
 * per-service users and subject permissions of deploy/nats/nats-server.conf. Every service proves
 * itself with its own user; a run, a publish and an MCP call work; a client without a password is
 * refused, and a service's user cannot reach subjects outside its list.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deadEventStreamName, deadEventSubject, eventStreamName } from '@arbiter/contracts';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventually, freePort } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type ServiceName, type Stack } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVICES: ServiceName[] = ['execution', 'registry', 'governance', 'audit', 'webhooks', 'mcp', 'gateway'];
/** Every user of the file has a password. */
const USERS = SERVICES;
type User = (typeof USERS)[number];
const passwords = Object.fromEntries(USERS.map((u) => [u, `p${randomBytes(12).toString('hex')}`])) as Record<User, string>;
const prefix = `natsauth_${randomBytes(4).toString('hex')}`;
const streamName = eventStreamName(prefix);

let natsUrl: string;
let nats: ChildProcess;
let dir: string;
let stack: Stack;

/** deploy/nats/nats-server.conf for this test's prefix, port and store. */
function configFor(port: number, storeDir: string): string {
  return readFileSync(path.join(root, 'deploy/nats/nats-server.conf'), 'utf8')
    .replaceAll('"arbiter.', `"${prefix}.`)
    .replaceAll('ARBITER_EVENTS', streamName)
    .replace(/^port: 4222$/m, `port: ${port}\nhost: 127.0.0.1`)
    .replace('"/data/jetstream"', JSON.stringify(storeDir));
}

/** Starts nats-server with the file; a server that exits (its port taken meanwhile) is retried on another port. */
async function startNats(): Promise<void> {
  dir = mkdtempSync(path.join(tmpdir(), 'arbiter-nats-auth-'));
  const env = { ...process.env };
  for (const u of USERS) env[`${u.toUpperCase()}_NATS_PASSWORD`] = passwords[u];
  let lastError = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const conf = path.join(dir, 'nats.conf');
    writeFileSync(conf, configFor(port, path.join(dir, 'js')));
    const child = spawn('nats-server', ['-c', conf], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const stderr: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
    nats = child;
    natsUrl = `nats://127.0.0.1:${port}`;
    // Up once a client gets in; a server that exited is not waited for.
    const up = await eventually(
      async () => {
        if (child.exitCode !== null) return false;
        const probe = await connect({ servers: natsUrl, user: 'registry', pass: passwords.registry, timeout: 1000 });
        await probe.close();
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    ).catch((err: unknown) => {
      lastError = String(err);
      return false;
    });
    if (up) return;
    child.kill('SIGKILL');
    lastError = `${lastError}\n${stderr.join('').slice(-2000)}`;
  }
  throw new Error(`nats-server with deploy/nats/nats-server.conf did not start: ${lastError}`);
}

const as = (user: User): Promise<NatsConnection> => connect({ servers: natsUrl, user, pass: passwords[user] });

beforeAll(async () => {
  await startNats();
  stack = await startStack({
    services: SERVICES,
    env: { NATS_URL: natsUrl, NATS_SUBJECT_PREFIX: prefix },
    serviceEnv: Object.fromEntries(SERVICES.map((s) => [s, { NATS_USER: s, NATS_PASSWORD: passwords[s] }])),
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  nats?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('NATS with per-service users and subject permissions', () => {
  it('runs the whole stack: create, publish, stored run, MCP, events in the stream', async () => {
    const key = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', {
      key,
      body: { name: 'adult', rule: 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const published = await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key, body: { status: 'published' } });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    const run = await call(stack, 'POST', `/run/policy/${created.body.baseId}`, { key, body: { applicant: { age: 20 } } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.result).toBe(true);

    const mcp = await call(stack, 'POST', '/mcp', {
      key,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
    expect(mcp.status, JSON.stringify(mcp.body)).toBe(200);

    // The audit service, as its own user, consumes the stream and answers GET /audit.
    await eventually(
      async () => {
        const trail = await call(stack, 'GET', '/audit', { key });
        expect(trail.status, JSON.stringify(trail.body)).toBe(200);
        expect((trail.body.items as Array<{ kind: string }>).map((e) => e.kind)).toEqual(expect.arrayContaining(['created', 'published']));
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );

    // The audit user may read the stream's state (its consumer's subjects); created + published at least.
    const nc = await as('audit');
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2000 });
      await eventually(async () => expect((await jsm.streams.info(streamName)).state.messages).toBeGreaterThanOrEqual(2), {
        timeoutMs: 15_000,
        intervalMs: 200,
      });
      // It made its dead-letter stream and may park a message there.
      expect((await jsm.streams.info(deadEventStreamName(prefix))).config.subjects).toEqual([deadEventSubject(prefix)]);
      const parked = await jetstream(nc, { timeout: 2000 }).publish(deadEventSubject(prefix), '{}');
      expect(parked.stream).toBe(deadEventStreamName(prefix));
    } finally {
      await nc.close();
    }
  }, 60_000);

  it('runs a governed publish: the governance user serves reviews and reads the registry', async () => {
    const key = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', {
      key,
      body: { name: 'governed', rule: 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await call(stack, 'PUT', '/org/settings', { key, body: { governanceApproval: true } })).status).toBe(200);
    try {
      const submitted = await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key, body: { status: 'published' } });
      expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
      const review = await call(stack, 'GET', `/policy/${created.body.policyId}/review`, { key });
      expect(review.body).toMatchObject({ state: 'pending_approval', requestedBy: 'admin' });
      // the admin made the request: separation of duties, answered by the governance service
      expect((await call(stack, 'POST', `/policy/${created.body.policyId}/review/approve`, { key })).body.code).toBe(
        'separation_of_duties',
      );
    } finally {
      await call(stack, 'PUT', '/org/settings', { key, body: { governanceApproval: false } });
    }
  }, 60_000);

  it('refuses a client without credentials, or with a wrong password', async () => {
    await expect(connect({ servers: natsUrl, timeout: 2000 })).rejects.toThrow(/authorization/i);
    await expect(connect({ servers: natsUrl, user: 'gateway', pass: 'wrong', timeout: 2000 })).rejects.toThrow(/authorization/i);
  });

  it("keeps each service's user to its own subjects", async () => {
    // The mcp service may call execution, but not publish events nor answer as the registry.
    const mcp = await as('mcp');
    const execution = await as('execution');
    try {
      const denied: string[] = [];
      void (async () => {
        for await (const s of mcp.status()) if (s.type === 'error') denied.push(String(s.error));
      })();
      mcp.publish(`${prefix}.events.policy.created`, 'forged');
      const sub = mcp.subscribe(`${prefix}.registry.policy.get`);
      await mcp.flush();
      await expect(sub.closed).resolves.toBeInstanceOf(Error);
      await eventually(() => {
        expect(denied.join('\n')).toMatch(/permissions violation for publish/i);
        expect(denied.join('\n')).toMatch(/permissions violation for subscription/i);
      }, 5000);
      // Execution asks the registry only to resolve records, never to change them.
      await expect(execution.request(`${prefix}.registry.policy.delete`, '{}', { timeout: 1500 })).rejects.toThrow();
    } finally {
      await mcp.close();
      await execution.close();
    }
  }, 30_000);
});
