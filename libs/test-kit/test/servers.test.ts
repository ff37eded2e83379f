import { describe, expect, it } from 'vitest';
import { chooseServers, planServers, prepareServers, testServers, withDatabase, type ServerUrls } from '../src/index.js';
import { freePort } from '../src/helpers.js';

const urls: ServerUrls = {
  postgres: 'postgres://postgres@127.0.0.1:5432/postgres',
  redis: 'redis://127.0.0.1:6379',
  nats: 'nats://127.0.0.1:4222',
};
const all = { postgres: true, redis: true, nats: true };

describe('chooseServers: which path the test harness takes', () => {
  it('uses the running servers when all three answer, whatever Docker says', () => {
    expect(chooseServers({ urls, answering: all, docker: false })).toEqual({ kind: 'running', urls });
    expect(chooseServers({ urls, answering: all, docker: true })).toEqual({ kind: 'running', urls });
  });

  it('starts only the servers that did not answer when Docker is available', () => {
    expect(chooseServers({ urls, answering: { ...all, redis: false }, docker: true })).toEqual({
      kind: 'containers',
      urls,
      start: ['redis'],
    });
    expect(chooseServers({ urls, answering: { postgres: false, redis: false, nats: false }, docker: true })).toEqual({
      kind: 'containers',
      urls,
      start: ['postgres', 'redis', 'nats'],
    });
  });

  it('fails with one message naming what is missing, where it looked, the variables and both ways out', () => {
    const plan = chooseServers({
      urls,
      answering: { ...all, postgres: false, nats: false },
      docker: 'connect ENOENT /var/run/docker.sock',
    });
    expect(plan).toEqual({
      kind: 'fail',
      message:
        'The tests need PostgreSQL, Redis and NATS with JetStream, but postgres at postgres://postgres@127.0.0.1:5432/postgres ' +
        '(TEST_DATABASE_URL / DATABASE_URL), nats at nats://127.0.0.1:4222 (TEST_NATS_URL / NATS_URL) did not answer, and Docker is ' +
        'not available to start them (connect ENOENT /var/run/docker.sock). Either start them (CONTRIBUTING.md "Tests": e.g. ' +
        '`nats-server -js`, `redis-server`, PostgreSQL with trust auth for user postgres) or point the variables above at running ones, ' +
        'or make Docker available so testcontainers can start them.',
    });
  });
});

describe('testServers: where the tests look', () => {
  it('reads TEST_* first, then the services’ own variables, then the local defaults', () => {
    expect(testServers({})).toEqual(urls);
    expect(testServers({ DATABASE_URL: 'postgres://u@db:1/x', REDIS_URL: 'redis://r:2', NATS_URL: 'nats://n:3' })).toEqual({
      postgres: 'postgres://u@db:1/x',
      redis: 'redis://r:2',
      nats: 'nats://n:3',
    });
    expect(
      testServers({
        TEST_DATABASE_URL: 'postgres://t@db:1/y',
        DATABASE_URL: 'postgres://u@db:1/x',
        TEST_REDIS_URL: 'redis://t:2',
        TEST_NATS_URL: '',
      }),
    ).toEqual({ postgres: 'postgres://t@db:1/y', redis: 'redis://t:2', nats: 'nats://127.0.0.1:4222' });
  });

  it('replaces the database of a PostgreSQL URL', () => {
    expect(withDatabase('postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable', 'arbiter_test_1')).toBe(
      'postgres://postgres@127.0.0.1:5432/arbiter_test_1?sslmode=disable',
    );
  });
});

describe('planServers: real probes', () => {
  it('takes the running servers of this machine without asking Docker', async () => {
    let asked = false;
    const plan = await planServers(process.env, async () => {
      asked = true;
      return true;
    });
    expect(plan).toEqual({ kind: 'running', urls: testServers() });
    expect(asked).toBe(false);
  });

  it('asks Docker only when a server does not answer, then starts just that one or fails clearly', async () => {
    const env = { ...process.env, TEST_REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
    const calls: string[] = [];
    const withDocker = await planServers(env, async () => {
      calls.push('docker');
      return true;
    });
    expect(withDocker).toEqual({ kind: 'containers', urls: testServers(env), start: ['redis'] });
    const without = await planServers(env, async () => 'no Docker socket');
    expect(without.kind).toBe('fail');
    expect(without.kind === 'fail' && without.message).toContain(
      `redis at ${env.TEST_REDIS_URL} (TEST_REDIS_URL / REDIS_URL) did not answer`,
    );
    expect(without.kind === 'fail' && without.message).toContain('Docker is not available to start them (no Docker socket)');
    expect(calls).toEqual(['docker']);
  });
});

describe('prepareServers: what the global setup does', () => {
  it('on the running path starts nothing and changes no variable', async () => {
    const env = { ...process.env };
    const teardown = await prepareServers({
      env,
      docker: async () => true,
      start: async () => {
        throw new Error('must not start anything');
      },
    });
    expect(env).toEqual(process.env);
    await teardown();
  });

  it('on the container path exports each started server under its TEST_* and plain variable, and stops it at teardown', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, TEST_NATS_URL: `nats://127.0.0.1:${await freePort()}` };
    const stopped: string[] = [];
    const lines: string[] = [];
    const teardown = await prepareServers({
      env,
      docker: async () => true,
      start: async (name) => ({ url: `${name}://container:1`, stop: async () => void stopped.push(name) }),
      log: (line) => lines.push(line),
    });
    expect([env.TEST_NATS_URL, env.NATS_URL]).toEqual(['nats://container:1', 'nats://container:1']);
    expect(env.TEST_REDIS_URL).toBe(process.env.TEST_REDIS_URL);
    expect(lines).toEqual([
      expect.stringMatching(/^test-kit: nats did not answer at nats:\/\/127\.0\.0\.1:\d+; started a container at nats:\/\/container:1$/),
    ]);
    expect(stopped).toEqual([]);
    await teardown();
    expect(stopped).toEqual(['nats']);
  });

  it('with neither, fails the run with the one message', async () => {
    const env = { ...process.env, TEST_DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` };
    await expect(prepareServers({ env, docker: async () => 'Could not find a working container runtime strategy' })).rejects.toThrow(
      /^The tests need PostgreSQL, Redis and NATS with JetStream, but postgres at .* did not answer, and Docker is not available to start them \(Could not find a working container runtime strategy\)\. Either start them/,
    );
  });
});
