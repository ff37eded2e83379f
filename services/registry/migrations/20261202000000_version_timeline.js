// @ts-check
/**
 * Versions on a timeline (docs/design/timeline.md): a version published with a later effective
 * instant, a version that rolls back to an earlier one's content, and the cancellation of a
 * schedule before it started. One row per version that has any of these; a version without a row
 * takes effect when it is published. Versions stay immutable: a cancellation is written here.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table registry_version_timeline (
      record_id       uuid primary key references registry_records (id),
      base_id         uuid not null,
      version         integer not null,
      -- null: effective when published
      effective_from  timestamptz,
      rollback_of     integer,
      cancelled_at    timestamptz,
      cancelled_by    text,
      constraint registry_version_timeline_cancelled check ((cancelled_at is null) = (cancelled_by is null)),
      constraint registry_version_timeline_version unique (base_id, version)
    );
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('drop table registry_version_timeline');
}
