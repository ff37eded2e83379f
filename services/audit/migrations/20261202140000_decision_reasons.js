/**
 * Decision records keep the reasons of runs that asked for them (docs/decisions.md), masked like
 * the input: a policy's `reasons`, a flow's `node_reasons`, and whether they were left out for size.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(
    `alter table decisions add column reasons jsonb, add column node_reasons jsonb, add column reasons_left_out boolean not null default false`,
  );
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`alter table decisions drop column reasons, drop column node_reasons, drop column reasons_left_out`);
}
