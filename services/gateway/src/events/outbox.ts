import { PgOutbox, type EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** The gateway's outbox table (migration `20261123000000_outbox.js`). */
export const GATEWAY_OUTBOX_TABLE = 'gateway_outbox';

/**
 * The gateway's transactional outbox: events queue in the change's transaction; `committed` wakes
 * the relay when there is one (`main.ts`), and without one (an app built for tests) they wait in
 * the table.
 */
export function gatewayOutbox(
  db: Knex,
  onCommitted: () => void = () => undefined,
): { store: PgOutbox; events: EventOutbox<Knex.Transaction> } {
  const store = new PgOutbox(db, GATEWAY_OUTBOX_TABLE);
  return { store, events: { enqueue: (trx, events) => store.enqueue(trx, events), committed: onCommitted } };
}
