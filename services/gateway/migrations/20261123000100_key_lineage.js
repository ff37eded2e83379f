/**
 * Keys that make keys (docs/design/identity.md): a key created with another key records it, so revoking the
 * creating key revokes every key made from it, transitively.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    alter table api_keys add column created_with_key_id uuid references api_keys (id) on delete set null;
    create index api_keys_created_with_idx on api_keys (created_with_key_id) where created_with_key_id is not null;
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('alter table api_keys drop column created_with_key_id');
}
