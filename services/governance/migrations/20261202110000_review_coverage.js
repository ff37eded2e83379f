/**
 * What a request's saved tests covered when it was submitted (the coverage summary the registry's
 * publish check answers), shown in the review summary beside the checks.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw('alter table governance_requests add column checked_coverage jsonb');
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('alter table governance_requests drop column checked_coverage');
}
