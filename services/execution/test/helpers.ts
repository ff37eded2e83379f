import { randomBytes } from 'node:crypto';
import type { ArbiterError } from '@arbiter/contracts';
import { isArbiterError } from '@arbiter/contracts';
import { createLogger } from '@arbiter/service-kit';
import { Redis } from 'ioredis';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A subject and Redis key prefix no other test file uses. */
export function randomPrefix(): string {
  return `test_${randomBytes(6).toString('hex')}`;
}

export const silentLogger = () => createLogger({ service: 'execution-test', level: 'silent' });

/** Deletes every Redis key under `prefix:`. */
export async function dropKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

/** The ArbiterError a promise rejects with. */
export async function rejection(p: Promise<unknown>): Promise<ArbiterError> {
  try {
    await p;
  } catch (err) {
    if (isArbiterError(err)) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** A rule whose evaluation never ends in practice: `levels` nested quantifiers over `x.n` (100^levels steps). */
export function runawayRule(levels = 6): string {
  let inner = 'its is greater than 1000000';
  for (let i = 0; i < levels; i++) inner = `any of the __n__ of the **x** where (${inner})`;
  return `A **x** is slow if ${inner}.`;
}
export const runawayData = { x: { n: Array.from({ length: 100 }, (_, i) => i) } };

export const ADULT_RULE = 'A **user** is adult if the __age__ of the **user** is at least 18.';

/** A value nested `depth` levels deep (an object at each level). */
export function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}
