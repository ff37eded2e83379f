/**
 * The installation id: a random id made once per database, so caches outside
 * it (the Redis API-key cache) are tied to the database they were filled from. A replaced
 * database (a new bootstrap) has another id, and nothing cached from the old one is used.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table gateway_installation (
      singleton   boolean primary key default true constraint gateway_installation_one_row check (singleton),
      id          uuid not null default gen_random_uuid(),
      created_at  timestamptz not null default now()
    );
    insert into gateway_installation default values;
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('drop table if exists gateway_installation');
}
