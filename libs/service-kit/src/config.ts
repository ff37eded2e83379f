import { RUN_DEFAULTS } from '@arbiter/contracts';
import { z } from 'zod';

/** Log levels pino accepts, plus `silent`. */
export const LogLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

const port = () => z.coerce.number().int().min(0).max(65535);
const positiveInt = () => z.coerce.number().int().positive();

/**
 * One NATS server address, or the servers of a cluster as a comma-separated list
 * (`nats://nats-0:4222,nats://nats-1:4222,nats://nats-2:4222`): a client connects to any one of
 * them and, when that server goes away, reconnects to another. Kept as the trimmed list joined by
 * commas; {@link natsServers} splits it.
 */
const natsServerList = () =>
  z.string().transform((value, ctx) => {
    const servers = natsServers(value);
    for (const server of servers) {
      if (!z.url().safeParse(server).success) {
        ctx.addIssue({ code: 'custom', message: `\`${server}\` is not a URL (give one or more comma-separated NATS URLs)` });
        return z.NEVER;
      }
    }
    return servers.join(',');
  });

/** The servers of a `NATS_URL` value (see {@link NatsConfig}): split on commas, trimmed; an empty entry stays (and fails the URL check). */
export function natsServers(value: string): string[] {
  return value.split(',').map((s) => s.trim());
}

// Configuration parts: every service composes the ones it uses with `serviceConfig`, so a shared
// setting has one name, one default and one check everywhere (docs/configuration.md).

/** `LOG_LEVEL`. */
export const LogConfig = z.object({
  LOG_LEVEL: LogLevel.default('info'),
});

/** The bus: NATS address and the subject/stream prefix that isolates stacks sharing one NATS (docs/operations.md#several-stacks-on-one-machine). */
export const NatsConfig = z.object({
  /** One server, or several comma-separated (a cluster's, for failover). */
  NATS_URL: natsServerList().default('nats://127.0.0.1:4222'),
  NATS_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards')
    .default('arbiter'),
  /** The service's NATS user and password (deploy/nats/nats-server.conf gives each service its own, with its subjects). */
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  /** A NATS `.creds` file (JWT and nkey seed), for servers that use decentralised JWT authentication instead. */
  NATS_CREDS_FILE: z.string().min(1).optional(),
  /** `true` requires TLS with the system's CAs; the files below set a private CA and a client certificate. */
  NATS_TLS: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  NATS_TLS_CA_FILE: z.string().min(1).optional(),
  NATS_TLS_CERT_FILE: z.string().min(1).optional(),
  NATS_TLS_KEY_FILE: z.string().min(1).optional(),
  /**
   * Replicas of the events stream (1 on a single server; 3 on a 3-node JetStream cluster, so the
   * stream survives the loss of one node). The stream is created with it, and an existing stream
   * whose replica count differs is updated to it at start.
   */
  EVENTS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /**
   * How often a connection pings its server. Two pings unanswered in a row and the client counts the
   * server as gone and reconnects to another: a node that froze, or whose host vanished without
   * closing the socket, is left within two to three intervals (nats.js's own default is 2 minutes).
   */
  NATS_PING_INTERVAL_MS: positiveInt().default(10_000),
  /**
   * Deadline of opening a connection to one server: a server that accepts the socket but never
   * answers (frozen) costs this long before the next server of the list is tried.
   */
  NATS_CONNECT_TIMEOUT_MS: positiveInt().default(3000),
});

/** Redis address and the deadlines of its commands. */
export const RedisConfig = z.object({
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  /** A command without a reply by then fails (a frozen Redis never hangs a request). */
  REDIS_COMMAND_TIMEOUT_MS: positiveInt().default(1000),
  REDIS_CONNECT_TIMEOUT_MS: positiveInt().default(2000),
  /** The CA of a Redis server with a private certificate (TLS itself is `rediss://` in `REDIS_URL`). */
  REDIS_TLS_CA_FILE: z.string().min(1).optional(),
});

