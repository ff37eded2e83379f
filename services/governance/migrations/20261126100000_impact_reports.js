/**
 * Impact reports (docs/decisions.md#impact-analysis): the latest report per record and
 * content hash, so a draft's review summary carries the report of its current content (and none
 * once the draft is edited).
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table governance_impact_reports (
      org_id text not null,
      record_id text not null,
      content_hash text not null,
      report jsonb not null,
      created_at timestamptz not null default now(),
      primary key (org_id, record_id, content_hash)
    )`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`drop table governance_impact_reports`);
}
