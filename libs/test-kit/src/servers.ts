/**
 * Which PostgreSQL, Redis and NATS the tests use: the servers already answering (this machine, CI),
 * or, when one does not answer and Docker is available, a container started through testcontainers.
 * The decision is a pure function of what was probed ({@link chooseServers}), tested on its own.
 */
import { connect } from 'node:net';

export type ServerName = 'postgres' | 'redis' | 'nats';
export const SERVER_NAMES: readonly ServerName[] = ['postgres', 'redis', 'nats'];

/** Where the tests find each server. `postgres` is an admin URL: tests replace its database name. */
export type ServerUrls = Record<ServerName, string>;

/** The environment variables read for each server, first set wins, then the default. */
export const SERVER_ENV: Record<ServerName, { vars: readonly string[]; fallback: string }> = {
  postgres: { vars: ['TEST_DATABASE_URL', 'DATABASE_URL'], fallback: 'postgres://postgres@127.0.0.1:5432/postgres' },
  redis: { vars: ['TEST_REDIS_URL', 'REDIS_URL'], fallback: 'redis://127.0.0.1:6379' },
  nats: { vars: ['TEST_NATS_URL', 'NATS_URL'], fallback: 'nats://127.0.0.1:4222' },
};

const DEFAULT_PORT: Record<ServerName, number> = { postgres: 5432, redis: 6379, nats: 4222 };

/** The URLs the tests use, from the environment (the global setup exports started containers there). */
export function testServers(env: NodeJS.ProcessEnv = process.env): ServerUrls {
  const pick = (name: ServerName): string => {
    for (const v of SERVER_ENV[name].vars) {
      const value = env[v];
      if (value !== undefined && value !== '') return value;
    }
    return SERVER_ENV[name].fallback;
  };
  return { postgres: pick('postgres'), redis: pick('redis'), nats: pick('nats') };
}

/** `url` with its path replaced by `/<database>` (PostgreSQL URLs). */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Host and port of a server URL (the server's default port when the URL names none). */
export function hostPort(name: ServerName, url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname || '127.0.0.1', port: u.port === '' ? DEFAULT_PORT[name] : Number(u.port) };
}

/** Whether something accepts a TCP connection at `url` within `timeoutMs`. */
export function probe(name: ServerName, url: string, timeoutMs = 1000): Promise<boolean> {
  const { host, port } = hostPort(name, url);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** What the global setup does, given which servers answered and whether Docker answered. */
export type ServerPlan =
  { kind: 'running'; urls: ServerUrls } | { kind: 'containers'; urls: ServerUrls; start: ServerName[] } | { kind: 'fail'; message: string };

/**
 * The choice itself: every server answers → use them; some do not and Docker is available → start
 * those (and only those) as containers; else one message naming what is missing and both ways out.
 */
export function chooseServers(input: { urls: ServerUrls; answering: Record<ServerName, boolean>; docker: boolean | string }): ServerPlan {
  const missing = SERVER_NAMES.filter((n) => !input.answering[n]);
  if (missing.length === 0) return { kind: 'running', urls: input.urls };
  if (input.docker === true) return { kind: 'containers', urls: input.urls, start: missing };
  const list = missing.map((n) => `${n} at ${input.urls[n]} (${SERVER_ENV[n].vars.join(' / ')})`).join(', ');
  const why = typeof input.docker === 'string' ? ` (${input.docker})` : '';
  return {
    kind: 'fail',
    message:
      `The tests need PostgreSQL, Redis and NATS with JetStream, but ${list} did not answer, and Docker is not available to start them${why}. ` +
      'Either start them (CONTRIBUTING.md "Tests": e.g. `nats-server -js`, `redis-server`, PostgreSQL with trust auth for user postgres) ' +
      'or point the variables above at running ones, or make Docker available so testcontainers can start them.',
  };
}
