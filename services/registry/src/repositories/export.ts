import type { RunnableKind } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';
import { allRecordsOfBases, type BaseRow, type RecordRow } from './records.js';
import { timelineRowsOfBases, type TimelineRow } from './timeline.js';

/** A live base with every record (versions oldest first, then the draft) and its versions' timeline rows. */
export interface ExportedBase {
  base: BaseRow;
  records: RecordRow[];
  timeline: TimelineRow[];
}

/** A page of an org's live bases of one kind by id (after `afterId`, or from `fromId` on), each with all its records and timeline rows. Fetches `limit + 1`. */
export async function exportBases(
  db: Db,
  opts: { orgId: string; kind: RunnableKind; afterId?: string; fromId?: string; limit: number },
): Promise<ExportedBase[]> {
  const q = db('registry_bases').where({ org_id: opts.orgId, kind: opts.kind }).whereNull('deleted_at');
  if (opts.afterId !== undefined) q.andWhere('id', '>', opts.afterId);
  if (opts.fromId !== undefined) q.andWhere('id', '>=', opts.fromId);
  const ids = (
    (await q
      .orderBy('id', 'asc')
      .limit(opts.limit + 1)
      .select('id')) as { id: string }[]
  ).map((r) => r.id);
  const { bases, records } = await allRecordsOfBases(db, ids);
  const timeline = await timelineRowsOfBases(db, ids);
  return ids.map((id) => ({ base: bases.get(id)!, records: records.get(id) ?? [], timeline: timeline.get(id) ?? [] }));
}

/** A group with its live members. */
export interface ExportedGroup {
  id: string;
  name: string;
  description: string;
  createdBy: string;
  createdAt: Date;
  members: { memberId: string; memberType: RunnableKind }[];
}

/** A page of an org's groups by id (after `afterId`), each with its live members. Fetches `limit + 1`. */
export async function exportGroups(db: Db, opts: { orgId: string; afterId?: string; limit: number }): Promise<ExportedGroup[]> {
  const q = db('registry_groups').where({ org_id: opts.orgId });
  if (opts.afterId !== undefined) q.andWhere('id', '>', opts.afterId);
  const groups = (await q
    .orderBy('id', 'asc')
    .limit(opts.limit + 1)
    .select('id', 'name', 'description', 'created_by', 'created_at')) as {
    id: string;
    name: string;
    description: string;
    created_by: string;
    created_at: Date;
  }[];
  const members =
    groups.length === 0
      ? []
      : ((await db('registry_group_members as m')
          .join('registry_bases as b', 'b.id', 'm.base_id')
          .whereIn(
            'm.group_id',
            groups.map((g) => g.id),
          )
          .whereNull('b.deleted_at')
          .orderBy(['m.group_id', 'm.base_id'])
          .select('m.group_id', 'm.base_id', 'm.member_type')) as { group_id: string; base_id: string; member_type: RunnableKind }[]);
  return groups.map((g) => ({
    id: g.id,
    name: g.name,
    description: g.description,
    createdBy: g.created_by,
    createdAt: g.created_at,
    members: members.filter((m) => m.group_id === g.id).map((m) => ({ memberId: m.base_id, memberType: m.member_type })),
  }));
}
