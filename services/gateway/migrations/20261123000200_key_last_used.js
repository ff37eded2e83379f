/**
 * When each API key was last used (admins list the org's keys with it). Written in batches by the
 * gateway (KeyUsage), never once per request.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw('alter table api_keys add column last_used_at timestamptz');
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('alter table api_keys drop column last_used_at');
}
