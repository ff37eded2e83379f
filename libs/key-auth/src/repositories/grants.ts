import { ArbiterError, type Role, type Scope } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';

// The reads and the one write authentication makes in the gateway's database (tables \`api_keys\`,
// \`memberships\`, \`gateway_installation\`, created by the gateway's migrations): every door that
// authenticates API keys makes them, against the same database.

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

/** The columns {@link findGrantByHash} reads. */
interface GrantRow {
  id: string;
  org_id: string;
  user_id: string;
  scopes: Scope[];
  expires_at: Date | null;
  revoked_at: Date | null;
  role: Role | null;
}

/** The grant behind a key hash, joined with the owner's current role; undefined when unknown. */
export async function findGrantByHash(db: Db, keyHash: string): Promise<ApiKeyGrant | undefined> {
  const row = (await db('api_keys as k')
    .leftJoin('memberships as m', function joinOwner() {
      this.on('m.org_id', '=', 'k.org_id').andOn('m.user_id', '=', 'k.user_id');
    })
    .where('k.key_hash', keyHash)
    .first('k.id', 'k.org_id', 'k.user_id', 'k.scopes', 'k.expires_at', 'k.revoked_at', 'm.role')) as GrantRow | undefined;
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

/** Records when keys were last used, in one statement (a later time never moves back). */
export async function touchLastUsed(db: Db, uses: ReadonlyMap<string, Date>): Promise<void> {
  if (uses.size === 0) return;
  await db.raw(
    `update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, u.at), u.at)
       from unnest(?::uuid[], ?::timestamptz[]) as u(id, at) where k.id = u.id`,
    [[...uses.keys()], [...uses.values()]],
  );
}

/** The id of the database this gateway runs on, made once by its migration (a restored backup keeps it; a new database has another). */
export async function installationId(db: Db): Promise<string> {
  const row = (await db('gateway_installation').first('id')) as { id: string } | undefined;
  if (row === undefined) {
    throw new ArbiterError(
      'dependency_unavailable',
      'the identity database is not set up yet: the gateway creates its tables when it first starts; retry later',
    );
  }
  return row.id;
}
