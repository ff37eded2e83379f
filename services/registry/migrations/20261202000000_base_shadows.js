/**
 * Shadow runs (docs/design/shadow-runs.md): at most one shadow per base, the candidate record
 * that also runs on a sample of the base's runs. A stopped shadow keeps its row (`stopped_at`) so
 * its report stays readable until the next one replaces it.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table registry_shadows (
      base_id uuid primary key references registry_bases(id) on delete cascade,
      org_id text not null,
      record_id uuid not null references registry_records(id) on delete cascade,
      sample_rate double precision not null check (sample_rate >= 0 and sample_rate <= 1),
      until timestamptz,
      started_at timestamptz not null,
      started_by text not null,
      stopped_at timestamptz,
      stopped_by text
    );
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('drop table registry_shadows');
}
