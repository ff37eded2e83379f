/**
 * Own NATS, Redis and PostgreSQL server processes on free ports for the fault suite, which kills,
 * freezes and restarts them (the machine's shared servers are never touched). PostgreSQL is a
 * throwaway cluster made with `initdb` as the `postgres` user, where the machine allows it.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually, freePort, probe, startNatsServer, startRedisServer, type OwnServer } from '@arbiter/test-kit';

/** Resolves once something accepts TCP connections on `port`. */
function listening(port: number, timeoutMs = 20_000): Promise<void> {
  return eventually(
    async () => {
      if (!(await probe('postgres', `postgres://127.0.0.1:${port}`))) throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
    },
    { timeoutMs },
  );
}

/** A dependency the suite can kill, freeze and bring back. */
export interface Dependency {
  readonly name: string;
  readonly url: string;
  kill(): Promise<void>;
  start(): Promise<void>;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

/** One of test-kit's own server processes (restarted on the same port) as a dependency of the suite. */
function dependency(name: string, server: OwnServer): Dependency {
  return {
    name,
    url: server.url,
    kill: () => server.kill(),
    start: () => server.start(),
    freeze: () => server.freeze(),
    thaw: () => server.thaw(),
    close: () => server.stop(),
  };
}

export async function startNats(): Promise<Dependency> {
  return dependency('NATS', await startNatsServer());
}

export async function startRedis(): Promise<Dependency> {
  return dependency('Redis', await startRedisServer());
}

/** The PostgreSQL binaries of this machine (Debian keeps them under /usr/lib/postgresql/<version>/bin). */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => path.join(root, v, 'bin')).find((bin) => existsSync(path.join(bin, 'initdb')));
}

/** Why this machine cannot run a throwaway PostgreSQL cluster, or undefined when it can. */
export function postgresUnavailable(): string | undefined {
  if (!postgresBin()) return 'no PostgreSQL server binaries (initdb) under /usr/lib/postgresql';
  if (process.getuid?.() !== 0) return 'making a cluster needs root (to run initdb as the postgres user)';
  if (spawnSync('id', ['postgres']).status !== 0) return 'there is no postgres user';
  return undefined;
}

/** A throwaway cluster: `kill` is an immediate shutdown (as a crash), `freeze` stops every process of it. */
class PostgresCluster implements Dependency {
  readonly name = 'PostgreSQL';

  constructor(
    private readonly bin: string,
    private readonly dir: string,
    private readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}`;
  }

  private asPostgres(args: string[]): void {
    execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')], {
      stdio: 'ignore',
    });
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    this.asPostgres([
      path.join(this.bin, 'pg_ctl'),
      '-D',
      path.join(this.dir, 'data'),
      '-o',
      options,
      '-l',
      path.join(this.dir, 'log'),
      '-w',
      'start',
    ]);
    await listening(this.port);
  }

  async kill(): Promise<void> {
    this.thaw();
    this.asPostgres([path.join(this.bin, 'pg_ctl'), '-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  }

  /** The postmaster and every backend (its children). */
  private pids(): number[] {
    const postmaster = spawnSync('head', ['-1', path.join(this.dir, 'data', 'postmaster.pid')], { encoding: 'utf8' }).stdout.trim();
    if (!postmaster) return [];
    const children = spawnSync('ps', ['-o', 'pid=', '--ppid', postmaster], { encoding: 'utf8' })
      .stdout.split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
    return [Number(postmaster), ...children];
  }

  freeze(): void {
    for (const pid of this.pids()) process.kill(pid, 'SIGSTOP');
  }

  thaw(): void {
    for (const pid of this.pids()) process.kill(pid, 'SIGCONT');
  }

  async close(): Promise<void> {
    try {
      await this.kill();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

export async function startPostgres(): Promise<Dependency> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries');
  const dir = mkdtempSync(path.join(tmpdir(), 'arbiter-faults-pg-'));
  chmodSync(dir, 0o755);
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(dir, uid, gid);
  const cluster = new PostgresCluster(bin, dir, await freePort());
  execFileSync(
    'su',
    ['postgres', '-s', '/bin/sh', '-c', `'${path.join(bin, 'initdb')}' -D '${path.join(dir, 'data')}' -A trust -U postgres`],
    {
      stdio: 'ignore',
    },
  );
  await cluster.start();
  return cluster;
}
