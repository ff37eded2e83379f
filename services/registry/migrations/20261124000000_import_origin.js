// @ts-check
/**
 * Import: a base or group loaded from a bundle remembers where it came from (the
 * source org and its id there), so importing the same bundle again finds it instead of duplicating it.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    alter table registry_bases add column origin_org_id text, add column origin_base_id uuid;
    create index registry_bases_origin_idx on registry_bases (org_id, origin_org_id, origin_base_id)
      where origin_base_id is not null;
    alter table registry_groups add column origin_org_id text, add column origin_group_id uuid;
    create index registry_groups_origin_idx on registry_groups (org_id, origin_org_id, origin_group_id)
      where origin_group_id is not null;
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`
    drop index if exists registry_groups_origin_idx;
    alter table registry_groups drop column if exists origin_org_id, drop column if exists origin_group_id;
    drop index if exists registry_bases_origin_idx;
    alter table registry_bases drop column if exists origin_org_id, drop column if exists origin_base_id;
  `);
}
