/**
 * Pinned versions of flow versions published through review: by node id, the
 * version of the policy base each node naming a base without a `version` runs. Null for drafts,
 * policies and flows published without review (their nodes follow the base's current record).
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw('alter table registry_records add column pinned_versions jsonb');
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('alter table registry_records drop column pinned_versions');
}
