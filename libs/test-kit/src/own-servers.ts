/**
 * A redis-server or nats-server process of the test's own, on a free port, for fault tests that
 * kill, freeze (SIGSTOP) and restart a server: never the shared servers other tests and helpers use.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually, freePort } from './helpers.js';
import { probe } from './servers.js';

export interface OwnServer {
  readonly url: string;
  readonly port: number;
  /** The running process; undefined while killed. */
  readonly process: ChildProcess | undefined;
  /** SIGKILL, as a crash; {@link start} brings it back on the same port (and, for NATS, the same store). */
  kill(): Promise<void>;
  /** Starts it again after {@link kill}, and waits until it accepts connections. */
  start(): Promise<void>;
  /** SIGSTOP: the server keeps its connections but answers nothing. */
  freeze(): void;
  /** SIGCONT after {@link freeze}. */
  thaw(): void;
  /** Ends the process and removes its files. */
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

class OwnProcess implements OwnServer {
  process: ChildProcess | undefined;
  readonly url: string;

  constructor(
    private readonly kind: 'redis' | 'nats',
    private readonly command: string,
    private readonly args: string[],
    readonly port: number,
    private readonly dir: string,
  ) {
    this.url = `${kind}://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    if (this.process) return;
    const child = spawn(this.command, this.args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.process = child;
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
    await Promise.race([
      spawnError,
      eventually(
        async () => {
          if (child.exitCode !== null) throw new Error(`${this.command} exited with ${child.exitCode}: ${stderr}`);
          if (!(await probe(this.kind, this.url, 500)))
            throw new Error(`${this.command} on port ${this.port} did not answer within 10 s: ${stderr}`);
        },
        { timeoutMs: 10_000 },
      ),
    ]);
  }

  async kill(): Promise<void> {
    const child = this.process;
    if (!child) return;
    this.process = undefined;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited(child);
  }

  freeze(): void {
    this.process?.kill('SIGSTOP');
  }

  thaw(): void {
    this.process?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function startOwn(kind: 'redis' | 'nats', command: string, args: (port: number, dir: string) => string[]): Promise<OwnServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), `test-kit-${kind}-`));
  const server = new OwnProcess(kind, command, args(port, dir), port, dir);
  try {
    await server.start();
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

/** `redis-server` on a free port, without persistence; `extraArgs` such as `['--requirepass', pw]`. */
export function startRedisServer(extraArgs: readonly string[] = []): Promise<OwnServer> {
  return startOwn('redis', 'redis-server', (port, dir) => [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    ...extraArgs,
  ]);
}

/** `nats-server -js` on a free port, its JetStream store in a temporary directory (kept across restarts). */
export function startNatsServer(extraArgs: readonly string[] = []): Promise<OwnServer> {
  return startOwn('nats', 'nats-server', (port, dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, ...extraArgs]);
}

/** One node of a {@link NatsCluster}: an {@link OwnServer} with its server name and monitoring address. */
export interface NatsClusterNode extends OwnServer {
  /** The server name (`-n`): what JetStream names as a stream's leader or replica. */
  readonly name: string;
  /** The node's HTTP monitoring address (`/healthz`, `/connz`, `/jsz`). */
  readonly monitorUrl: string;
  /** Whether the node answers `/healthz` with 200: running, with a JetStream meta leader, and every stream and consumer it holds current. */
  healthy(): Promise<boolean>;
}

/** Several `nats-server -js` processes routed to each other as one cluster. */
export interface NatsCluster {
  readonly nodes: readonly NatsClusterNode[];
  /** Every node's client address, comma-separated: a `NATS_URL` value. */
  readonly urls: string;
  /** Resolves once every running node is {@link NatsClusterNode.healthy} (JetStream has a meta leader, streams caught up). */
  healthy(timeoutMs?: number): Promise<void>;
  /** Ends every node and removes their stores. */
  stop(): Promise<void>;
}

async function healthz(monitorUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${monitorUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * `size` (3 by default) `nats-server` processes on free local ports, routed to each other as one
 * cluster with JetStream on each (its own store directory, kept across a kill and restart), and a
 * monitoring port each. Resolves once JetStream is ready on every node.
 */
/** How long a new cluster's nodes may take to report healthy. */
const CLUSTER_START_MS = 60_000;

export async function startNatsCluster(size = 3, opts: { name?: string } = {}): Promise<NatsCluster> {
  const clusterName = opts.name ?? 'test-kit';
  const ports = await Promise.all(
    Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort(), monitor: await freePort() })),
  );
  const routes = ports.map((p) => `nats://127.0.0.1:${p.route}`).join(',');
  const nodes = ports.map((p, i): NatsClusterNode => {
    const name = `n${i + 1}`;
    const dir = mkdtempSync(path.join(tmpdir(), `test-kit-nats-${name}-`));
    const args = ['-a', '127.0.0.1', '-p', String(p.client), '-n', name, '-m', String(p.monitor), '-js', '-sd', dir];
    args.push('--cluster_name', clusterName, '--cluster', `nats://127.0.0.1:${p.route}`, '--routes', routes);
    const server = new OwnProcess('nats', 'nats-server', args, p.client, dir);
    const monitorUrl = `http://127.0.0.1:${p.monitor}`;
    return Object.assign(server, { name, monitorUrl, healthy: async () => server.process !== undefined && (await healthz(monitorUrl)) });
  });
  const cluster: NatsCluster = {
    nodes,
    urls: nodes.map((n) => n.url).join(','),
    async healthy(timeoutMs = 30_000) {
      await eventually(
        async () => {
          const down = [];
          for (const node of nodes) if (node.process && !(await node.healthy())) down.push(node.name);
          if (down.length > 0) throw new Error(`NATS cluster nodes not healthy within ${timeoutMs} ms: ${down.join(', ')}`);
        },
        { timeoutMs, intervalMs: 200 },
      );
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    // A new JetStream cluster elects its meta leader before each node's /healthz says ok: on a busy
    // machine that has taken over 30 s, so the first wait has a deadline of its own.
    await cluster.healthy(CLUSTER_START_MS);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
