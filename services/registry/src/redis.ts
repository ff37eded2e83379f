import { Redis } from 'ioredis';
import type { Logger } from './logger.js';

/**
 * Connects an ioredis client that reconnects forever and logs when Redis goes away or comes back (once per
 * change). Commands fail fast while disconnected instead of queueing, so a reply is never held.
 * Resolves once the first connection is ready.
 */
export async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
  let healthy = true;
  redis.on('ready', () => {
    if (!healthy) logger.info('Redis connection restored');
    healthy = true;
  });
  redis.on('error', (err: Error) => {
    if (healthy) logger.warn({ err }, 'Redis unavailable');
    healthy = false;
  });
  await redis.connect();
  return redis;
}
