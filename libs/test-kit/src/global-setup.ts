/**
 * The vitest global setup of every package that talks to PostgreSQL, Redis or NATS (its
 * vitest.config.ts lists this file). Runs once per test run, before the workers exist:
 *
 * - every server answers (this machine, CI, `TEST_*` / `DATABASE_URL` / `REDIS_URL` / `NATS_URL`
 *   pointing elsewhere): nothing is started;
 * - some do not and Docker answers: those are started with testcontainers and their URLs exported
 *   through the environment, which the workers inherit (read them with `testServers()`);
 * - neither: the run stops with one message saying what is missing and how to fix it.
 */
import { type ServerName, type ServerPlan, SERVER_NAMES, chooseServers, probe, testServers } from './servers.js';
import { dockerAvailable, startContainer, type StartedServer } from './containers.js';

/** Probes the servers and decides; `docker` is asked only when a server is missing. */
export async function planServers(
  env: NodeJS.ProcessEnv = process.env,
  docker: () => Promise<true | string> = dockerAvailable,
): Promise<ServerPlan> {
  const urls = testServers(env);
  const answers = await Promise.all(SERVER_NAMES.map((n) => probe(n, urls[n])));
  const answering = Object.fromEntries(SERVER_NAMES.map((n, i) => [n, answers[i]])) as Record<ServerName, boolean>;
  const all = SERVER_NAMES.every((n) => answering[n]);
  return chooseServers({ urls, answering, docker: all ? false : await docker() });
}

/** The variables a started server's URL is exported under (the `TEST_*` one and the plain one). */
const EXPORTS: Record<ServerName, readonly string[]> = {
  postgres: ['TEST_DATABASE_URL', 'DATABASE_URL'],
  redis: ['TEST_REDIS_URL', 'REDIS_URL'],
  nats: ['TEST_NATS_URL', 'NATS_URL'],
};

/**
 * Carries out the plan: throws the message when neither path works, otherwise starts what is
 * missing and exports its URL into `env`. Returns the teardown that stops what it started.
 */
export async function prepareServers(
  options: {
    env?: NodeJS.ProcessEnv;
    docker?: () => Promise<true | string>;
    start?: (name: ServerName) => Promise<StartedServer>;
    log?: (line: string) => void;
  } = {},
): Promise<() => Promise<void>> {
  const env = options.env ?? process.env;
  const start = options.start ?? startContainer;
  const plan = await planServers(env, options.docker ?? dockerAvailable);
  if (plan.kind === 'fail') throw new Error(plan.message);
  const started: StartedServer[] = [];
  const stopAll = async () => void (await Promise.allSettled(started.map((s) => s.stop())));
  if (plan.kind === 'running') return stopAll;
  try {
    for (const name of plan.start) {
      const server = await start(name);
      started.push(server);
      for (const v of EXPORTS[name]) env[v] = server.url;
      (options.log ?? console.info)(`test-kit: ${name} did not answer at ${plan.urls[name]}; started a container at ${server.url}`);
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return stopAll;
}

/** vitest: runs before the workers are created, which inherit the exported variables. */
export default function setup(): Promise<() => Promise<void>> {
  return prepareServers();
}