/** PostgreSQL address, pool and deadlines. */
export const DatabaseConfig = z.object({
  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/policy_service'),
  /** Connections in the service's pool. */
  DB_POOL_MAX: positiveInt().default(10),
  /** Server-side `statement_timeout` of every connection, and the client's wait for a query's answer. */
  DB_STATEMENT_TIMEOUT_MS: positiveInt().default(5000),
  /** Time to open a connection, and to wait for a free one from the pool. */
  DB_CONNECT_TIMEOUT_MS: positiveInt().default(2000),
});

/**
 * The URL of a database that belongs beside the stack's main one: `databaseUrl` with its database
 * renamed `<name>_<suffix>` (same server, credentials and parameters). The governance and audit
 * services keep their own databases this way, so two stacks with different `DATABASE_URL`s never
 * share them (docs/operations.md#several-stacks-on-one-machine).
 */
export function companionDatabaseUrl(databaseUrl: string, suffix: string): string {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (name === '') throw new Error('DATABASE_URL names no database');
  url.pathname = `/${encodeURIComponent(`${name}_${suffix}`)}`;
  return url.toString();
}

/** The operations server: `/healthz`, `/readyz`, `/metrics` (0 turns it off). */
export const OpsConfig = z.object({
  OPS_PORT: port().default(0),
  OPS_HOST: z.string().default('0.0.0.0'),
});

/**
 * The step budget of rule evaluations (LANGUAGE.md §8.1), shared by the services that evaluate
 * rules: the execution service's runs and the registry's publish checks (saved tests), so a saved
 * test passes at publish exactly when it would pass in a run.
 */
export const EvaluationConfig = z.object({
  /** Steps a run without a trace (and each saved test at publish) may take; a flow run's nodes share one budget. */
  EXEC_STEP_BUDGET: positiveInt().default(RUN_DEFAULTS.stepBudget),
  /** Steps a run with a trace may take (a traced step costs ~20× the time and writes a line). */
  EXEC_TRACE_STEP_BUDGET: positiveInt().default(RUN_DEFAULTS.tracedStepBudget),
});

type Shape = z.ZodRawShape;
type Merge<Parts extends readonly z.ZodObject[]> = Parts extends readonly [infer H extends z.ZodObject, ...infer T extends z.ZodObject[]]
  ? H['shape'] & Merge<T>
  : unknown;

/**
 * One service's configuration schema: the shared parts it uses plus its own variables (named with the
 * service's prefix, e.g. `EXEC_POOL_SIZE`). Parts are merged in order; a later one may not redefine a
 * variable of an earlier one.
 */
export function serviceConfig<const Parts extends readonly z.ZodObject[], Own extends Shape>(
  parts: Parts,
  own: Own,
): z.ZodObject<Merge<Parts> & Own> {
  const shape: Record<string, z.core.$ZodType> = {};
  const shapes: Array<Readonly<Record<string, z.core.$ZodType>>> = [...parts.map((p): z.ZodRawShape => p.shape), own];
  for (const part of shapes) {
    for (const [name, schema] of Object.entries(part)) {
      if (Object.hasOwn(shape, name)) throw new Error(`configuration variable \`${name}\` is declared twice`);
      shape[name] = schema;
    }
  }
  return z.object(shape) as z.ZodObject<Merge<Parts> & Own>;
}

/** Thrown by {@link loadConfig}; names every bad variable in one line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    message: string,
    readonly variables: string[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Reads `schema` from the environment: typed, defaults applied. An empty variable counts as unset,
 * so `FOO=` falls back to the default.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => ({ variable: i.path.join('.'), message: i.message }));
  const detail = problems.map((p) => `${p.variable}: ${p.message}`).join('; ');
  throw new ConfigError(`invalid configuration: ${detail}`, [...new Set(problems.map((p) => p.variable))], {
    cause: parsed.error,
  });
}
