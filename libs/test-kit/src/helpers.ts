/** Small helpers every test layer uses: polling with a deadline, free ports, random prefixes, Redis clean-up. */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/**
 * Polls `check` until it stops throwing (or returns), and rethrows its last error once the deadline
 * (`timeoutMs`, 15 s by default; a number is the timeout) has passed. For waiting on something asynchronous to happen; it asserts nothing about timing.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  deadline: number | { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const options = typeof deadline === 'number' ? { timeoutMs: deadline } : deadline;
  const until = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
    }
  }
}

/** A TCP port of 127.0.0.1 that was free a moment ago (for servers that must be told their port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** `<label>_<12 hex>`: a NATS subject, Redis key or database name prefix no other test file uses. */
export function randomPrefix(label = 'test'): string {
  return `${label}_${randomBytes(6).toString('hex')}`;
}

/** Deletes every key of the Redis at `url` that starts with `keyPrefix` (e.g. `test_ab12:`). */
export async function deleteRedisKeys(url: string, keyPrefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 2000, commandTimeout: 5000 });
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
