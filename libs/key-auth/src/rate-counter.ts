import type { Redis, Result } from 'ioredis';
import { ArbiterError, type Principal } from '@arbiter/contracts';
import { COUNT_LUA, defineCountCommand, rateCountOf, type RateBuckets, type RateUse } from './rate-count.js';

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

const COUNT_MANY_LUA = `${COUNT_LUA}
local key = countN(KEYS[1], ARGV[2], ARGV[1])
local person = countN(KEYS[2], ARGV[2], ARGV[1])
return {key[1], key[2], person[1], person[2]}
`;

/**
 * The rate counts the API-key lookup (identity/key-cache.ts) does not make: a bearer caller's
 * request in its person's bucket, and a batch call's further items in its key's and its person's.
 */
export class RateCounter {
  constructor(
    private readonly redis: Redis,
    private readonly buckets: RateBuckets,
    /** The key's stored form, which names its bucket (identity's `hashApiKey`). */
    private readonly hashKey: (apiKey: string) => string,
  ) {
    defineCountCommand(redis);
    if (typeof redis.arbiterCountMany !== 'function') redis.defineCommand('arbiterCountMany', { numberOfKeys: 2, lua: COUNT_MANY_LUA });
  }

  /** Counts a bearer caller's request in its person's bucket (the one their keys' requests count in too). */
  async person(orgId: string, userId: string): Promise<RateUse> {
    const reply = await this.redis.arbiterCount(this.buckets.ofPerson(orgId, userId), this.buckets.windowMs);
    return this.buckets.personUse(rateCountOf(reply));
  }

  /**
   * Counts a batch call's items (a `/run/batch` call's data objects, an MCP JSON-RPC batch's
   * messages) in its API key's and its person's buckets: authentication counted the call as one
   * request, so the other `items − 1` are added here, in one script, and the count after them is
   * returned for the answer's `x-ratelimit-*` headers (`applyRateLimit`, which refuses past
   * either limit; the items stay counted, as a refused request does). Undefined when nothing more
   * was counted: one item, or a call without an API key.
   */
  async chargeItems(apiKey: string | undefined, principal: Principal | null, items: number): Promise<RateUse | undefined> {
    if (apiKey === undefined || principal === null || items <= 1) return undefined;
    let reply: [number, number, number, number];
    try {
      reply = await this.redis.arbiterCountMany(
        this.buckets.ofKeyHash(this.hashKey(apiKey)),
        this.buckets.ofPerson(principal.orgId, principal.userId),
        items - 1,
        this.buckets.windowMs,
      );
    } catch (err) {
      throw new ArbiterError('dependency_unavailable', 'the rate limiter (Redis) is unavailable', undefined, { cause: err });
    }
    return this.buckets.tighter(rateCountOf([reply[0], reply[1]]), rateCountOf([reply[2], reply[3]]));
  }
}
