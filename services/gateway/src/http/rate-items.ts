import type { FastifyRequest } from 'fastify';
import type { Redis, Result } from 'ioredis';
import { ArbiterError } from '@arbiter/contracts';
import { hashApiKey } from '../identity/api-key-secret.js';
import { RetryLaterError } from './problem.js';
import type { RateBuckets } from './rate-count.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** KEYS: bucket; ARGV: count, window ms → `[current, ttl]`. */
    arbiterCountMany(bucket: string, count: number, windowMs: number): Result<[number, number], Context>;
  }
}

/** Adds `count` to a fixed-window bucket, giving a bucket without expiry its window (as COUNT_LUA does). */
const COUNT_MANY_LUA = `
local current = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {current, ttl}
`;

/**
 * Counts a batch call's items in its API key's rate-limit bucket: authentication counted the call
 * as one request, so the other `items − 1` are added here, in one script; past the limit the call
 * answers 429 with `retry-after` (the items stay counted, as a refused request does).
 */
export class ItemCounter {
  constructor(
    private readonly redis: Redis,
    private readonly buckets: RateBuckets,
    private readonly max: number,
  ) {
    if (typeof redis.arbiterCountMany !== 'function') redis.defineCommand('arbiterCountMany', { numberOfKeys: 1, lua: COUNT_MANY_LUA });
  }

  /** Counts `items` for the request's key (one already counted); throws `rate_limited` past the limit. */
  async charge(request: FastifyRequest, items: number): Promise<void> {
    const key = request.headers['x-api-key'];
    if (typeof key !== 'string' || items <= 1) return;
    let current: number, ttl: number;
    try {
      [current, ttl] = await this.redis.arbiterCountMany(this.buckets.ofKeyHash(hashApiKey(key)), items - 1, this.buckets.windowMs);
    } catch (err) {
      throw new ArbiterError('dependency_unavailable', 'the rate limiter (Redis) is unavailable', undefined, { cause: err });
    }
    if (current > this.max) {
      const seconds = Math.max(1, Math.ceil(ttl / 1000));
      throw new RetryLaterError(
        'rate_limited',
        `rate limit of ${this.max} requests exceeded (a batch counts each item); retry in ${seconds} second${seconds === 1 ? '' : 's'}`,
        seconds,
      );
    }
  }
}
