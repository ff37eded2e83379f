import type { Role, Scope } from '@arbiter/contracts';
import type { Db } from '../db/database.js';

/** An API key as stored, without its hash. */
export interface ApiKeyRow {
  readonly apiKeyId: string;
  readonly orgId: string;
  readonly userId: string;
  readonly name: string;
  readonly scopes: Scope[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

/** What authentication needs about a key: the row plus the owner's current role. */
export interface ApiKeyGrant {
  readonly apiKeyId: string;
  readonly orgId: string;
  readonly userId: string;
  readonly scopes: Scope[];
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  /** The owner's role now; null when the owner is no longer a member. */
  readonly role: Role | null;
}

interface RawKey {
  id: string;
  org_id: string;
  user_id: string;
  name: string;
  scopes: Scope[];
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

const KEY_COLUMNS = ['id', 'org_id', 'user_id', 'name', 'scopes', 'created_at', 'expires_at', 'revoked_at'];

const toRow = (r: RawKey): ApiKeyRow => ({
  apiKeyId: r.id,
  orgId: r.org_id,
  userId: r.user_id,
  name: r.name,
  scopes: r.scopes,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

/** Stores a new key (its secret only as `keyHash`). */
export async function insertApiKey(
  db: Db,
  key: { apiKeyId: string; orgId: string; userId: string; name: string; scopes: Scope[]; keyHash: string; expiresAt: Date | null },
): Promise<ApiKeyRow> {
  const rows: RawKey[] = await db('api_keys')
    .insert({
      id: key.apiKeyId,
      org_id: key.orgId,
      user_id: key.userId,
      name: key.name,
      scopes: key.scopes,
      key_hash: key.keyHash,
      expires_at: key.expiresAt,
    })
    .returning(KEY_COLUMNS);
  const row = rows[0];
  if (!row) throw new Error('insert of api key returned nothing');
  return toRow(row);
}

/** The grant behind a key hash, joined with the owner's current role; undefined when unknown. */
export async function findGrantByHash(db: Db, keyHash: string): Promise<ApiKeyGrant | undefined> {
  const row = await db('api_keys as k')
    .leftJoin('memberships as m', function joinOwner() {
      this.on('m.org_id', '=', 'k.org_id').andOn('m.user_id', '=', 'k.user_id');
    })
    .where('k.key_hash', keyHash)
    .first('k.id', 'k.org_id', 'k.user_id', 'k.scopes', 'k.expires_at', 'k.revoked_at', 'm.role');
  if (!row) return undefined;
  return {
    apiKeyId: row.id,
    orgId: row.org_id,
    userId: row.user_id,
    scopes: row.scopes,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    role: row.role ?? null,
  };
}

/** The key with that id in that org, or undefined (another org's key is not found). */
export async function findApiKey(db: Db, orgId: string, apiKeyId: string): Promise<ApiKeyRow | undefined> {
  const row: RawKey | undefined = await db('api_keys').where({ org_id: orgId, id: apiKeyId }).first(KEY_COLUMNS);
  return row ? toRow(row) : undefined;
}

/** One page of a user's keys that are not revoked, ordered by id (creation order). */
export async function listOwnApiKeys(
  db: Db,
  orgId: string,
  userId: string,
  page: { afterId?: string; limit: number },
): Promise<ApiKeyRow[]> {
  const q = db('api_keys').where({ org_id: orgId, user_id: userId }).whereNull('revoked_at');
  if (page.afterId !== undefined) q.andWhere('id', '>', page.afterId);
  const rows: RawKey[] = await q.orderBy('id', 'asc').limit(page.limit).select(KEY_COLUMNS);
  return rows.map(toRow);
}

/**
 * Marks the key revoked (keeping the first revocation time) and returns the hash, so the caller
 * can invalidate caches; undefined when the key is not in that org.
 */
export async function revokeApiKey(db: Db, orgId: string, apiKeyId: string): Promise<string | undefined> {
  const rows: Array<{ key_hash: string }> = await db('api_keys')
    .where({ org_id: orgId, id: apiKeyId })
    .update({ revoked_at: db.raw('coalesce(revoked_at, now())') })
    .returning(['key_hash']);
  return rows[0]?.key_hash;
}

/** Hashes of every key the user holds in the org (to refresh cached grants after a role change). */
export async function keyHashesOfMember(db: Db, orgId: string, userId: string): Promise<string[]> {
  const rows: Array<{ key_hash: string }> = await db('api_keys').where({ org_id: orgId, user_id: userId }).select('key_hash');
  return rows.map((r) => r.key_hash);
}

/** Whether the org has an active key with scope `admin` owned by one of its admins. */
export async function hasActiveAdminKey(db: Db, orgId: string): Promise<boolean> {
  const row = await db('api_keys as k')
    .join('memberships as m', function joinOwner() {
      this.on('m.org_id', '=', 'k.org_id').andOn('m.user_id', '=', 'k.user_id');
    })
    .where('k.org_id', orgId)
    .andWhere('m.role', 'admin')
    .whereNull('k.revoked_at')
    .andWhere((w) => w.whereNull('k.expires_at').orWhere('k.expires_at', '>', db.fn.now()))
    .andWhereRaw("'admin' = any(k.scopes)")
    .first('k.id');
  return row !== undefined;
}

/** The key row stored under that hash, or undefined. */
export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRow | undefined> {
  const row: RawKey | undefined = await db('api_keys').where({ key_hash: keyHash }).first(KEY_COLUMNS);
  return row ? toRow(row) : undefined;
}
