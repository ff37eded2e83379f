import type { Role } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';

/** A membership row: one role per user and org. */
export interface MemberRow {
  readonly orgId: string;
  readonly userId: string;
  readonly role: Role;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface RawMember {
  org_id: string;
  user_id: string;
  role: Role;
  created_at: Date;
  updated_at: Date;
}

const toMember = (r: RawMember): MemberRow => ({
  orgId: r.org_id,
  userId: r.user_id,
  role: r.role,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The membership, or undefined when the user is not a member of the org. */
export async function findMember(db: Db, orgId: string, userId: string): Promise<MemberRow | undefined> {
  const row = (await db('memberships').where({ org_id: orgId, user_id: userId }).first()) as RawMember | undefined;
  return row ? toMember(row) : undefined;
}

/**
 * The membership, locked for the transaction (`for update`), or undefined when the user is not a
 * member: serialises changes that count something of one member, such as its live keys.
 */
export async function lockMember(trx: Db, orgId: string, userId: string): Promise<MemberRow | undefined> {
  const row = (await trx('memberships').where({ org_id: orgId, user_id: userId }).forUpdate().first()) as RawMember | undefined;
  return row ? toMember(row) : undefined;
}

/** Removes the membership; false when there was none. */
export async function deleteMember(db: Db, orgId: string, userId: string): Promise<boolean> {
  return (await db('memberships').where({ org_id: orgId, user_id: userId }).delete()) > 0;
}

/** The member's role in the org, or undefined when not a member. */
export async function findRole(db: Db, orgId: string, userId: string): Promise<Role | undefined> {
  const row = (await db('memberships').where({ org_id: orgId, user_id: userId }).first('role')) as Pick<RawMember, 'role'> | undefined;
  return row?.role;
}

/**
 * Makes the user a member with `role` unless already a member (then nothing changes) and
 * returns the role the user now has; `removed` (nothing changes) when an admin removed the user
 * from the org and has not added them back. The check and the insert hold the org row `for share`,
 * which {@link lockOrgForRemoval} waits for, so a removal and a first sign-in cannot interleave.
 */
export async function ensureMember(db: Db, orgId: string, userId: string, role: Role): Promise<Role | 'removed'> {
  const known = await findRole(db, orgId, userId);
  if (known !== undefined) return known;
  return db.transaction(async (trx) => {
    await trx('orgs').where({ id: orgId }).forShare().first('id');
    if (await wasRemoved(trx, orgId, userId)) return 'removed' as const;
    await trx('users').insert({ id: userId }).onConflict('id').ignore();
    await trx('memberships').insert({ org_id: orgId, user_id: userId, role }).onConflict(['org_id', 'user_id']).ignore();
    const current = await findRole(trx, orgId, userId);
    if (current === undefined) throw new Error(`membership of \`${userId}\` in \`${orgId}\` vanished`);
    return current;
  });
}

/** Holds the org row against first sign-ins ({@link ensureMember}) until the removal's transaction ends. */
export async function lockOrgForRemoval(trx: Db, orgId: string): Promise<void> {
  await trx('orgs').where({ id: orgId }).forNoKeyUpdate().first('id');
}

/** Records that `userId` was removed from the org by `removedBy`, so their bearer tokens do not make them a member again. */
export async function recordRemoval(db: Db, orgId: string, userId: string, removedBy: string): Promise<void> {
  await db('member_removals')
    .insert({ org_id: orgId, user_id: userId, removed_by: removedBy })
    .onConflict(['org_id', 'user_id'])
    .merge({ removed_at: db.fn.now(), removed_by: removedBy });
}

/** Whether an admin removed `userId` from the org and has not added them back. */
export async function wasRemoved(db: Db, orgId: string, userId: string): Promise<boolean> {
  return (await db('member_removals').where({ org_id: orgId, user_id: userId }).first('user_id')) !== undefined;
}

/** Sets the member's role, adding the member when new (a removed user too); `created` tells which. */
export async function upsertMember(db: Db, orgId: string, userId: string, role: Role): Promise<{ member: MemberRow; created: boolean }> {
  await db('users').insert({ id: userId }).onConflict('id').ignore();
  // Added back: the user's bearer tokens are accepted again.
  await db('member_removals').where({ org_id: orgId, user_id: userId }).delete();
  const rows: Array<RawMember & { inserted: boolean }> = await db('memberships')
    .insert({ org_id: orgId, user_id: userId, role })
    .onConflict(['org_id', 'user_id'])
    .merge({ role, updated_at: db.fn.now() })
    .returning(['org_id', 'user_id', 'role', 'created_at', 'updated_at', db.raw('(xmax = 0) as inserted')]);
  const row = rows[0];
  if (!row) throw new Error(`upsert of member \`${userId}\` returned nothing`);
  return { member: toMember(row), created: row.inserted };
}

/** Locks the org's admin memberships for the transaction and returns their user ids. */
export async function lockAdmins(trx: Db, orgId: string): Promise<string[]> {
  const rows = (await trx('memberships').where({ org_id: orgId, role: 'admin' }).forUpdate().select('user_id')) as Pick<
    RawMember,
    'user_id'
  >[];
  return rows.map((r) => r.user_id);
}

/** One page of members ordered by user id, starting after `afterUserId`. */
export async function listMembers(db: Db, orgId: string, page: { afterUserId?: string; limit: number }): Promise<MemberRow[]> {
  const q = db('memberships').where({ org_id: orgId });
  if (page.afterUserId !== undefined) q.andWhere('user_id', '>', page.afterUserId);
  const rows = (await q.orderBy('user_id', 'asc').limit(page.limit).select()) as RawMember[];
  return rows.map(toMember);
}
