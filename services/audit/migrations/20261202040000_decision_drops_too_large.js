/**
 * Decision records dropped because they were too large for the bus, in the base's stats
 * (docs/decisions.md): a count of their own beside the outbox, buffer and settings drops.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`alter table decision_base_stats add column dropped_too_large bigint not null default 0`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`alter table decision_base_stats drop column dropped_too_large`);
}
