import type { Redis } from 'ioredis';
import { ArbiterError, type Role, type Scope } from '@arbiter/contracts';
import type { ApiKeyGrant } from '../repositories/api-keys.js';

interface CachedGrant {
  apiKeyId: string;
  orgId: string;
  userId: string;
  scopes: Scope[];
  expiresAt: string | null;
  revokedAt: string | null;
  role: Role | null;
}

/**
 * Shared (Redis) cache of API-key grants keyed by the key hash, so every replica sees the same
 * entry. Reads fill with SET NX; revocations and role changes overwrite with SET, so a request
 * that read the database before the change cannot put a stale grant back afterwards.
 */
export class ApiKeyCache {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  /** The cached grant, or undefined on a miss. */
  async get(keyHash: string): Promise<ApiKeyGrant | undefined> {
    const raw = await unavailableOnError(this.redis.get(this.keyOf(keyHash)));
    if (raw === null) return undefined;
    const c = JSON.parse(raw) as CachedGrant;
    return {
      ...c,
      expiresAt: c.expiresAt === null ? null : new Date(c.expiresAt),
      revokedAt: c.revokedAt === null ? null : new Date(c.revokedAt),
    };
  }

  /** Caches a grant read from the database unless an entry is already there. */
  async fill(keyHash: string, grant: ApiKeyGrant): Promise<void> {
    await unavailableOnError(this.redis.set(this.keyOf(keyHash), this.encode(grant), 'EX', this.ttlSeconds, 'NX'));
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
