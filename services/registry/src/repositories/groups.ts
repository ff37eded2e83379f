import type { MemberType } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';

/** A group as stored. */
export interface GroupRow {
  id: string;
  orgId: string;
  name: string;
  description: string;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A membership as stored. */
export interface MemberRow {
  groupId: string;
  baseId: string;
  memberType: MemberType;
  addedBy: string;
  addedAt: Date;
}

/** `registry_groups` columns as pg returns them. */
interface GroupColumns {
  id: string;
  org_id: string;
  name: string;
  description: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** `registry_group_members` columns as pg returns them. */
interface MemberColumns {
  group_id: string;
  base_id: string;
  member_type: MemberType;
  added_by: string;
  added_at: Date;
}

function groupOf(r: GroupColumns): GroupRow {
  return {
    id: r.id,
    orgId: r.org_id,
    name: r.name,
    description: r.description,
    createdBy: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function memberOf(r: MemberColumns): MemberRow {
  return { groupId: r.group_id, baseId: r.base_id, memberType: r.member_type, addedBy: r.added_by, addedAt: r.added_at };
}

/** Inserts a group. */
export async function insertGroup(db: Db, g: GroupRow): Promise<void> {
  await db('registry_groups').insert({
    id: g.id,
    org_id: g.orgId,
    name: g.name,
    description: g.description,
    created_by: g.createdBy,
    created_at: g.createdAt,
    updated_at: g.updatedAt,
  });
}

/** A group of one org by id, optionally locked until the transaction ends. */
export async function findGroup(db: Db, id: string, orgId: string, lock = false): Promise<GroupRow | null> {
  const q = db('registry_groups').where({ id, org_id: orgId });
  if (lock) q.forUpdate();
  const row = (await q.first()) as GroupColumns | undefined;
  return row ? groupOf(row) : null;
}

/** Changes a group's metadata. */
export async function updateGroup(db: Db, id: string, set: { name?: string; description?: string }, at: Date): Promise<GroupRow> {
  const [row] = (await db('registry_groups')
    .where({ id })
    .update({
      ...(set.name !== undefined ? { name: set.name } : {}),
      ...(set.description !== undefined ? { description: set.description } : {}),
      updated_at: at,
    })
    .returning('*')) as GroupColumns[];
  return groupOf(row);
}

/** Deletes a group; its memberships go with it (ON DELETE CASCADE). */
export async function deleteGroup(db: Db, id: string): Promise<void> {
  await db('registry_groups').where({ id }).delete();
}

/** A page of an org's groups, newest first, optionally by name. Fetches `limit + 1`. */
export async function listGroups(db: Db, opts: { orgId: string; q?: string; beforeId?: string; limit: number }): Promise<GroupRow[]> {
  const q = db('registry_groups').where({ org_id: opts.orgId });
  if (opts.q !== undefined) q.andWhereRaw(`name ilike ? escape '\\'`, [`%${opts.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]);
  if (opts.beforeId !== undefined) q.andWhere('id', '<', opts.beforeId);
  const rows = (await q.orderBy('id', 'desc').limit(opts.limit + 1)) as GroupColumns[];
  return rows.map(groupOf);
}

/** Adds a membership; false when the base is already a member. */
export async function insertMember(db: Db, m: MemberRow & { orgId: string }): Promise<boolean> {
  const rows = await db('registry_group_members')
    .insert({
      group_id: m.groupId,
      org_id: m.orgId,
      base_id: m.baseId,
      member_type: m.memberType,
      added_by: m.addedBy,
      added_at: m.addedAt,
    })
    .onConflict(['group_id', 'base_id'])
    .ignore()
    .returning('base_id');
  return rows.length > 0;
}

/** A membership, if any. */
export async function findMember(db: Db, groupId: string, baseId: string): Promise<MemberRow | null> {
  const row = (await db('registry_group_members').where({ group_id: groupId, base_id: baseId }).first()) as MemberColumns | undefined;
  return row ? memberOf(row) : null;
}

/** Removes a membership. */
export async function deleteMember(db: Db, groupId: string, baseId: string): Promise<void> {
  await db('registry_group_members').where({ group_id: groupId, base_id: baseId }).delete();
}

/** The groups of each of `baseIds` (one query for all of them), by name: base id → `{groupId, name}`s. */
export async function groupsOfBases(db: Db, orgId: string, baseIds: string[]): Promise<Map<string, { groupId: string; name: string }[]>> {
  const out = new Map<string, { groupId: string; name: string }[]>();
  if (baseIds.length === 0) return out;
  const rows = (await db('registry_group_members as m')
    .join('registry_groups as g', 'g.id', 'm.group_id')
    .where('m.org_id', orgId)
    .whereIn('m.base_id', baseIds)
    .orderBy(['g.name', 'g.id'])
    .select('m.base_id', 'g.id', 'g.name')) as { base_id: string; id: string; name: string }[];
  for (const r of rows) {
    const list = out.get(r.base_id) ?? [];
    list.push({ groupId: r.id, name: r.name });
    out.set(r.base_id, list);
  }
  return out;
}
