import { Redis } from 'ioredis';
import type { Logger } from 'pino';

function watched(url: string, logger: Logger, lazyConnect: boolean): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect });
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
 * An ioredis client that reconnects forever and logs when Redis goes away or comes back (once per
 * change, not on every retry). Commands fail fast while disconnected instead of queueing, so a
 * reply is never held waiting for Redis.
 */
export function createRedis(url: string, logger: Logger): Redis {
  return watched(url, logger, false);
}

/** Like {@link createRedis}, resolving once the first connection is ready (fails if Redis is down). */
export async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = watched(url, logger, true);
  await redis.connect();
  return redis;
}
