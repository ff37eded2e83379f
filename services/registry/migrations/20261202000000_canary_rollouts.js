// @ts-check
// NOTE: knex turns every `?` of a raw statement into a bind parameter, so none may appear below.
/**
 * Staged rollouts (docs/design/canary.md): at most one running rollout per base, the row deleted
 * when it is promoted or rolled back (the audit trail keeps its history as `rollout changed`
 * events). The base's runnable fingerprint now covers its rollout too, so a change of share moves
 * the org's runnable revision and every SDK runtime learns it like a publish.
 */

const FINGERPRINT = (rollout) => `
    create or replace function registry_runnable_base_changed() returns trigger language plpgsql as $fn$
    declare
      b registry_bases;
      fp text;
    begin
      -- deferred: the row as it is at commit, whatever the statements before did
      select * into b from registry_bases where id = new.id;
      if b.deleted_at is not null then
        fp := 'deleted';
      else
        select md5(b.current_record_id::text || ':' || coalesce(r.version::text, 'draft') || ':' || coalesce(r.rule, r.definition::text, '') || ':' || coalesce(r.schema::text, 'null'))
          into fp from registry_records r where r.id = b.current_record_id;${rollout}
      end if;
      perform registry_runnable_bump(b.org_id, b.id, b.kind, coalesce(fp, 'missing'));
      return null;
    end
    $fn$;`;

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table registry_rollouts (
      base_id             uuid primary key references registry_bases (id),
      id                  uuid not null,
      org_id              text not null,
      record_id           uuid not null references registry_records (id),
      version             integer not null,
      previous_record_id  uuid not null references registry_records (id),
      previous_version    integer not null,
      percent             numeric(5, 2) not null constraint registry_rollouts_percent check (percent >= 0 and percent <= 100),
      by_path             text constraint registry_rollouts_by check (char_length(by_path) <= 200),
      max_error_rate      double precision,
      min_runs            integer,
      started_at          timestamptz not null,
      started_by          text not null,
      updated_at          timestamptz not null,
      updated_by          text not null
    );
  `);
  await knex.raw(
    FINGERPRINT(`
        select fp || coalesce((select ':rollout:' || ro.id::text || ':' || ro.percent::text || ':' || coalesce(ro.by_path, '')
                                 from registry_rollouts ro where ro.base_id = b.id), '')
          into fp;`),
  );
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(FINGERPRINT(''));
  await knex.raw('drop table if exists registry_rollouts');
}
