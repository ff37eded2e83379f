/**
 * When a request's publish checks ran (at submission: a request is only made when they pass), and
 * an index for the review inbox: the org's latest requests still pending, oldest first.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    alter table governance_requests add column checked_at timestamptz;
    create index governance_requests_pending_idx on governance_requests (org_id, requested_at, id)
      where state = 'pending_approval';
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`
    drop index if exists governance_requests_pending_idx;
    alter table governance_requests drop column checked_at;
  `);
}
