import type { Db } from '@arbiter/service-kit';

/** A row of `webhook_endpoints`. */
export interface EndpointRow {
  id: string;
  org_id: string;
  url: string;
  events: string[];
  description: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  secret_rotated_at: Date | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

const TABLE = 'webhook_endpoints';

/** Stores a new endpoint. */
export async function insertEndpoint(db: Db, row: EndpointRow): Promise<void> {
  await db(TABLE).insert(row);
}

/** A page of an org's endpoints, oldest first, after a keyset position. */
export async function listEndpoints(
  db: Db,
  orgId: string,
  after: { createdAt: Date; id: string } | undefined,
  limit: number,
): Promise<EndpointRow[]> {
  const q = db<EndpointRow>(TABLE).where('org_id', orgId);
  if (after) q.andWhereRaw('(created_at, id) > (?, ?::uuid)', [after.createdAt, after.id]);
  return (await q.orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(limit)) as EndpointRow[];
}

/** An org's endpoint; another org's is not found. */
export async function getEndpoint(db: Db, orgId: string, id: string, forUpdate = false): Promise<EndpointRow | undefined> {
  const q = db<EndpointRow>(TABLE).where({ org_id: orgId, id }).first();
  if (forUpdate) q.forUpdate();
  return (await q) as EndpointRow | undefined;
}

/** Endpoints by id, whatever their org (the dispatcher's view). */
export async function endpointsByIds(db: Db, ids: readonly string[]): Promise<EndpointRow[]> {
  if (ids.length === 0) return [];
  return (await db<EndpointRow>(TABLE).whereIn('id', [...ids])) as EndpointRow[];
}

/** Changes an endpoint's columns; the row after, or undefined when it is gone. */
export async function updateEndpoint(db: Db, id: string, changes: Partial<EndpointRow>): Promise<EndpointRow | undefined> {
  const [row] = (await db<EndpointRow>(TABLE).where('id', id).update(changes).returning('*')) as EndpointRow[];
  return row;
}

/** Deletes an org's endpoint (its deliveries and attempts go with it); whether it existed. */
export async function deleteEndpoint(db: Db, orgId: string, id: string): Promise<boolean> {
  return (await db(TABLE).where({ org_id: orgId, id }).delete()) > 0;
}

/** The enabled endpoints of an org that receive events of `kind`. */
export async function endpointsFor(db: Db, orgId: string, kind: string): Promise<Pick<EndpointRow, 'id'>[]> {
  return (await db<EndpointRow>(TABLE)
    .select('id')
    .where({ org_id: orgId, enabled: true })
    .andWhereRaw(`(events @> array['*']::text[] or events @> array[?]::text[])`, [kind])) as Pick<EndpointRow, 'id'>[];
}

/**
 * Turns an enabled endpoint off; the row after, or undefined when it was already off (or gone), so
 * the caller records the event once.
 */
export async function disableEndpoint(db: Db, id: string, reason: string, at: Date): Promise<EndpointRow | undefined> {
  const [row] = (await db<EndpointRow>(TABLE)
    .where({ id, enabled: true })
    .update({ enabled: false, disabled_reason: reason, disabled_at: at, updated_at: at })
    .returning('*')) as EndpointRow[];
  return row;
}

/** Notes a failed attempt: the endpoint fails since its first failure after the last success. Answers since when. */
export async function markFailing(db: Db, id: string, at: Date): Promise<Date | undefined> {
  const [row] = (await db<EndpointRow>(TABLE)
    .where('id', id)
    .update({ failing_since: db.raw('coalesce(failing_since, ?)', [at]) as unknown as Date })
    .returning('failing_since')) as Pick<EndpointRow, 'failing_since'>[];
  return row?.failing_since ?? undefined;
}

/** Notes a success: the endpoint no longer fails. */
export async function markHealthy(db: Db, id: string): Promise<void> {
  await db(TABLE).where('id', id).whereNotNull('failing_since').update({ failing_since: null });
}
