/**
 * Decision records (docs/decisions.md): one row per recorded decision, partitioned by
 * month on `at` like `audit_events` (src/repositories/partitions.ts makes and drops the monthly
 * partitions; retention `DECISIONS_RETENTION_DAYS`).
 *
 * Idempotency: the primary key is (decision_id, at); the id is the `decided` event's id and `at`
 * is part of the event, so a redelivered record is skipped by `ON CONFLICT DO NOTHING`.
 *
 * Reading: every index leads with org_id and ends with (at, decision_id), the newest-first keyset
 * order; impact analysis reads one base's most recent decisions (org_id, base_id, at desc).
 *
 * `decision_settings`: the org masks (base_id '') and each base's own settings, read by the
 * execution service over the bus.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table decisions (
      decision_id uuid not null,
      org_id text not null,
      at timestamptz not null,
      now timestamptz not null,
      kind text not null,
      base_id text not null,
      record_id text not null,
      version integer,
      caller_user_id text not null,
      caller_api_key_id text,
      input jsonb not null,
      masked boolean not null,
      result jsonb not null,
      result_text text,
      outcomes jsonb,
      path jsonb,
      error_code text,
      duration_us bigint not null,
      primary key (decision_id, at)
    ) partition by range (at)`);
  await knex.raw(`create index decisions_org_at on decisions (org_id, at desc, decision_id desc)`);
  await knex.raw(`create index decisions_org_base_at on decisions (org_id, base_id, at desc, decision_id desc)`);
  await knex.raw(`create index decisions_org_caller_at on decisions (org_id, caller_user_id, at desc, decision_id desc)`);
  await knex.raw(
    `create index decisions_org_error_at on decisions (org_id, error_code, at desc, decision_id desc) where error_code is not null`,
  );
  await knex.raw(`
    create table decision_settings (
      org_id text not null,
      base_id text not null,
      settings jsonb not null,
      updated_at timestamptz not null default now(),
      primary key (org_id, base_id)
    )`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`drop table decision_settings`);
  await knex.raw(`drop table decisions`);
}
