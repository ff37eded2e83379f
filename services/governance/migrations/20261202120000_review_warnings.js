/**
 * The static checks' warnings of a request's draft when it was submitted (what the registry's
 * publish check answers), shown in the review summary beside its coverage.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw('alter table governance_requests add column checked_warnings jsonb');
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('alter table governance_requests drop column checked_warnings');
}
