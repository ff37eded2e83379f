import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { z } from 'zod';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { createRegistry } from './metrics.js';
import { startOpsServer, type OpsServer } from './ops-server.js';
import { packageVersion } from './package-version.js';
import { onShutdown } from './shutdown.js';

/** What a service's `start` receives: its checked configuration and the shared plumbing. */
export interface ServiceKit<C> {
  /** The service's name: its logs' `service` field, its metrics' `service` label, its NATS client name. */
  name: string;
  config: C;
  logger: Logger;
  /** Served at the ops server's `/metrics`; register the service's own metrics here. */
  metrics: Registry;
  /** The service package's version. */
  version: string;
}

/** A started service, as the runner drives it. */
export interface RunningService {
  /** Whether the service can do its job now (`/readyz`); a check that takes over a second counts as no. */
  ready: () => boolean | Promise<boolean>;
  /** Stops taking work, finishes what is in flight and closes every connection. */
  close: () => Promise<void>;
}

/** One service: its name, configuration schema, package.json and how it starts. */
export interface ServiceDefinition<S extends z.ZodObject> {
  name: string;
  config: S;
  /** `new URL('../package.json', import.meta.url)` from the service's main module. */
  packageJson: URL;
  /** Opens the service's connections and starts serving; throws (after closing what it opened) when it cannot. */
  start(kit: ServiceKit<z.infer<S>>): Promise<RunningService>;
}

/** Overrides for tests. */
export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Where the JSON logs go (stdout by default). */
  destination?: { write(line: string): void };
  /** Ends the process; `process.exit` by default. */
  exit?: (code: number) => void;
  /** Signals that start the shutdown; SIGTERM and SIGINT by default. */
  signals?: NodeJS.Signals[];
}

/**
 * The one way a service process starts (each service's `main.ts` is a call to this): reads and checks
 * the configuration, makes the logger and metrics registry, starts the service, serves `/healthz`,
 * `/readyz` and `/metrics` on `OPS_PORT` when the configuration has one, and shuts down gracefully on
 * SIGTERM/SIGINT. Whatever goes wrong at start — a bad variable, PostgreSQL or NATS unreachable — is
 * one JSON log line at level `fatal` and exit code 1, never a raw stack on stderr.
 * Resolves with the running service, or `undefined` when it could not start.
 */
export async function runService<S extends z.ZodObject>(
  def: ServiceDefinition<S>,
  opts: RunOptions = {},
): Promise<RunningService | undefined> {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const logFor = (level: string): Logger =>
    createLogger({ service: def.name, level, ...(opts.destination ? { destination: opts.destination } : {}) });
  let config: z.infer<S>;
  try {
    config = loadConfig(def.config, opts.env);
  } catch (err) {
    const logger = logFor('info');
    if (err instanceof ConfigError) logger.fatal({ variables: err.variables }, err.message);
    else logger.fatal({ err }, `${def.name} configuration could not be read`);
    logger.flush?.();
    exit(1);
    return undefined;
  }
  const logger = logFor((config as { LOG_LEVEL?: string }).LOG_LEVEL ?? 'info');
  if (!opts.exit) watchCrashes(logger, exit);
  const kit: ServiceKit<z.infer<S>> = {
    name: def.name,
    config,
    logger,
    metrics: createRegistry(def.name),
    version: packageVersion(def.packageJson),
  };

  let running: RunningService;
  let ops: OpsServer | undefined;
  try {
    running = await def.start(kit);
  } catch (err) {
    logger.fatal({ err }, `${def.name} failed to start`);
    logger.flush?.();
    exit(1);
    return undefined;
  }
  const { OPS_PORT: opsPort, OPS_HOST: opsHost } = config as { OPS_PORT?: number; OPS_HOST?: string };
  try {
    if (opsPort !== undefined && opsPort > 0) {
      ops = await startOpsServer({ port: opsPort, host: opsHost, ready: running.ready, registry: kit.metrics });
      logger.info({ port: ops.port }, 'ops server listening');
    }
  } catch (err) {
    logger.fatal({ err, port: opsPort }, `${def.name} could not serve its ops port`);
    await running.close().catch(() => undefined);
    logger.flush?.();
    exit(1);
    return undefined;
  }
  onShutdown(
    logger,
    async () => {
      await running.close();
      await ops?.close();
    },
    { exit, ...(opts.signals ? { signals: opts.signals } : {}) },
  );
  return running;
}

/** A crash after start is logged as one `fatal` JSON line before the process ends. */
function watchCrashes(logger: Logger, exit: (code: number) => void): void {
  const die = (err: unknown, what: string): void => {
    logger.fatal({ err }, what);
    logger.flush?.();
    exit(1);
  };
  process.on('uncaughtException', (err) => die(err, 'uncaught exception'));
  process.on('unhandledRejection', (reason) => die(reason, 'unhandled rejection'));
}

/**
 * A {@link ServiceKit} for starting a service inside another process (tests, benchmarks): the given
 * logger or one at the configuration's level, the given metrics registry or a fresh one, version
 * `0.0.0-test` unless given.
 */
export function inProcessKit<C>(
  name: string,
  config: C,
  opts: { logger?: Logger; metrics?: Registry; version?: string } = {},
): ServiceKit<C> {
  const level = (config as { LOG_LEVEL?: string }).LOG_LEVEL ?? 'silent';
  return {
    name,
    config,
    logger: opts.logger ?? createLogger({ service: name, level }),
    metrics: opts.metrics ?? createRegistry(name),
    version: opts.version ?? '0.0.0-test',
  };
}
