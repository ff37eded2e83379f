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
