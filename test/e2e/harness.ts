/**
 * Starts the whole stack from the built services (`services/<name>/dist/main.js`) on free ports,
 * with its own PostgreSQL database, NATS subject prefix and Redis key prefix, against the real
 * servers of this machine. Used by every end-to-end suite.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { deadEventStreamName, eventStreamName } from '@arbiter/contracts';
import { natsServers } from '@arbiter/service-kit';
import { deleteRedisKeys, eventually, freePort, testServers, withDatabase } from '@arbiter/test-kit';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The servers every stack shares (each with its own database, prefixes and stream): see test-kit. */
const { postgres: PG_ADMIN_URL, redis: REDIS_URL, nats: NATS_URL } = testServers();
export { PG_ADMIN_URL };

export type ServiceName = 'execution' | 'registry' | 'governance' | 'audit' | 'webhooks' | 'mcp' | 'gateway';

/** A running stack; `stop()` ends every process and removes the database and keys it made. */
export interface Stack {
  baseUrl: string;
  adminKey: string;
  orgId: string;
  jwtSecret: string;
  issuer: string;
  audience: string;
  env: Record<string, string>;
  /** The API address of a gateway replica (`baseUrl` is replica 1's). */
  gatewayUrl(opts?: ReplicaOption): string;
  /** Address of a service's ops server (`/healthz`, `/readyz`, `/metrics`). */
  opsUrl(name: ServiceName, opts?: ReplicaOption): string;
  /** Address of an mcp replica's own HTTP port (`MCP_HTTP_PORT`; only with {@link StackOptions.mcpHttp}). */
  mcpUrl(opts?: ReplicaOption): string;
  /** Last log lines of a service (for assertions and failure messages). */
  logs(name: ServiceName, opts?: ReplicaOption): string;
  /** Process id of a running service (benchmarks read its CPU time from `/proc/<pid>/stat`). */
  pid(name: ServiceName, opts?: ReplicaOption): number | undefined;
  stopService(name: ServiceName, opts?: ReplicaOption): Promise<void>;
  /** Kills a service process with SIGKILL (no drain, no shutdown hooks) and waits for it to be gone. */
  killService(name: ServiceName, opts?: ReplicaOption): Promise<void>;
  /**
   * Starts a service; `{replica: 2}` starts a second process beside the first: a back-end service's
   * joins the same queue group, a gateway's serves the same API on its own port ({@link gatewayUrl}).
   */
  startService(name: ServiceName, opts?: ReplicaOption): Promise<void>;
  /** Runs `services/gateway/dist/admin.js` with the stack's environment. */
  admin(args: string[]): { status: number; stdout: string; stderr: string };
  stop(): Promise<void>;
}

/** Which process of a service: replica 1 (the default) is the one `startStack` starts. */
export interface ReplicaOption {
  replica?: number;
}

/** Key of a service process: `execution` for replica 1, `execution#2` for the second. */
const processKey = (name: ServiceName, opts?: ReplicaOption): string => ((opts?.replica ?? 1) === 1 ? name : `${name}#${opts!.replica}`);

export interface StackOptions {
  services?: ServiceName[];
  env?: Record<string, string>;
  /** Variables for one service only, over `env` (e.g. each service's own NATS user). */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Extra node flags for every service process (e.g. `--cpu-prof` when profiling). */
  nodeArgs?: string[];
  /** Give each mcp process its own HTTP port (`MCP_HTTP_PORT`), at {@link Stack.mcpUrl}. */
  mcpHttp?: boolean;
}

