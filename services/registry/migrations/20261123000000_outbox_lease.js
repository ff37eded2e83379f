/**
 * The outbox relay (service-kit's EventRelay) claims rows with a lease instead of holding a
 * transaction open while it publishes: `claimed_until` is that lease.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`alter table registry_outbox add column claimed_until timestamptz`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`alter table registry_outbox drop column claimed_until`);
}
