// @ts-check
// NOTE: knex turns every `?` of a raw statement into a bind parameter, so none may appear below.
/**
 * The per-org runnable revision: what SDK runtimes sync their local copies by.
 *
 * `registry_runnable_orgs` holds each org's revision; `registry_runnable_feed` one row per base
 * (and per group, for its membership) with a fingerprint of what a run of it would run and the
 * org revision at which that last changed. Deferred constraint triggers keep both current at
 * commit time, whatever wrote the change (edits, publishes, deletes, restores, imports, group
 * memberships): a change that moves a base's fingerprint takes the org row's lock, bumps its
 * revision and stamps the base, so revisions are handed out in commit order within an org and a
 * reader who saw revision R never later finds a change stamped R or lower. Each bump notifies
 * `registry_runnable` (`<orgId> <revision>`), delivered by PostgreSQL once the transaction commits.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table registry_runnable_orgs (
      org_id    text primary key,
      revision  bigint not null
    );

    create table registry_runnable_feed (
      -- a policy or flow base, or a group (whose membership changed)
      item_id      uuid primary key,
      org_id       text not null,
      kind         text not null constraint registry_runnable_feed_kind check (kind in ('policy', 'flow', 'group')),
      -- what a run would run: 'deleted', or a hash of the current record's id, version and content
      fingerprint  text not null,
      -- the org revision at which the fingerprint last changed
      revision     bigint not null
    );
    create index registry_runnable_feed_org_idx on registry_runnable_feed (org_id, revision);

    create function registry_runnable_bump(p_org text, p_item uuid, p_kind text, p_fingerprint text) returns void
    language plpgsql as $fn$
    declare
      r bigint;
    begin
      if exists (select 1 from registry_runnable_feed where item_id = p_item and fingerprint = p_fingerprint) then
        return;
      end if;
      insert into registry_runnable_orgs (org_id, revision) values (p_org, 1)
        on conflict (org_id) do update set revision = registry_runnable_orgs.revision + 1
        returning revision into r;
      insert into registry_runnable_feed (item_id, org_id, kind, fingerprint, revision)
        values (p_item, p_org, p_kind, p_fingerprint, r)
        on conflict (item_id) do update set fingerprint = excluded.fingerprint, revision = excluded.revision;
      perform pg_notify('registry_runnable', p_org || ' ' || r);
    end
    $fn$;

    create function registry_runnable_base_changed() returns trigger language plpgsql as $fn$
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
          into fp from registry_records r where r.id = b.current_record_id;
      end if;
      perform registry_runnable_bump(b.org_id, b.id, b.kind, coalesce(fp, 'missing'));
      return null;
    end
    $fn$;
    create constraint trigger registry_runnable_base_changed after insert or update on registry_bases
      deferrable initially deferred for each row execute function registry_runnable_base_changed();

    create function registry_runnable_group_changed() returns trigger language plpgsql as $fn$
    declare
      m registry_group_members;
    begin
      if tg_op = 'DELETE' then m := old; else m := new; end if;
      -- any change of a membership is a change: the fingerprint is new every time
      perform registry_runnable_bump(m.org_id, m.group_id, 'group', txid_current()::text || ':' || m.base_id::text || ':' || tg_op);
      return null;
    end
    $fn$;
    create constraint trigger registry_runnable_group_changed after insert or delete on registry_group_members
      deferrable initially deferred for each row execute function registry_runnable_group_changed();

    -- bases that exist already start at revision 1 of their org
    insert into registry_runnable_orgs (org_id, revision) select distinct org_id, 1 from registry_bases;
    insert into registry_runnable_feed (item_id, org_id, kind, fingerprint, revision)
      select b.id, b.org_id, b.kind,
             case when b.deleted_at is not null then 'deleted'
                  else md5(b.current_record_id::text || ':' || coalesce(r.version::text, 'draft') || ':' || coalesce(r.rule, r.definition::text, '') || ':' || coalesce(r.schema::text, 'null')) end,
             1
        from registry_bases b join registry_records r on r.id = b.current_record_id;
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`
    drop trigger if exists registry_runnable_group_changed on registry_group_members;
    drop function if exists registry_runnable_group_changed();
    drop trigger if exists registry_runnable_base_changed on registry_bases;
    drop function if exists registry_runnable_base_changed();
    drop function if exists registry_runnable_bump(text, uuid, text, text);
    drop table if exists registry_runnable_feed;
    drop table if exists registry_runnable_orgs;
  `);
}
