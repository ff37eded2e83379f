import { ArbiterError, newEvent, type ArbiterEvent, type MemberType, type Principal } from '@arbiter/contracts';
import { cursorField, decodeCursor, pageFrom, type EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { z } from 'zod';
import { isAdmin, requireCapability } from './domain/access.js';
import { isUuid, newId } from './domain/ids.js';
import {
  deleteGroup,
  deleteMember,
  findGroup,
  findMember,
  groupsOfBases,
  insertGroup,
  insertMember,
  listGroups,
  updateGroup,
  type GroupRow,
  type MemberRow,
} from './repositories/groups.js';
import { findBase } from './repositories/records.js';

const GroupCursor = z.object({ id: cursorField.uuid() });

/**
 * Groups of policy and flow bases (docs/api.md#policies-and-flows): org-wide; editors and up create
 * them; their creator or an admin changes, deletes and manages members of them. A membership
 * names a base and survives the base's soft deletion (hidden from the member lists).
 */
export class GroupsService {
  constructor(private readonly deps: { db: Knex; events: EventOutbox<Knex.Transaction> }) {}

  /** Creates a group. */
  async create(p: Principal, input: { name: string; description: string }): Promise<GroupRow> {
    requireCapability(p, 'edit', 'create groups');
    const now = new Date();
    const group: GroupRow = {
      id: newId(),
      orgId: p.orgId,
      name: input.name,
      description: input.description,
      createdBy: p.userId,
      createdAt: now,
      updatedAt: now,
    };
    await this.commit(async (trx) => {
      await insertGroup(trx, group);
      return [newEvent('created', p, { type: 'group', id: group.id }, { name: group.name }, { at: now })];
    });
    return group;
  }

  /** The groups containing each of the bases, in one look-up; bases of no group are absent. */
  async ofBases(p: Principal, baseIds: string[]): Promise<Map<string, { groupId: string; name: string }[]>> {
    return groupsOfBases(this.deps.db, p.orgId, baseIds);
  }

  /** A group of the caller's org. */
  async get(p: Principal, groupId: string): Promise<GroupRow> {
    requireCapability(p, 'view', 'view groups');
    return this.load(this.deps.db, p, groupId);
  }

  /** Changes a group's name or description (creator or admin). */
  async update(p: Principal, groupId: string, set: { name?: string; description?: string }): Promise<GroupRow> {
    requireCapability(p, 'edit', 'change groups');
    let updated: GroupRow | undefined;
    await this.commit(async (trx) => {
      await this.loadManaged(trx, p, groupId);
      const now = new Date();
      updated = await updateGroup(trx, groupId, set, now);
      return [
        newEvent(
          'edited',
          p,
          { type: 'group', id: groupId },
          { fields: Object.keys(set).filter((k) => set[k as keyof typeof set] !== undefined) },
          { at: now },
        ),
      ];
    });
    return updated!;
  }

  /** Deletes a group and its memberships (creator or admin). */
  async remove(p: Principal, groupId: string): Promise<void> {
    requireCapability(p, 'edit', 'delete groups');
    await this.commit(async (trx) => {
      const group = await this.loadManaged(trx, p, groupId);
      await deleteGroup(trx, groupId);
      return [newEvent('deleted', p, { type: 'group', id: groupId }, { name: group.name })];
    });
  }

  /** A page of the org's groups, newest first, optionally by name. */
  async list(
    p: Principal,
    query: { limit: number; cursor?: string; q?: string },
  ): Promise<{ items: GroupRow[]; nextCursor: string | null }> {
    requireCapability(p, 'view', 'list groups');
    const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, GroupCursor).id;
    const rows = await listGroups(this.deps.db, { orgId: p.orgId, q: query.q, beforeId: before, limit: query.limit });
    return pageFrom(
      rows,
      query.limit,
      (r) => r,
      (last) => ({ id: last.id }),
    );
  }

  /** Adds a live policy or flow base of the org (creator or admin); 409 when it is already a member. Emits `assigned`. */
  async addMember(p: Principal, groupId: string, member: { memberId: string; memberType: MemberType }): Promise<MemberRow> {
    requireCapability(p, 'edit', 'change group members');
    const now = new Date();
    const row: MemberRow = { groupId, baseId: member.memberId, memberType: member.memberType, addedBy: p.userId, addedAt: now };
    await this.commit(async (trx) => {
      await this.loadManaged(trx, p, groupId);
      const base = isUuid(member.memberId) ? await findBase(trx, member.memberId, p.orgId, member.memberType) : null;
      if (!base || base.deletedAt !== null)
        throw new ArbiterError('not_found', `${member.memberType} base \`${member.memberId}\` not found`);
      if (!(await insertMember(trx, { ...row, orgId: p.orgId }))) {
        throw new ArbiterError('conflict', `${member.memberType} base \`${member.memberId}\` is already a member of group \`${groupId}\``);
      }
      return [
        newEvent('assigned', p, { type: 'group', id: groupId }, { memberId: member.memberId, memberType: member.memberType }, { at: now }),
      ];
    });
    return row;
  }

  /** Removes a member (creator or admin); 404 when it is not a member or its base was deleted. */
  async removeMember(p: Principal, groupId: string, memberId: string): Promise<void> {
    requireCapability(p, 'edit', 'change group members');
    await this.commit(async (trx) => {
      await this.loadManaged(trx, p, groupId);
      const member = isUuid(memberId) ? await findMember(trx, groupId, memberId) : null;
      const base = member ? await findBase(trx, memberId, p.orgId, member.memberType) : null;
      if (!member || !base || base.deletedAt !== null)
        throw new ArbiterError('not_found', `\`${memberId}\` is not a member of group \`${groupId}\``);
      await deleteMember(trx, groupId, memberId);
      return [newEvent('edited', p, { type: 'group', id: groupId }, { removedMemberId: memberId, memberType: member.memberType })];
    });
  }

  /** Checks the group exists in the caller's org (for the member lists). */
  async assertVisible(p: Principal, groupId: string): Promise<void> {
    requireCapability(p, 'view', 'view groups');
    await this.load(this.deps.db, p, groupId);
  }

  private async load(db: Knex, p: Principal, groupId: string, lock = false): Promise<GroupRow> {
    const group = isUuid(groupId) ? await findGroup(db, groupId, p.orgId, lock) : null;
    if (!group) throw new ArbiterError('not_found', `group \`${groupId}\` not found`);
    return group;
  }

  /** The group, locked, when the caller is its creator or an admin. */
  private async loadManaged(trx: Knex.Transaction, p: Principal, groupId: string): Promise<GroupRow> {
    const group = await this.load(trx, p, groupId, true);
    if (group.createdBy !== p.userId && !isAdmin(p)) {
      throw new ArbiterError('forbidden', `only its creator or an admin may change group \`${groupId}\``);
    }
    return group;
  }

  private async commit(fn: (trx: Knex.Transaction) => Promise<ArbiterEvent[]>): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      await this.deps.events.enqueue(trx, await fn(trx));
    });
    this.deps.events.committed();
  }
}
