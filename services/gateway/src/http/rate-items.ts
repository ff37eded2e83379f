import type { FastifyRequest } from 'fastify';
import type { Redis, Result } from 'ioredis';
import { ArbiterError } from '@arbiter/contracts';
import { hashApiKey } from '../identity/api-key-secret.js';
import { RetryLaterError } from '../errors.js';
import type { RateBuckets } from '../limits/rate-count.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** KEYS: key bucket, person bucket; ARGV: count, window ms → `[current, ttl, person current, person ttl]`. */
    arbiterCountMany(
      bucket: string,
      personBucket: string,
      count: number,
      windowMs: number,
    ): Result<[number, number, number, number], Context>;
  }
}

/** Adds `count` to two fixed-window buckets (key, person), giving a bucket without expiry its window (as COUNT_LUA does). */
const COUNT_MANY_LUA = `
local function add(bucket)
  local current = redis.call('INCRBY', bucket, ARGV[1])
  local ttl = redis.call('PTTL', bucket)
  if ttl < 0 then
    redis.call('PEXPIRE', bucket, ARGV[2])
    ttl = tonumber(ARGV[2])
  end
  return {current, ttl}
end
local key = add(KEYS[1])
local person = add(KEYS[2])
return {key[1], key[2], person[1], person[2]}
`;

/**
 * Counts a batch call's items in its API key's and its person's rate-limit buckets: authentication
 * counted the call as one request, so the other `items − 1` are added here, in one script; past
 * either limit the call answers 429 with `retry-after` (the items stay counted, as a refused
 * request does).
 */
export class ItemCounter {
  constructor(
    private readonly redis: Redis,
    private readonly buckets: RateBuckets,
  ) {
    if (typeof redis.arbiterCountMany !== 'function') redis.defineCommand('arbiterCountMany', { numberOfKeys: 2, lua: COUNT_MANY_LUA });
  }

  /** Counts `items` for the request's key and person (one already counted); throws `rate_limited` past a limit. */
  async charge(request: FastifyRequest, items: number): Promise<void> {
    const key = request.headers['x-api-key'];
    const principal = request.principal;
    if (typeof key !== 'string' || principal === null || items <= 1) return;
    let reply: [number, number, number, number];
    try {
      reply = await this.redis.arbiterCountMany(
        this.buckets.ofKeyHash(hashApiKey(key)),
        this.buckets.ofPerson(principal.orgId, principal.userId),
        items - 1,
        this.buckets.windowMs,
      );
    } catch (err) {
      throw new ArbiterError('dependency_unavailable', 'the rate limiter (Redis) is unavailable', undefined, { cause: err });
    }
    const { current, ttl } = this.buckets.tighter({ current: reply[0], ttl: reply[1] }, { current: reply[2], ttl: reply[3] });
    if (current > this.buckets.keyMax) {
      const seconds = Math.max(1, Math.ceil(ttl / 1000));
      throw new RetryLaterError(
        'rate_limited',
        `rate limit of ${this.buckets.keyMax} requests exceeded (a batch counts each item, for the key and for its owner over all their keys); retry in ${seconds} second${seconds === 1 ? '' : 's'}`,
        seconds,
      );
    }
  }
}
