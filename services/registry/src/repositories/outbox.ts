import type { ArbiterEvent } from '@arbiter/contracts';
import type { Db } from '../db/database.js';

/** An unsent event of the outbox. */
export interface OutboxRow {
  id: number;
  event: ArbiterEvent;
  attempts: number;
}

/** Queues events in the caller's transaction, so they commit (or roll back) with the change. */
export async function enqueueEvents(db: Db, events: ArbiterEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db('registry_outbox').insert(events.map((e) => ({ event_id: e.eventId, payload: JSON.stringify(e) })));
}

/**
 * The oldest unsent events, locked until the transaction ends; rows another relay holds are
 * skipped, so replicas share the work without sending one event twice at the same time.
 */
export async function claimPending(db: Db, limit: number): Promise<OutboxRow[]> {
  const rows = await db('registry_outbox').whereNull('sent_at').orderBy('id').limit(limit).forUpdate().skipLocked().select('id', 'payload', 'attempts');
  return rows.map((r: { id: string | number; payload: ArbiterEvent; attempts: number }) => ({ id: Number(r.id), event: r.payload, attempts: r.attempts }));
}

/** Marks an event as published. */
export async function markSent(db: Db, id: number): Promise<void> {
  await db('registry_outbox').where({ id }).update({ sent_at: db.fn.now(), attempts: db.raw('attempts + 1'), last_error: null });
}

/** Records a failed publish attempt. */
export async function markFailed(db: Db, id: number, error: string): Promise<void> {
  await db('registry_outbox').where({ id }).update({ attempts: db.raw('attempts + 1'), last_error: error.slice(0, 1000) });
}

/** Deletes events sent before `before`; returns how many. */
export async function pruneSent(db: Db, before: Date): Promise<number> {
  return db('registry_outbox').whereNotNull('sent_at').andWhere('sent_at', '<', before).delete();
}
