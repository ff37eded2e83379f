import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * An ioredis client that reconnects forever and logs when Redis goes away or comes back (once per
 * change, not on every retry). Commands fail fast while disconnected instead of queueing.
 */
export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
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