/** Polls `url` until it answers 200 or the deadline passes. */
export async function waitForOk(url: string, timeoutMs = 30_000, headers?: Record<string, string>, child?: ChildProcess): Promise<void> {
  let outcome: 'ok' | 'exited';
  try {
    outcome = await eventually(
      async () => {
        if (child && child.exitCode !== null) return 'exited' as const;
        const res = await fetch(url, headers ? { headers } : undefined);
        if (res.status !== 200) throw new Error(`status ${res.status}`);
        return 'ok' as const;
      },
      { timeoutMs, intervalMs: 150 },
    );
  } catch (err) {
    throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (${(err as Error).message})`, { cause: err });
  }
  if (outcome === 'exited') throw new Error(`exited with ${child?.exitCode} before answering ${url}`);
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const services = options.services ?? ['execution', 'gateway'];
  for (const s of services) {
    if (!existsSync(path.join(root, 'services', s, 'dist/main.js'))) {
      throw new Error(`services/${s}/dist/main.js is missing: run \`npm run build\` first (npm test does)`);
    }
  }
  const id = randomBytes(5).toString('hex');
  const database = `arbiter_e2e_${id}`;
  const prefix = `e2e_${id}`;
  const port = await freePort();
  const adminKey = `arb_e2e_${randomBytes(24).toString('base64url')}`;
  const jwtSecret = randomBytes(32).toString('hex');
  const issuer = 'https://idp.e2e.example';
  const audience = 'arbiter-e2e';
  const env: Record<string, string> = {
    NATS_URL,
    REDIS_URL,
    // The governance, audit and webhooks databases (`<database>_governance`, `_audit`, `_webhooks`) and the
    // gateway's Redis prefix (`<prefix>:gateway:`) follow these two, as they do for any stack.
    DATABASE_URL: withDatabase(PG_ADMIN_URL, database),
    NATS_SUBJECT_PREFIX: prefix,
    LOG_LEVEL: 'info',
    PORT: String(port),
    HOST: '127.0.0.1',
    POLICY_BOOTSTRAP_ADMIN_KEY: adminKey,
    POLICY_BOOTSTRAP_ORG: 'acme',
    AUTH_JWT_SECRET: jwtSecret,
    AUTH_ISSUER: issuer,
    AUTH_AUDIENCE: audience,
    RATE_LIMIT_MAX: '100000',
    // Publish checks and schema compiles have a 1 s deadline by default; on a loaded 2-core machine
    // a check worker may wait that long for a core. No e2e test is about that deadline.
    REGISTRY_CHECK_TIMEOUT_MS: '15000',
    // The gateway is ready once the stack's own back-end services answer (it starts last).
    GATEWAY_READY_SERVICES: services.filter((s) => s !== 'gateway').join(',') || 'none',
    ...options.env,
  };
  const children = new Map<string, ChildProcess>();
  const output = new Map<string, string[]>();
  /** Each process's ops port, picked just before it first starts (a port picked early may be taken meanwhile). */
  const opsPorts = new Map<string, number>();
  /** The HTTP port of each gateway process (`gateway` is `port`). */
  const gatewayPorts = new Map<string, number>([['gateway', port]]);
  /** The own HTTP port of each mcp process, with `mcpHttp`. */
  const mcpPorts = new Map<string, number>();

  /**
   * Starts a service; a free port can be taken by another process between `freePort` and the
   * service's listen (an outgoing connection's ephemeral port), so a start that failed on a taken
   * ops port is tried again on a new one.
   */
  const startService = async (name: ServiceName, opts?: ReplicaOption): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startServiceOnce(name, opts);
      } catch (err) {
        const key = processKey(name, opts);
        if (
          attempt >= 3 ||
          !(err instanceof Error) ||
          !err.message.includes(`EADDRINUSE: address already in use 0.0.0.0:${opsPorts.get(key)}`)
        )
          throw err;
        children.delete(key);
        opsPorts.delete(key);
      }
    }
  };

  const startServiceOnce = async (name: ServiceName, opts?: ReplicaOption): Promise<void> => {
    const key = processKey(name, opts);
    if (!opsPorts.has(key)) opsPorts.set(key, await freePort());
    if (name === 'gateway' && !gatewayPorts.has(key)) gatewayPorts.set(key, await freePort());
    if (name === 'mcp' && options.mcpHttp === true && !mcpPorts.has(key)) mcpPorts.set(key, await freePort());
    const lines: string[] = [];
    output.set(key, lines);
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), path.join(root, 'services', name, 'dist/main.js')], {
      cwd: root,
      env: {
        ...process.env,
        ...env,
        PORT: name === 'gateway' ? String(gatewayPorts.get(key)) : '0',
        OPS_PORT: String(opsPorts.get(key)),
        ...(mcpPorts.has(key) ? { MCP_HTTP_PORT: String(mcpPorts.get(key)), MCP_HTTP_HOST: '127.0.0.1' } : {}),
        ...options.serviceEnv?.[name],
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (lines.length > 500) lines.splice(0, lines.length - 500);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    children.set(key, child);
    const ready = name === 'gateway' ? `http://127.0.0.1:${gatewayPorts.get(key)}/readyz` : `http://127.0.0.1:${opsPorts.get(key)}/readyz`;
    await waitForOk(ready, 30_000, undefined, child).catch((err: Error) => {
      throw new Error(`${key}: ${err.message}\n--- ${key} log ---\n${lines.slice(-30).join('\n')}`);
    });
  };

  const stopService = (name: ServiceName, opts?: ReplicaOption): Promise<void> => stopProcess(processKey(name, opts));

  const killService = async (name: ServiceName, opts?: ReplicaOption): Promise<void> => {
    const key = processKey(name, opts);
    const child = children.get(key);
    if (!child) return;
    children.delete(key);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  };

  const stopProcess = async (key: string): Promise<void> => {
    const child = children.get(key);
    if (!child) return;
    children.delete(key);
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  const stop = async (): Promise<void> => {
    await Promise.all([...children.keys()].map((key) => stopProcess(key)));
    await removeStackData(database, prefix, env.NATS_URL);
  };

  try {
    for (const s of services) await startService(s);
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    adminKey,
    orgId: 'acme',
    jwtSecret,
    issuer,
    audience,
    env,
    gatewayUrl: (opts) => `http://127.0.0.1:${gatewayPorts.get(processKey('gateway', opts))}`,
    opsUrl: (name, opts) => `http://127.0.0.1:${opsPorts.get(processKey(name, opts))}`,
    mcpUrl: (opts) => {
      const mcpPort = mcpPorts.get(processKey('mcp', opts));
      if (mcpPort === undefined) throw new Error('this stack has no mcp HTTP port: start it with `mcpHttp: true`');
      return `http://127.0.0.1:${mcpPort}`;
    },
    logs: (name, opts) => (output.get(processKey(name, opts)) ?? []).join('\n'),
    pid: (name, opts) => children.get(processKey(name, opts))?.pid,
    stopService,
    killService,
    startService,
    admin: (args) => {
      const run = spawnSync(process.execPath, [path.join(root, 'services/gateway/dist/admin.js'), ...args], {
        cwd: root,
        env: { ...process.env, ...env },
        encoding: 'utf8',
      });
      return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
    },
    stop,
  };
}

/** The servers' addresses every stack uses by default (each with its own database and prefixes). */
export const SHARED_SERVERS = { postgres: PG_ADMIN_URL, redis: REDIS_URL, nats: NATS_URL };

/** Removes what a stack made: its four databases, its Redis keys and its event streams. */
export async function removeStackData(database: string, prefix: string, natsUrl: string = NATS_URL): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.query(`DROP DATABASE IF EXISTS ${database}_audit WITH (FORCE)`);
    await admin.query(`DROP DATABASE IF EXISTS ${database}_governance WITH (FORCE)`);
    await admin.query(`DROP DATABASE IF EXISTS ${database}_webhooks WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  await deleteRedisKeys(REDIS_URL, `${prefix}:`);
  await deleteEventStream(prefix, natsUrl).catch((err: unknown) => {
    // A stack on its own NATS (stopped by its test, or with credentials) has nothing to clean here.
    if (natsUrl === NATS_URL) throw err;
  });
}

/** Deletes the JetStream events stream of a stack's subject prefix (made by the registry) and the audit service's dead letters, if any. */
async function deleteEventStream(prefix: string, natsUrl: string): Promise<void> {
  const nc = await connect({ servers: natsServers(natsUrl) });
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of [eventStreamName(prefix), deadEventStreamName(prefix)]) {
      await jsm.streams.delete(name).catch((err: unknown) => {
        if (!(err instanceof JetStreamApiError) || err.code !== 10059) throw err; // 10059: stream not found
      });
    }
  } finally {
    await nc.close();
  }
}

/** Small JSON HTTP client for the tests. */
export async function call(
  stack: Pick<Stack, 'baseUrl'>,
  method: string,
  url: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== undefined) headers['x-api-key'] = opts.key;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const res = await fetch(`${stack.baseUrl}${url}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A bearer token of user `sub` in `org` (the stack's org by default), signed with the stack's test secret. */
export function bearerToken(
  stack: Pick<Stack, 'orgId' | 'issuer' | 'audience' | 'jwtSecret'>,
  sub: string,
  org = stack.orgId,
): Promise<string> {
  return new SignJWT({ org })
    .setSubject(sub)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(stack.issuer)
    .setAudience(stack.audience)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(stack.jwtSecret));
}

/** Makes `userId` a member of the stack's org with `role` and returns a key of theirs with `scopes` (made with their bearer token). */
export async function memberKey(stack: Stack, userId: string, role: string, scopes: string[]): Promise<string> {
  const put = await call(stack, 'PUT', `/users/${userId}`, { key: stack.adminKey, body: { role } });
  if (put.status !== 200 && put.status !== 201) throw new Error(`PUT /users/${userId}: ${put.status} ${JSON.stringify(put.body)}`);
  const res = await call(stack, 'POST', '/apikeys', {
    headers: { authorization: `Bearer ${await bearerToken(stack, userId)}` },
    body: { name: `${userId}-key`, scopes },
  });
  if (res.status !== 201) throw new Error(`POST /apikeys as ${userId}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.key as string;
}
