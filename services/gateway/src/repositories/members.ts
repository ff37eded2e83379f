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
 * returns the role the user now has.
 */
export async function ensureMember(db: Db, orgId: string, userId: string, role: Role): Promise<Role> {
  const known = await findRole(db, orgId, userId);
  if (known !== undefined) return known;
  await db('users').insert({ id: userId }).onConflict('id').ignore();
  await db('memberships').insert({ org_id: orgId, user_id: userId, role }).onConflict(['org_id', 'user_id']).ignore();
  const current = await findRole(db, orgId, userId);
  if (current === undefined) throw new Error(`membership of \`${userId}\` in \`${orgId}\` vanished`);
  return current;
}

/** Sets the member's role, adding the member when new; `created` tells which. */
export async function upsertMember(db: Db, orgId: string, userId: string, role: Role): Promise<{ member: MemberRow; created: boolean }> {
  await db('users').insert({ id: userId }).onConflict('id').ignore();
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
