import type { ArbiterEvent } from '@arbiter/contracts';
import type { Knex } from 'knex';
import type { ClaimedEvent, OutboxDropReason, OutboxStore } from './outbox.js';

/** Lease of claimed rows: well inside JetStream's 2-minute duplicate window, so a re-send is dropped. */
const LEASE_SECONDS = 30;
/** Sent rows are kept this long (for inspection), then deleted in bounded batches. */
const KEEP_SENT_HOURS = 24;
const PRUNE_BATCH = 1000;

/**
 * The SQL of an outbox table named `table` (run it from the service's knex migration). The shape is
 * the one {@link PgOutbox} reads; change it only through a new migration of every outbox.
 */
export function outboxTableSql(table: string): string {
  assertIdentifier(table);
  return `
    create table ${table} (
      id             bigserial primary key,
      event_id       uuid not null unique,
      payload        jsonb not null,
      created_at     timestamptz not null default now(),
      attempts       integer not null default 0,
      last_error     text,
      claimed_until  timestamptz,
      sent_at        timestamptz
    );
    create index ${table}_pending_idx on ${table} (id) where sent_at is null;
  `;
}

function assertIdentifier(table: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table)) throw new Error(`invalid outbox table name \`${table}\``);
}

interface ClaimedRow {
  id: string | number;
  payload: ArbiterEvent;
  attempts: number;
}

/**
 * A transactional outbox in PostgreSQL (docs/design/events-and-audit.md). {@link enqueue} writes events in the caller's
 * transaction, so they commit or roll back with the change they record. The relay claims rows with
 * one short statement (`FOR UPDATE SKIP LOCKED` inside an `UPDATE … RETURNING` that sets a lease),
 * publishes outside any transaction, and marks rows sent in another short statement: no transaction
 * stays open while NATS is slow, and replicas never publish the same row at the same time.
 */
export class PgOutbox implements OutboxStore {
  readonly name: string;

  constructor(
    private readonly db: Knex,
    private readonly table: string,
  ) {
    assertIdentifier(table);
    this.name = `postgres:${table}`;
  }

  /** Queues `events` in `trx` (the transaction of the change they record). */
  async enqueue(trx: Knex | Knex.Transaction, events: readonly ArbiterEvent[]): Promise<void> {
    if (events.length === 0) return;
    await trx(this.table).insert(events.map((e) => ({ event_id: e.eventId, payload: JSON.stringify(e) })));
  }

  async claim(limit: number): Promise<ClaimedEvent[]> {
    const result = (await this.db.raw(
      `update ${this.table} set claimed_until = now() + make_interval(secs => ?)
        where id in (
          select id from ${this.table}
           where sent_at is null and (claimed_until is null or claimed_until < now())
           order by id limit ? for update skip locked)
        returning id, payload, attempts`,
      [LEASE_SECONDS, limit],
    )) as { rows: ClaimedRow[] };
    return result.rows
      .map((r) => ({ ref: String(r.id), event: r.payload, attempts: r.attempts }))
      .sort((a, b) => Number(a.ref) - Number(b.ref));
  }

  async markSent(refs: string[]): Promise<void> {
    if (refs.length === 0) return;
    await this.db(this.table).whereIn('id', refs).update({ sent_at: this.db.fn.now(), last_error: null, claimed_until: null });
  }

  async markFailed(refs: string[], error: string): Promise<void> {
    if (refs.length === 0) return;
    // Backoff through the lease: 1 s after the first failure, doubling up to a minute.
    await this.db.raw(
      `update ${this.table}
          set attempts = attempts + 1, last_error = ?,
              claimed_until = now() + make_interval(secs => least(60, power(2, least(attempts, 6))))
        where id = any(?::bigint[])`,
      [error.slice(0, 1000), refs],
    );
  }

  /** Takes the rows out of the backlog as if sent, their `last_error` saying they were dropped (pruned with the sent rows). */
  async markDropped(refs: string[], reason: OutboxDropReason): Promise<void> {
    if (refs.length === 0) return;
    await this.db(this.table)
      .whereIn('id', refs)
      .update({ sent_at: this.db.fn.now(), last_error: `dropped: ${reason}`, claimed_until: null });
  }

  async backlog(): Promise<{ pending: number; oldestSeconds: number }> {
    const result = (await this.db.raw(
      `select count(*)::int as pending, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest
         from ${this.table} where sent_at is null`,
    )) as { rows: Array<{ pending: number; oldest: number }> };
    const row = result.rows[0];
    return { pending: row?.pending ?? 0, oldestSeconds: row?.oldest ?? 0 };
  }

  async prune(): Promise<void> {
    await this.db.raw(
      `delete from ${this.table} where id in (
         select id from ${this.table} where sent_at < now() - make_interval(hours => ?) limit ?)`,
      [KEEP_SENT_HOURS, PRUNE_BATCH],
    );
  }
}
