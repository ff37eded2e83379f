// @ts-check
/**
 * The org's `minCoverage` setting: the least percent of its parts (conditions, table rows, flow
 * edges) a record's saved tests must cover for it to be published or submitted for review; 0, the
 * default, never refuses.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    alter table org_settings
      add column min_coverage integer not null default 0
      constraint org_settings_min_coverage_range check (min_coverage between 0 and 100);
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('alter table org_settings drop column if exists min_coverage');
}
