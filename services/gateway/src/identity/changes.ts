import type { ArbiterEvent } from '@arbiter/contracts';
import type { EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** A change's result and the audit events it causes, written in the change's transaction. */
export interface Change<T> {
  readonly result: T;
  readonly events: ArbiterEvent[];
}

/** Runs `fn` in a transaction that also queues its events in the outbox, then wakes the relay. */
export async function commitChange<T>(
  db: Knex,
  outbox: EventOutbox<Knex.Transaction>,
  fn: (trx: Knex.Transaction) => Promise<Change<T>>,
): Promise<T> {
  const change = await db.transaction(async (trx) => {
    const c = await fn(trx);
    await outbox.enqueue(trx, c.events);
    return c;
  });
  if (change.events.length > 0) outbox.committed();
  return change.result;
}
