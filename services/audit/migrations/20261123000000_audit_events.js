/**
 * The audit trail: one row per event, partitioned by month on `at` (the service creates the
 * monthly partitions ahead of time and drops whole expired ones, see src/repositories/partitions.ts).
 *
 * Idempotency: the primary key is (event_id, at). A unique key of a partitioned table must hold
 * the partition key, and an event's `at` is part of the event, so a redelivered event carries the
 * same pair and `INSERT … ON CONFLICT DO NOTHING` stores it once, whichever partition it lands in.
 *
 * Reading: every index leads with org_id (every query is for one org) and ends with (at, event_id),
 * the newest-first keyset order, so a filtered page is an index range scan however deep it is.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table audit_events (
      event_id uuid not null,
      org_id text not null,
      kind text not null,
      at timestamptz not null,
      actor_user_id text not null,
      actor_api_key_id text,
      resource_type text not null,
      resource_id text not null,
      base_id text,
      details jsonb not null,
      primary key (event_id, at)
    ) partition by range (at)`);
  await knex.raw(`create index audit_events_org_at on audit_events (org_id, at desc, event_id desc)`);
  await knex.raw(`create index audit_events_org_kind_at on audit_events (org_id, kind, at desc, event_id desc)`);
  await knex.raw(`create index audit_events_org_actor_at on audit_events (org_id, actor_user_id, at desc, event_id desc)`);
  await knex.raw(`create index audit_events_org_resource_at on audit_events (org_id, resource_id, at desc, event_id desc)`);
  await knex.raw(
    `create index audit_events_org_base_at on audit_events (org_id, base_id, at desc, event_id desc) where base_id is not null`,
  );
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`drop table audit_events`);
}
