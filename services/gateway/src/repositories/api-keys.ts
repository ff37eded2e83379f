import type { Scope } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';

// What authentication reads of a key (shared with every HTTP door) lives in @arbiter/key-auth.
export { findGrantByHash, touchLastUsed, type ApiKeyGrant } from '@arbiter/key-auth';

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
  /** The key this one was created with; null when created with a bearer token (or at bootstrap). */
  readonly createdWithKeyId: string | null;
  /** When the key was last used, to within the usage flush interval; null when never. */
  readonly lastUsedAt: Date | null;
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
  created_with_key_id: string | null;
  last_used_at: Date | null;
}

const KEY_COLUMNS = [
  'id',
  'org_id',
  'user_id',
  'name',
  'scopes',
  'created_at',
  'expires_at',
  'revoked_at',
  'created_with_key_id',
  'last_used_at',
];

const toRow = (r: RawKey): ApiKeyRow => ({
  apiKeyId: r.id,
  orgId: r.org_id,
  userId: r.user_id,
  name: r.name,
  scopes: r.scopes,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  createdWithKeyId: r.created_with_key_id,
  lastUsedAt: r.last_used_at,
});

/** Stores a new key (its secret only as `keyHash`). */
export async function insertApiKey(
  db: Db,
  key: {
    apiKeyId: string;
    orgId: string;
    userId: string;
    name: string;
    scopes: Scope[];
    keyHash: string;
    expiresAt: Date | null;
    createdWithKeyId?: string;
  },
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
      created_with_key_id: key.createdWithKeyId ?? null,
    })
    .returning(KEY_COLUMNS);
  const row = rows[0];
  if (!row) throw new Error('insert of api key returned nothing');
  return toRow(row);
}

/** The key with that id in that org, or undefined (another org's key is not found). */
export async function findApiKey(db: Db, orgId: string, apiKeyId: string): Promise<ApiKeyRow | undefined> {
  const row: RawKey | undefined = await db('api_keys').where({ org_id: orgId, id: apiKeyId }).first(KEY_COLUMNS);
  return row ? toRow(row) : undefined;
}

/** One page of the org's keys that are not revoked, every owner's, ordered by id (creation order). */
export async function listOrgApiKeys(db: Db, orgId: string, page: { afterId?: string; limit: number }): Promise<ApiKeyRow[]> {
  const q = db('api_keys').where({ org_id: orgId }).whereNull('revoked_at');
  if (page.afterId !== undefined) q.andWhere('id', '>', page.afterId);
  const rows: RawKey[] = await q.orderBy('id', 'asc').limit(page.limit).select(KEY_COLUMNS);
  return rows.map(toRow);
}

/** Ids of the member's keys that are not revoked. */
export async function activeKeyIdsOfMember(db: Db, orgId: string, userId: string): Promise<string[]> {
  const rows: Array<{ id: string }> = await db('api_keys').where({ org_id: orgId, user_id: userId }).whereNull('revoked_at').select('id');
  return rows.map((r) => r.id);
}

/** How many keys the member holds that are neither revoked nor expired at `now`. */
export async function countLiveKeys(db: Db, orgId: string, userId: string, now: Date): Promise<number> {
  const row = (await db('api_keys')
    .where({ org_id: orgId, user_id: userId })
    .whereNull('revoked_at')
    .andWhere((w) => void w.whereNull('expires_at').orWhere('expires_at', '>', now))
    .count<{ n: string }>('* as n')
    .first()) as { n: string | number } | undefined;
  return Number(row?.n ?? 0);
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

/** A key touched by a revocation. */
export interface RevokedKey {
  apiKeyId: string;
  keyHash: string;
  name: string;
  userId: string;
  /** False when the key was already revoked before this call. */
  newlyRevoked: boolean;
}

/**
 * Revokes the key and every key created from it, transitively, keeping each one's first revocation
 * time. Returns every key of that lineage (with its hash, so the caller can refresh caches, and
 * whether this call revoked it); nothing when the key is not in that org.
 */
export async function revokeApiKeyAndDescendants(db: Db, orgId: string, apiKeyId: string): Promise<RevokedKey[]> {
  const result = (await db.raw(
    `with recursive lineage(id) as (
       select id from api_keys where org_id = ? and id = ?
       union
       select k.id from api_keys k join lineage l on k.created_with_key_id = l.id
     ),
     before as (select id, revoked_at from api_keys where id in (select id from lineage) for update)
     update api_keys k set revoked_at = coalesce(k.revoked_at, now())
       from before b where k.id = b.id
     returning k.id, k.key_hash, k.name, k.user_id, b.revoked_at is null as newly_revoked`,
    [orgId, apiKeyId],
  )) as { rows: Array<{ id: string; key_hash: string; name: string; user_id: string; newly_revoked: boolean }> };
  return result.rows.map((r) => ({ apiKeyId: r.id, keyHash: r.key_hash, name: r.name, userId: r.user_id, newlyRevoked: r.newly_revoked }));
}

/** Hashes of every key the user holds in the org (to refresh cached grants after a role change). */
export async function keyHashesOfMember(db: Db, orgId: string, userId: string): Promise<string[]> {
  const rows: Array<{ key_hash: string }> = await db('api_keys').where({ org_id: orgId, user_id: userId }).select('key_hash');
  return rows.map((r) => r.key_hash);
}

/** Whether the org has an active key with scope `admin` owned by one of its admins. */
export async function hasActiveAdminKey(db: Db, orgId: string): Promise<boolean> {
  const row: unknown = await db('api_keys as k')
    .join('memberships as m', function joinOwner() {
      this.on('m.org_id', '=', 'k.org_id').andOn('m.user_id', '=', 'k.user_id');
    })
    .where('k.org_id', orgId)
    .andWhere('m.role', 'admin')
    .whereNull('k.revoked_at')
    .andWhere((w) => {
      void w.whereNull('k.expires_at').orWhere('k.expires_at', '>', db.fn.now());
    })
    .andWhereRaw("'admin' = any(k.scopes)")
    .first('k.id');
  return row !== undefined;
}

/** The key row stored under that hash, or undefined. */
export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRow | undefined> {
  const row: RawKey | undefined = await db('api_keys').where({ key_hash: keyHash }).first(KEY_COLUMNS);
  return row ? toRow(row) : undefined;
}
