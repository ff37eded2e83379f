import { ArbiterError, type Principal } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';
import { RetryLaterError } from './errors.js';
import { findGrantByHash, type ApiKeyGrant } from './repositories/grants.js';
import type { ApiKeyCache } from './key-cache.js';
import { secondsLeft, type RateUse } from './rate-count.js';
import { hashApiKey } from './secret.js';

/**
 * An authenticated caller and its request's count against its rate limit (`null`: not counted, a
 * bearer caller's count being lost to a Redis outage).
 */
export interface Caller {
  readonly principal: Principal;
  readonly rate: RateUse | null;
}

/** What {@link KeyAuthenticator} is built from. */
export interface KeyAuthenticatorOptions {
  readonly db: Db;
  readonly cache: ApiKeyCache;
  /** Unknown keys one address may send per rate-limit window before its cache misses are refused. */
  readonly unknownKeysMax: number;
  readonly now?: () => Date;
  readonly log?: (err: unknown, message: string) => void;
  /** Told of every key that authenticated (when it was last used, written in batches). */
  readonly usage?: { used(apiKeyId: string): void };
}

/** Longest `x-api-key` value looked up; anything longer cannot be one of ours. */
const MAX_KEY_LENGTH = 512;
/** After a failed re-read of a grant (database down), the next attempt for that key waits this long. */
const REVALIDATE_BACKOFF_MS = 5000;
/** Keys whose re-read is in flight or backing off; bounded, since only cached (known) keys enter. */
const MAX_TRACKED_REVALIDATIONS = 10_000;

/**
 * Turns a personal API key into the caller's {@link Principal}, or throws `unauthenticated`; the
 * same step counts the request against the key's and its owner's rate limits. Every HTTP door that
 * takes API keys (the gateway, the mcp service's own port) authenticates with it, against the same
 * Redis cache and counters and the same database, so a key's limit is one over all of them.
 */
export class KeyAuthenticator {
  /** Key hash → time before which no re-read starts (in flight, or backing off after a failure). */
  private readonly revalidating = new Map<string, number>();
  /** The principal of each cached grant (the cache hands out one grant object per cached text), so requests of one key share it. */
  private readonly principals = new WeakMap<ApiKeyGrant, Principal>();
  protected readonly db: Db;
  private readonly cache: ApiKeyCache;
  private readonly unknownKeysMax: number;
  private readonly now: () => Date;
  private readonly log: (err: unknown, message: string) => void;
  private readonly usage: { used(apiKeyId: string): void } | undefined;

  constructor(options: KeyAuthenticatorOptions) {
    this.db = options.db;
    this.cache = options.cache;
    this.unknownKeysMax = options.unknownKeysMax;
    this.now = options.now ?? (() => new Date());
    this.log = options.log ?? (() => undefined);
    this.usage = options.usage;
  }

  /**
   * Authenticates a personal API key sent from `address`: known, not revoked, not expired, owner
   * still a member. The principal carries the owner's current role and the key's scopes; the
   * effective rights are their intersection (`capabilitiesOf`). Every lookup of a known key counts
   * the request against the key's and its owner's rate limits, refused or not. Unknown keys are counted per address:
   * past {@link unknownKeysMax} in a window, that address's keys are looked up in the cache only
   * (429 on a miss), so guessing keys cannot keep the database busy.
   *
   * A cached grant older than the cache TTL is still used for this request and re-read in the
   * background, so a key in use keeps working through a PostgreSQL outage (its cache entry's TTL
   * restarts on every use), while revocations and role changes, which overwrite the entry, still
   * reach every replica at once.
   */
  async byApiKey(key: string, address: string): Promise<Caller> {
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw invalidKey();
    const keyHash = hashApiKey(key);
    const cached = await this.cache.getCounted(keyHash, address);
    if (cached.hit) {
      if (Date.now() - cached.filledAt.getTime() > this.cache.ttlMs) this.revalidate(keyHash);
      return { principal: this.principalOf(cached.grant), rate: cached.rate };
    }
    if (cached.unknownKeys.current >= this.unknownKeysMax) {
      const seconds = secondsLeft(cached.unknownKeys);
      throw new RetryLaterError('rate_limited', `too many unknown API keys from this address; retry in ${seconds} s`, seconds);
    }
    const grant = await findGrantByHash(this.db, keyHash);
    if (grant === undefined) {
      await this.cache.countUnknownKey(address);
      throw invalidKey();
    }
    const rate = await this.cache.fillCounted(keyHash, grant);
    return { principal: this.principalOf(grant), rate };
  }

  /**
   * Reads the grant of `key` from the database again, because its cached one named a key the
   * database does not have (`StaleGrantError`, src/errors.ts): caches it in place of the stale one and
   * answers the caller it now is; `unauthenticated` when the database does not know the key.
   */
  async reread(key: string): Promise<Principal> {
    const keyHash = hashApiKey(key);
    const grant = await findGrantByHash(this.db, keyHash);
    if (grant === undefined) {
      await this.cache.delete(keyHash);
      throw invalidKey();
    }
    await this.cache.overwrite(keyHash, grant);
    return this.principalOf(grant);
  }

  /** Re-reads a stale grant into the cache, at most one read per key at a time, backing off after a failure. */
  private revalidate(keyHash: string): void {
    const now = Date.now();
    if ((this.revalidating.get(keyHash) ?? 0) > now) return;
    if (this.revalidating.size >= MAX_TRACKED_REVALIDATIONS) {
      for (const [hash, until] of this.revalidating) if (until <= now) this.revalidating.delete(hash);
      if (this.revalidating.size >= MAX_TRACKED_REVALIDATIONS) return;
    }
    this.revalidating.set(keyHash, Number.POSITIVE_INFINITY);
    findGrantByHash(this.db, keyHash)
      .then((grant) => (grant === undefined ? this.cache.delete(keyHash) : this.cache.overwrite(keyHash, grant)))
      .then(
        () => this.revalidating.delete(keyHash),
        (err: unknown) => {
          this.revalidating.set(keyHash, Date.now() + REVALIDATE_BACKOFF_MS);
          this.log(err, 'could not re-read a cached API-key grant; the cached one stays in use');
        },
      );
  }

  private principalOf(grant: ApiKeyGrant): Principal {
    if (grant.revokedAt !== null) throw new ArbiterError('unauthenticated', 'the API key has been revoked');
    if (grant.expiresAt !== null && grant.expiresAt.getTime() <= this.now().getTime()) {
      throw new ArbiterError('unauthenticated', 'the API key has expired');
    }
    if (grant.role === null) throw new ArbiterError('unauthenticated', 'the owner of the API key is no longer a member');
    this.usage?.used(grant.apiKeyId);
    let principal = this.principals.get(grant);
    if (principal === undefined) {
      principal = Object.freeze({
        orgId: grant.orgId,
        userId: grant.userId,
        role: grant.role,
        apiKeyId: grant.apiKeyId,
        scopes: grant.scopes,
        ...(grant.expiresAt !== null ? { keyExpiresAt: grant.expiresAt.toISOString() } : {}),
      });
      this.principals.set(grant, principal);
    }
    return principal;
  }
}

function invalidKey(): ArbiterError {
  return new ArbiterError('unauthenticated', 'the API key is not valid');
}
