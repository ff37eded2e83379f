import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Deadlines of a Redis client (the `RedisConfig` part's variables). */
export interface RedisOptions {
  /** A command without a reply by then is rejected, so a frozen Redis never holds a caller. */
  commandTimeoutMs: number;
  connectTimeoutMs: number;
  /** The CA of a server with a private certificate; TLS itself is turned on by a `rediss://` address. */
  tlsCaFile?: string;
}

/** The {@link RedisOptions} of a service configuration that composes `RedisConfig`. */
export function redisOptionsOf(config: {
  REDIS_COMMAND_TIMEOUT_MS: number;
  REDIS_CONNECT_TIMEOUT_MS: number;
  REDIS_TLS_CA_FILE?: string;
}): RedisOptions {
  return {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    connectTimeoutMs: config.REDIS_CONNECT_TIMEOUT_MS,
    ...(config.REDIS_TLS_CA_FILE !== undefined ? { tlsCaFile: config.REDIS_TLS_CA_FILE } : {}),
  };
}

const DEFAULTS: RedisOptions = { commandTimeoutMs: 1000, connectTimeoutMs: 2000 };

function watched(url: string, logger: Logger, opts: RedisOptions, lazyConnect: boolean): Redis {
  const redis = new Redis(url, {
    lazyConnect,
    // Fail fast: no queueing while disconnected, one retry after a reconnect, a deadline per command.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: opts.commandTimeoutMs,
    connectTimeout: opts.connectTimeoutMs,
    // A `rediss://` address turns TLS on; a private CA is added here (the URL cannot carry it).
    ...(opts.tlsCaFile !== undefined ? { tls: { ca: readFileSync(opts.tlsCaFile) } } : {}),
  });
  let healthy = true;
  redis.on('ready', () => {
    if (!healthy) logger.info('Redis connection restored');
    healthy = true;
  });
  redis.on('error', (err: Error) => {
    if (healthy) logger.warn({ err }, 'Redis unavailable');
    healthy = false;
  });
  return redis;
}

/**
 * The one way a service makes an ioredis client: it reconnects forever, logs when Redis goes away or
 * comes back (once per change, not on every retry), and never lets a caller wait past its deadlines:
 * commands fail at once while disconnected and after `commandTimeoutMs` when Redis does not answer.
 */
export function createRedis(url: string, logger: Logger, opts: RedisOptions = DEFAULTS): Redis {
  return watched(url, logger, opts, false);
}

/** Like {@link createRedis}, resolving once the first connection is ready (fails if Redis is down). */
export async function connectRedis(url: string, logger: Logger, opts: RedisOptions = DEFAULTS): Promise<Redis> {
  const redis = watched(url, logger, opts, true);
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  return redis;
}

/** Quits politely, or drops the connection when Redis does not answer the QUIT. */
export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
