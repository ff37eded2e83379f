import type { Redis, Result } from 'ioredis';
import { ArbiterError, type Role, type Scope } from '@arbiter/contracts';
import { COUNT_LUA, defineCountCommand, rateCountOf, type RateBuckets, type RateCount, type RateUse } from './rate-count.js';
import type { ApiKeyGrant } from './repositories/grants.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /**
     * KEYS: per key (and client address) looked up this turn its grant, its key's bucket and its
     * address's unknown-key bucket; ARGV: window ms, cache ttl s, person bucket prefix, then per key
     * the number of requests → per key `[grant, current, ttl, person current, person ttl]` (the
     * grant's cache ttl restarted; the requests counted for the key and its owner), or `['',
     * unknown keys, their bucket's ttl, 0, 0]` when no grant is cached (nothing counted).
     */
    arbiterGetGrantsCounted(numberOfKeys: number, ...keysThenArgs: Array<string | number>): Result<Array<string | number>, Context>;
    /** KEYS: grant, bucket, person bucket; ARGV: grant, cache ttl s, window ms → `[current, ttl, person current, person ttl]`. */
    arbiterFillGrantCounted(
      grantKey: string,
      bucket: string,
      personBucket: string,
      grant: string,
      cacheTtlSeconds: number,
      windowMs: number,
    ): Result<[number, number, number, number], Context>;
  }
}

const GET_GRANTS_COUNTED_LUA = `${COUNT_LUA}
local out = {}
local k = 0
for i = 1, #KEYS, 3 do
  k = k + 1
  local n = ARGV[3 + k]
  local grant = redis.call('GETEX', KEYS[i], 'EX', ARGV[2])
  if not grant then
    out[#out + 1] = ''
    out[#out + 1] = tonumber(redis.call('GET', KEYS[i + 2]) or '0')
    out[#out + 1] = redis.call('PTTL', KEYS[i + 2])
    out[#out + 1] = 0
    out[#out + 1] = 0
  else
    local counted = countN(KEYS[i + 1], ARGV[1], n)
    local person = {0, 0}
    local ok, g = pcall(cjson.decode, grant)
    if ok and type(g) == 'table' and type(g.orgId) == 'string' and type(g.userId) == 'string' then
      person = countN(ARGV[3] .. g.orgId .. ':' .. g.userId, ARGV[1], n)
    end
    out[#out + 1] = grant
    out[#out + 1] = counted[1]
    out[#out + 1] = counted[2]
    out[#out + 1] = person[1]
    out[#out + 1] = person[2]
  end
end
return out
`;

const FILL_GRANT_COUNTED_LUA = `${COUNT_LUA}
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX')
local counted = count(KEYS[2], ARGV[3])
local person = count(KEYS[3], ARGV[3])
return {counted[1], counted[2], person[1], person[2]}
`;

/**
 * What a cache lookup found: the grant (read from the database at `filledAt`), with the request
 * counted in the key's and its owner's rate-limit buckets; or a miss, with how many unknown keys
 * the caller's address sent in this window.
 */
export type CachedLookup = { hit: true; grant: ApiKeyGrant; filledAt: Date; rate: RateUse } | { hit: false; unknownKeys: RateCount };

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

/** Parsed grants kept by their exact cached text (content-addressed: a changed entry is a new text). */
const PARSED_MAX = 1000;

interface Lookup {
  keyHash: string;
  address: string;
  resolve: (found: CachedLookup) => void;
  reject: (err: unknown) => void;
}

/**
 * Shared (Redis) cache of API-key grants keyed by the key hash, so every replica sees the same
 * entry. Reads fill with SET NX; revocations and role changes overwrite with SET, so a request
 * that read the database before the change cannot put a stale grant back afterwards. Every hit
 * restarts the entry's TTL, so a key in use stays cached (and usable through a database outage);
 * the authenticator re-reads grants older than the TTL in the background.
 *
 * A request's lookup also counts it in its key's and its person's rate-limit buckets, in the same
 * script, and the lookups of one event-loop turn go together (flushed in `setImmediate`, no timer):
 * one Redis round trip authenticates and rate-limits every API-key request of a turn.
 */
