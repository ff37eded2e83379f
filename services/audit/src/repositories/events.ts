import type { ArbiterEvent, EventKind, EventResourceType } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** A row of `audit_events`. */
export interface EventRow {
  event_id: string;
  org_id: string;
  kind: EventKind;
  at: Date;
  actor_user_id: string;
  actor_api_key_id: string | null;
  resource_type: EventResourceType;
  resource_id: string;
  base_id: string | null;
  details: Record<string, unknown>;
}

/**
 * Stores a batch of events with one `INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING`: an
 * event already stored (same event id and time) is skipped, so redeliveries are harmless. The
 * partitions of the batch's months must exist. Returns how many rows were new.
 */
export async function insertEvents(db: Db, events: readonly ArbiterEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const cols: [string[], string[], string[], string[], string[], (string | null)[], string[], string[], (string | null)[], string[]] = [
    [],
    [],
    [],
    [],
    [],
    [],
    [],
    [],
    [],
    [],
  ];
  for (const e of events) {
    cols[0].push(e.eventId);
    cols[1].push(e.orgId);
    cols[2].push(e.kind);
    cols[3].push(e.at);
    cols[4].push(e.actor.userId);
    cols[5].push(e.actor.apiKeyId ?? null);
    cols[6].push(e.resource.type);
    cols[7].push(e.resource.id);
    cols[8].push(e.resource.baseId ?? null);
    cols[9].push(JSON.stringify(e.details));
  }
  const result = (await db.raw(
    `insert into audit_events (event_id, org_id, kind, at, actor_user_id, actor_api_key_id, resource_type, resource_id, base_id, details)
     select * from unnest(?::uuid[], ?::text[], ?::text[], ?::timestamptz[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::jsonb[])
     on conflict do nothing`,
    cols as Knex.RawBinding[],
  )) as { rowCount: number | null };
  return result.rowCount ?? 0;
}

/** What a query selects: one org, the given filters, strictly before a keyset position. */
export interface EventQuery {
  orgId: string;
  kinds?: readonly EventKind[];
  actor?: string;
  resourceType?: EventResourceType;
  resourceId?: string;
  baseId?: string;
  from?: Date;
  to?: Date;
  /** The last (at, eventId) of the previous page: rows strictly older in the newest-first order. */
  before?: { at: Date; eventId: string };
  limit: number;
}

/** A page of events newest first (`limit` rows at most), ordered by (at, event_id) descending. */
export async function queryEvents(db: Db, q: EventQuery): Promise<EventRow[]> {
  const query = db<EventRow>('audit_events').where('org_id', q.orgId);
  if (q.kinds && q.kinds.length > 0) {
    if (q.kinds.length === 1) query.andWhere('kind', q.kinds[0]!);
    else query.whereIn('kind', [...q.kinds]);
  }
  if (q.actor !== undefined) query.andWhere('actor_user_id', q.actor);
  if (q.resourceType !== undefined) query.andWhere('resource_type', q.resourceType);
  if (q.resourceId !== undefined) query.andWhere('resource_id', q.resourceId);
  if (q.baseId !== undefined) query.andWhere('base_id', q.baseId);
  if (q.from !== undefined) query.andWhere('at', '>=', q.from);
  if (q.to !== undefined) query.andWhere('at', '<', q.to);
  if (q.before !== undefined) {
    // The row comparison is the keyset; the plain `at <=` lets every index range-scan from the cursor.
    query.andWhere('at', '<=', q.before.at).andWhereRaw('(at, event_id) < (?, ?::uuid)', [q.before.at, q.before.eventId]);
  }
  return (await query
    .orderBy([
      { column: 'at', order: 'desc' },
      { column: 'event_id', order: 'desc' },
    ])
    .limit(q.limit)) as EventRow[];
}

/** Rows stored for an org (tests and the benchmark). */
export async function countEvents(db: Db, orgId?: string): Promise<number> {
  const query = db('audit_events').count<{ count: string }[]>('* as count');
  if (orgId !== undefined) query.where('org_id', orgId);
  const [row] = await query;
  return Number(row?.count ?? 0);
}
