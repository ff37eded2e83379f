import type { Db } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** A row of `webhook_deliveries`. */
export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  org_id: string;
  event_id: string;
  event_kind: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: Date;
  retry_from: Date;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  delivered_at: Date | null;
  finished_at: Date | null;
}

/** A row of `webhook_attempts`. */
export interface AttemptRow {
  delivery_id: string;
  at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response: string | null;
}

/** A new delivery: pending, due at `created_at`. */
export type NewDelivery = Pick<DeliveryRow, 'id' | 'endpoint_id' | 'org_id' | 'event_id' | 'event_kind' | 'body' | 'created_at'>;

/** Stores new deliveries; one already there (same endpoint and event: a redelivered event) is skipped. */
export async function insertDeliveries(db: Db, rows: readonly NewDelivery[]): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await db('webhook_deliveries')
    .insert(rows.map((r) => ({ ...r, status: 'pending', attempts: 0, retry_from: r.created_at, next_attempt_at: r.created_at })))
    .onConflict(['endpoint_id', 'event_id'])
    .ignore()
    .returning('id');
  return inserted.length;
}

/**
 * Pending deliveries due at `now` and not held by a dispatcher, at most `perEndpoint` of each
 * enabled endpoint (oldest due first) and `limit` in all, skipping the endpoints in `skip` (those
 * already at their concurrency here).
 */
export async function dueDeliveries(
  db: Db,
  opts: { now: Date; perEndpoint: number; limit: number; skip: readonly string[] },
): Promise<Pick<DeliveryRow, 'id' | 'endpoint_id'>[]> {
  const result = (await db.raw(
    `select d.id, d.endpoint_id
       from webhook_endpoints e
       cross join lateral (
         select d.id, d.endpoint_id, d.next_attempt_at
           from webhook_deliveries d
          where d.endpoint_id = e.id and d.status = 'pending' and d.next_attempt_at <= ?
            and (d.lease_until is null or d.lease_until < ?)
          order by d.next_attempt_at, d.id
          limit ?
       ) d
      where e.enabled and not (e.id = any(?::uuid[]))
      order by d.next_attempt_at
      limit ?`,
    [opts.now, opts.now, opts.perEndpoint, [...opts.skip], opts.limit],
  )) as { rows: Pick<DeliveryRow, 'id' | 'endpoint_id'>[] };
  return result.rows;
}

/**
 * Leases deliveries to this dispatcher until `leaseUntil`: only those still pending and not held
 * by another (checked in the UPDATE itself, so two replicas never take the same one).
 */
export async function claimDeliveries(db: Db, ids: readonly string[], now: Date, leaseUntil: Date): Promise<DeliveryRow[]> {
  if (ids.length === 0) return [];
  return (await db<DeliveryRow>('webhook_deliveries')
    .whereIn('id', [...ids])
    .andWhere('status', 'pending')
    .andWhereRaw('(lease_until is null or lease_until < ?)', [now])
    .update({ lease_until: leaseUntil })
    .returning('*')) as DeliveryRow[];
}

/** Records one attempt and the delivery's state after it (and releases the lease), in one transaction. */
export async function recordAttempt(
  db: Knex,
  attempt: AttemptRow,
  next: Pick<DeliveryRow, 'status' | 'next_attempt_at' | 'delivered_at' | 'finished_at'>,
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('webhook_attempts').insert(attempt);
    await trx('webhook_deliveries')
      .where('id', attempt.delivery_id)
      .update({ ...next, lease_until: null, attempts: trx.raw('attempts + 1') });
  });
}

/** When the first attempt of a delivery (since its last manual retry, if any) was made. */
export async function firstAttemptAt(db: Db, id: string): Promise<Date | undefined> {
  const row = (await db('webhook_attempts as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where('a.delivery_id', id)
    .andWhereRaw('a.at >= d.retry_from')
    .min<{ first: Date | null }>('a.at as first')
    .first()) as { first: Date | null } | undefined;
  return row?.first ?? undefined;
}

/** Gives a delivery up without an attempt (its endpoint was disabled or deleted meanwhile): releases the lease. */
export async function releaseDelivery(db: Db, id: string): Promise<void> {
  await db('webhook_deliveries').where('id', id).update({ lease_until: null });
}

/** A page of an endpoint's deliveries, newest first, after a keyset position. */
export async function listDeliveries(
  db: Db,
  q: { endpointId: string; status?: DeliveryRow['status']; before?: { createdAt: Date; id: string }; limit: number },
): Promise<DeliveryRow[]> {
  const query = db<DeliveryRow>('webhook_deliveries').where('endpoint_id', q.endpointId);
  if (q.status !== undefined) query.andWhere('status', q.status);
  if (q.before !== undefined) query.andWhereRaw('(created_at, id) < (?, ?::uuid)', [q.before.createdAt, q.before.id]);
  return (await query
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(q.limit)) as DeliveryRow[];
}

/** The attempts of these deliveries, newest first. */
export async function attemptsOf(db: Db, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return (await db<AttemptRow>('webhook_attempts')
    .select('delivery_id', 'at', 'status_code', 'duration_ms', 'error', 'response')
    .whereIn('delivery_id', [...deliveryIds])
    .orderBy([
      { column: 'at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])) as AttemptRow[];
}

/** One delivery of an endpoint. */
export async function getDelivery(db: Db, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  return (await db<DeliveryRow>('webhook_deliveries').where({ endpoint_id: endpointId, id }).first()) as DeliveryRow | undefined;
}

/**
 * Puts a delivery back to pending, due now, with a fresh retry window (counted from now). The row
 * after, or undefined when it is not the endpoint's.
 */
export async function requeueDelivery(db: Db, endpointId: string, id: string, now: Date): Promise<DeliveryRow | undefined> {
  const [row] = (await db<DeliveryRow>('webhook_deliveries')
    .where({ endpoint_id: endpointId, id })
    .update({ status: 'pending', next_attempt_at: now, retry_from: now, finished_at: null, lease_until: null })
    .returning('*')) as DeliveryRow[];
  return row;
}

/** Deletes finished deliveries (and their attempts) finished before `before`, and older attempts of the others. */
export async function pruneDeliveries(db: Db, before: Date): Promise<number> {
  const deleted = await db('webhook_deliveries').where('status', '<>', 'pending').andWhere('finished_at', '<', before).delete();
  await db('webhook_attempts').where('at', '<', before).delete();
  return deleted;
}