export class ApiKeyCache {
  private pending: Lookup[] = [];
  private scheduled = false;
  private readonly parsed = new Map<string, { grant: ApiKeyGrant; filledAt: Date }>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
    private readonly buckets: RateBuckets,
  ) {
    if (typeof redis.arbiterGetGrantsCounted !== 'function') {
      redis.defineCommand('arbiterGetGrantsCounted', { lua: GET_GRANTS_COUNTED_LUA });
      redis.defineCommand('arbiterFillGrantCounted', { numberOfKeys: 3, lua: FILL_GRANT_COUNTED_LUA });
    }
    defineCountCommand(redis);
  }

  /** How long a grant is trusted before it is read again (and how long an unused entry stays). */
  get ttlMs(): number {
    return this.ttlSeconds * 1000;
  }

  /** Looks `keyHash` up for a caller at `address` (with the other lookups of this turn); see {@link CachedLookup}. */
  getCounted(keyHash: string, address: string): Promise<CachedLookup> {
    return new Promise<CachedLookup>((resolve, reject) => {
      this.pending.push({ keyHash, address, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    // The turn's lookups of one key (from one address) go as one entry counting them all: each gets
    // its own count from the total (n requests: total − n + 1 … total), as n separate counts would.
    const groups = new Map<string, Lookup[]>();
    for (const l of batch) {
      const id = `${l.keyHash} ${l.address}`;
      const group = groups.get(id);
      if (group === undefined) groups.set(id, [l]);
      else group.push(l);
    }
    const keys: string[] = [];
    const counts: number[] = [];
    for (const [first] of groups.values()) {
      keys.push(this.keyOf(first.keyHash), this.buckets.ofKeyHash(first.keyHash), this.buckets.ofUnknownKeysFrom(first.address));
    }
    for (const group of groups.values()) counts.push(group.length);
    unavailableOnError(
      this.redis.arbiterGetGrantsCounted(
        keys.length,
        ...keys,
        this.buckets.windowMs,
        this.ttlSeconds,
        this.buckets.personPrefix,
        ...counts,
      ),
    ).then(
      (reply) => {
        let at = 0;
        for (const group of groups.values()) {
          group.forEach((l, j) => {
            try {
              l.resolve(this.found(reply, at, group.length - 1 - j));
            } catch (err) {
              l.reject(err);
            }
          });
          at += 5;
        }
      },
      (err: unknown) => {
        for (const l of batch) l.reject(err);
      },
    );
  };

  /** The lookup whose key's five reply fields start at `at`; `later` requests of the same key were counted after it. */
  private found(reply: Array<string | number>, at: number, later: number): CachedLookup {
    const text = reply[at] as string;
    if (text === '') return { hit: false, unknownKeys: rateCountOf([reply[at + 1] as number, reply[at + 2] as number]) };
    const key = rateCountOf([(reply[at + 1] as number) - later, reply[at + 2] as number]);
    const person = rateCountOf([(reply[at + 3] as number) - later, reply[at + 4] as number]);
    const { grant, filledAt } = this.parse(text);
    return { hit: true, grant, filledAt, rate: this.buckets.tighter(key, person) };
  }

  private parse(text: string): { grant: ApiKeyGrant; filledAt: Date } {
    const known = this.parsed.get(text);
    if (known !== undefined) return known;
    const { filledAt, ...c } = JSON.parse(text) as CachedGrant;
    const entry = {
      grant: {
        ...c,
        expiresAt: c.expiresAt === null ? null : new Date(c.expiresAt),
        revokedAt: c.revokedAt === null ? null : new Date(c.revokedAt),
      },
      filledAt: new Date(filledAt ?? 0),
    };
    if (this.parsed.size >= PARSED_MAX) this.parsed.clear();
    this.parsed.set(text, entry);
    return entry;
  }

  /** Counts an unknown key sent from `address`. */
  async countUnknownKey(address: string): Promise<void> {
    await unavailableOnError(this.redis.arbiterCount(this.buckets.ofUnknownKeysFrom(address), this.buckets.windowMs));
  }

  /** Caches a grant read from the database unless an entry is already there, and counts the request (key and person). */
  async fillCounted(keyHash: string, grant: ApiKeyGrant): Promise<RateUse> {
    const reply = await unavailableOnError(
      this.redis.arbiterFillGrantCounted(
        this.keyOf(keyHash),
        this.buckets.ofKeyHash(keyHash),
        this.buckets.ofPerson(grant.orgId, grant.userId),
        this.encode(grant),
        this.ttlSeconds,
        this.buckets.windowMs,
      ),
    );
    return this.buckets.tighter(rateCountOf([reply[0], reply[1]]), rateCountOf([reply[2], reply[3]]));
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
