import type { Redis, Result } from 'ioredis';
import { RetryLaterError } from './errors.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** KEYS: bucket; ARGV: window ms → `[current, ttl]`. */
    arbiterCount(bucket: string, windowMs: number): Result<[number, number], Context>;
  }
}

/** A request's place in its rate-limit bucket: the count so far in this window and the window's time left. */
export interface RateCount {
  current: number;
  /** Milliseconds until the window ends and the bucket starts again at 0. */
  ttl: number;
}

/** A request's count held against the limit it answers to: past `max` it is refused (`x-ratelimit-*` headers). */
export interface RateUse extends RateCount {
  max: number;
}

/** Whole seconds until `count`'s window ends, at least 1: when a refused caller may try again (`retry-after`). */
export function secondsLeft(count: RateCount): number {
  return Math.max(1, Math.ceil(count.ttl / 1000));
}

/** The `rate_limited` refusal (429, `retry-after`) of a request past `use.max`; `counted` says what counted when not plain requests. */
export function limitExceeded(use: RateUse, counted = ''): RetryLaterError {
  const seconds = secondsLeft(use);
  return new RetryLaterError(
    'rate_limited',
    `rate limit of ${use.max} requests exceeded${counted}; retry in ${seconds} second${seconds === 1 ? '' : 's'}`,
    seconds,
  );
}

/**
 * Lua counting `n` requests at once in a fixed window (`countN`), or one (`count`): the first
 * requests of a window set its expiry. A bucket found without an expiry (lost to a crash between
 * the two commands) is given one rather than counting for ever. Every counting script of the
 * gateway starts with it.
 */
export const COUNT_LUA = `
local function countN(bucket, windowMs, n)
  local current = redis.call('INCRBY', bucket, n)
  local ttl = tonumber(windowMs)
  if current == tonumber(n) then
    redis.call('PEXPIRE', bucket, windowMs)
  else
    ttl = redis.call('PTTL', bucket)
    if ttl < 0 then
      redis.call('PEXPIRE', bucket, windowMs)
      ttl = tonumber(windowMs)
    end
  end
  return {current, ttl}
end
local function count(bucket, windowMs)
  return countN(bucket, windowMs, 1)
end
`;

const COUNT_ONE_LUA = `${COUNT_LUA}
return count(KEYS[1], ARGV[1])
`;

/** Defines the `arbiterCount` command (one request counted in one bucket) on `redis`, once. */
export function defineCountCommand(redis: Redis): void {
  if (typeof redis.arbiterCount !== 'function') redis.defineCommand('arbiterCount', { numberOfKeys: 1, lua: COUNT_ONE_LUA });
}

/**
 * Where the buckets live in Redis, how long a window lasts, and the limits: `keyMax` requests per
 * window per API key, `personMax` per person (a key's owner over all their keys, or a bearer's
 * user), so minting keys buys no more.
 */
export class RateBuckets {
  /** Key prefix of every bucket. */
  readonly namespace: string;

  constructor(
    redisKeyPrefix: string,
    readonly windowMs: number,
    readonly keyMax: number = Number.MAX_SAFE_INTEGER,
    readonly personMax: number = keyMax,
  ) {
    this.namespace = `${redisKeyPrefix}ratelimit:`;
  }

  /** Prefix of the person buckets (`<prefix><orgId>:<userId>`), for scripts that learn the person from a grant. */
  get personPrefix(): string {
    return `${this.namespace}person:`;
  }

  /** The bucket of a person: every request of their keys, and their bearer-token requests. */
  ofPerson(orgId: string, userId: string): string {
    return `${this.personPrefix}${orgId}:${userId}`;
  }

  /**
   * One count to judge an API-key request by, against `keyMax`: the key's own, or the person's
   * expressed as what is left of `keyMax` when the person has less left (so
   * `x-ratelimit-remaining` shows the tighter of the two).
   */
  tighter(key: RateCount, person: RateCount): RateUse {
    const keyLeft = this.keyMax - key.current;
    const personLeft = this.personMax - person.current;
    const count = personLeft < keyLeft ? { current: this.keyMax - personLeft, ttl: person.ttl } : key;
    return { current: count.current, ttl: count.ttl, max: this.keyMax };
  }

  /** A bearer request's count in its person's bucket, held against `personMax`. */
  personUse(person: RateCount): RateUse {
    return { current: person.current, ttl: person.ttl, max: this.personMax };
  }

  /** The bucket of an API key, named by the key's hash so the key lookup can count before it knows the key id. */
  ofKeyHash(keyHash: string): string {
    return `${this.namespace}key:${keyHash}`;
  }

  /** The bucket counting unknown API keys sent from a client address. */
  ofUnknownKeysFrom(address: string): string {
    return `${this.namespace}unknown-keys:${address}`;
  }
}

/** `[current, ttl]` as Redis returns it from {@link COUNT_LUA}. */
export function rateCountOf(reply: [number, number]): RateCount {
  return { current: reply[0], ttl: reply[1] };
}

/**
 * The `x-ratelimit-limit`, `x-ratelimit-remaining` and `x-ratelimit-reset` (seconds) headers of an
 * answer counted as `use`; every door sets them, and refuses past the limit ({@link limitExceeded}).
 */
export function rateLimitHeaders(use: RateUse): Record<'x-ratelimit-limit' | 'x-ratelimit-remaining' | 'x-ratelimit-reset', number> {
  return {
    'x-ratelimit-limit': use.max,
    'x-ratelimit-remaining': Math.max(0, use.max - use.current),
    'x-ratelimit-reset': Math.ceil(use.ttl / 1000),
  };
}
