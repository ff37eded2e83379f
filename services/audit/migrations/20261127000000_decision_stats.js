/**
 * Decision records dropped, in the base's stats (docs/decisions.md): the execution
 * replicas report the records they dropped (outbox full or unwritable, buffer full, settings
 * unreadable) per base and reason over `audit.decisions.drops.report`.
 *
 * Idempotency: each report has an id; `decision_drop_reports` keeps the ids of the reports added
 * (pruned after a day by the maintenance), and a report's counts are added to
 * `decision_base_stats` in the transaction that inserts its id, so a report sent again is added once.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table decision_drop_reports (
      report_id uuid primary key,
      received_at timestamptz not null default now()
    )`);
  await knex.raw(`create index decision_drop_reports_received on decision_drop_reports (received_at)`);
  await knex.raw(`
    create table decision_base_stats (
      org_id text not null,
      base_id text not null,
      dropped_outbox bigint not null default 0,
      dropped_buffer bigint not null default 0,
      dropped_settings bigint not null default 0,
      last_dropped_at timestamptz,
      primary key (org_id, base_id)
    )`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`drop table decision_base_stats`);
  await knex.raw(`drop table decision_drop_reports`);
}
