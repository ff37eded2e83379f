/**
 * Who wrote each draft's content since the last published version: the
 * governance service refuses an approval by any of them, not only by the requester. A version
 * keeps the authors of the draft it was. Drafts saved before this column get their creator and
 * last editor (all that is known).
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    alter table registry_records add column authors text[] not null default '{}';
    update registry_records set authors = array(select distinct a from unnest(array[created_by, updated_by]) as a)
      where status = 'draft';
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('alter table registry_records drop column authors');
}
