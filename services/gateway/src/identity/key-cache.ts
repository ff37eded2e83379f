import type { Redis, Result } from 'ioredis';
import { ArbiterError, type Role, type Scope } from '@arbiter/contracts';
import { COUNT_LUA, defineCountCommand, rateCountOf, type RateBuckets, type RateCount } from '../http/rate-count.js';
import type { ApiKeyGrant } from '../repositories/api-keys.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /**
     * KEYS: grant, bucket, the address's unknown-key bucket; ARGV: window ms, cache ttl s →
     * `[grant, current, ttl]` (the grant's cache ttl restarted), or `['', unknown keys, their
     * bucket's ttl]` when no grant is cached (nothing counted).
     */
    arbiterGetGrantCounted(
      grantKey: string,
      bucket: string,
      failures: string,
      windowMs: number,
      cacheTtlSeconds: number,
    ): Result<[string, number, number], Context>;
    /** KEYS: grant, bucket; ARGV: grant, cache ttl s, window ms → `[current, ttl]`. */
    arbiterFillGrantCounted(
      grantKey: string,
      bucket: string,
      grant: string,
      cacheTtlSeconds: number,
      windowMs: number,
    ): Result<[number, number], Context>;
  }
}

const GET_GRANT_COUNTED_LUA = `${COUNT_LUA}
local grant = redis.call('GET', KEYS[1])
if not grant then
  return {'', tonumber(redis.call('GET', KEYS[3]) or '0'), redis.call('PTTL', KEYS[3])}
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
local counted = count(KEYS[2], ARGV[1])
return {grant, counted[1], counted[2]}
`;

const FILL_GRANT_COUNTED_LUA = `${COUNT_LUA}
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX')
return count(KEYS[2], ARGV[3])
`;

/**
 * What a cache lookup found: the grant (read from the database at `filledAt`), with the request
 * counted in the key's rate-limit bucket; or a miss, with how many unknown keys the caller's
 * address sent in this window.
 */
export type CachedLookup = { hit: true; grant: ApiKeyGrant; filledAt: Date; rateCount: RateCount } | { hit: false; unknownKeys: RateCount };

interface CachedGrant {
  apiKeyId: string;
  orgId: string;
  userId: string;
  scopes: Scope[];
  expiresAt: string | null;
  revokedAt: string | null;
  role: Role | null;
  /** When the grant was read from the database (ISO 8601); absent in entries of older versions. */
  filledAt?: string;
}

/**
 * Shared (Redis) cache of API-key grants keyed by the key hash, so every replica sees the same
 * entry. Reads fill with SET NX; revocations and role changes overwrite with SET, so a request
 * that read the database before the change cannot put a stale grant back afterwards. Every hit
 * restarts the entry's TTL, so a key in use stays cached (and usable through a database outage);
 * the authenticator re-reads grants older than the TTL in the background.
 *
 * A request's lookup also counts it in the key's rate-limit bucket, in the same script: one
 * Redis round trip authenticates and rate-limits an API-key request.
 */
export class ApiKeyCache {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
    private readonly buckets: RateBuckets,
  ) {
    if (typeof redis.arbiterGetGrantCounted !== 'function') {
      redis.defineCommand('arbiterGetGrantCounted', { numberOfKeys: 3, lua: GET_GRANT_COUNTED_LUA });
      redis.defineCommand('arbiterFillGrantCounted', { numberOfKeys: 2, lua: FILL_GRANT_COUNTED_LUA });
    }
    defineCountCommand(redis);
  }

  /** How long a grant is trusted before it is read again (and how long an unused entry stays). */
  get ttlMs(): number {
    return this.ttlSeconds * 1000;
  }

  /** Looks `keyHash` up for a caller at `address`; see {@link CachedLookup}. */
  async getCounted(keyHash: string, address: string): Promise<CachedLookup> {
    const reply = await unavailableOnError(
      this.redis.arbiterGetGrantCounted(
        this.keyOf(keyHash),
        this.buckets.ofKeyHash(keyHash),
        this.buckets.ofUnknownKeysFrom(address),
        this.buckets.windowMs,
        this.ttlSeconds,
      ),
    );
    if (reply[0] === '') return { hit: false, unknownKeys: rateCountOf([reply[1], reply[2]]) };
    const { filledAt, ...c } = JSON.parse(reply[0]) as CachedGrant;
    const grant: ApiKeyGrant = {
      ...c,
      expiresAt: c.expiresAt === null ? null : new Date(c.expiresAt),
      revokedAt: c.revokedAt === null ? null : new Date(c.revokedAt),
    };
    return { hit: true, grant, filledAt: new Date(filledAt ?? 0), rateCount: rateCountOf([reply[1], reply[2]]) };
  }

  /** Counts an unknown key sent from `address`. */
  async countUnknownKey(address: string): Promise<void> {
    await unavailableOnError(this.redis.arbiterCount(this.buckets.ofUnknownKeysFrom(address), this.buckets.windowMs));
  }

  /** Caches a grant read from the database unless an entry is already there, and counts the request. */
  async fillCounted(keyHash: string, grant: ApiKeyGrant): Promise<RateCount> {
    const reply = await unavailableOnError(
      this.redis.arbiterFillGrantCounted(
        this.keyOf(keyHash),
        this.buckets.ofKeyHash(keyHash),
        this.encode(grant),
        this.ttlSeconds,
        this.buckets.windowMs,
      ),
    );
    return rateCountOf(reply);
  }

  /** Replaces the entry with the grant as it is after a change (revocation, new role). */
  async overwrite(keyHash: string, grant: ApiKeyGrant): Promise<void> {
    await unavailableOnError(this.redis.set(this.keyOf(keyHash), this.encode(grant), 'EX', this.ttlSeconds));
  }

  /** Drops the entry (the next lookup reads the database). */
  async delete(keyHash: string): Promise<void> {
    await unavailableOnError(this.redis.del(this.keyOf(keyHash)));
  }

  private keyOf(keyHash: string): string {
    return `${this.prefix}apikey:${keyHash}`;
  }

  private encode(g: ApiKeyGrant): string {
    const c: CachedGrant = {
      apiKeyId: g.apiKeyId,
      orgId: g.orgId,
      userId: g.userId,
      scopes: g.scopes,
      expiresAt: g.expiresAt?.toISOString() ?? null,
      revokedAt: g.revokedAt?.toISOString() ?? null,
      role: g.role,
      filledAt: new Date().toISOString(),
    };
    return JSON.stringify(c);
  }
}

/** Redis failures are infrastructure faults (503), never a reason to answer 4xx. */
async function unavailableOnError<T>(op: Promise<T>): Promise<T> {
  try {
    return await op;
  } catch (err) {
    throw new ArbiterError('dependency_unavailable', 'the key cache (Redis) is unavailable', undefined, { cause: err });
  }
}
