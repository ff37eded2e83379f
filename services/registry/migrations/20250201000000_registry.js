// @ts-check
// NOTE: knex turns every `?` of a raw statement into a bind parameter, so none may appear below.
/**
 * Registry storage (docs/api.md#policies-and-flows, docs/design/events-and-audit.md): policy and flow bases, their records (one draft at most,
 * immutable numbered versions), groups and memberships, and the transactional event outbox.
 * The invariants live in the schema: a partial unique index allows one draft per base, a unique
 * constraint numbers versions once per base, and a trigger refuses any UPDATE or DELETE of a
 * published record. Composite foreign keys keep records, members and groups within one org.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table registry_bases (
      id                 uuid primary key,
      org_id             text not null,
      kind               text not null constraint registry_bases_kind check (kind in ('policy', 'flow')),
      created_by         text not null,
      created_at         timestamptz not null default now(),
      -- null while never published: the base is then listed only for its creator (docs/api.md#policies-and-flows)
      latest_version     integer constraint registry_bases_latest_version check (latest_version >= 1),
      -- the current runnable record: the latest version, else the draft
      current_record_id  uuid not null,
      -- grows with every committed change; guards the Redis runnable index against stale writes
      revision           bigint not null default 1,
      deleted_at         timestamptz,
      deleted_by         text,
      constraint registry_bases_id_kind unique (id, kind),
      constraint registry_bases_id_kind_org unique (id, kind, org_id),
      constraint registry_bases_deleted check ((deleted_at is null) = (deleted_by is null))
    );
    create index registry_bases_list_idx on registry_bases (org_id, kind, id desc) where deleted_at is null;

    create table registry_records (
      id                uuid primary key,
      base_id           uuid not null,
      kind              text not null,
      status            text not null constraint registry_records_status check (status in ('draft', 'published')),
      version           integer,
      based_on_version  integer,
      name              text not null,
      description       text not null default '',
      rule              text,
      definition        jsonb,
      schema            jsonb,
      tests             jsonb not null default '[]'::jsonb,
      created_at        timestamptz not null,
      created_by        text not null,
      updated_at        timestamptz not null,
      updated_by        text not null,
      published_at      timestamptz,
      published_by      text,
      constraint registry_records_base_fk foreign key (base_id, kind) references registry_bases (id, kind),
      constraint registry_records_lifecycle check (
        (status = 'draft' and version is null and published_at is null and published_by is null)
        or (status = 'published' and version >= 1 and published_at is not null and published_by is not null)
      ),
      constraint registry_records_content check (
        (kind = 'policy' and rule is not null and definition is null)
        or (kind = 'flow' and definition is not null and rule is null)
      ),
      -- versions are numbered once per base (drafts have no number: nulls are distinct)
      constraint registry_records_version_unique unique (base_id, version)
    );
    -- at most one draft per base
    create unique index registry_records_one_draft on registry_records (base_id) where status = 'draft';

    alter table registry_bases add constraint registry_bases_current_record_fk
      foreign key (current_record_id) references registry_records (id) deferrable initially deferred;

    -- Published records are immutable: any UPDATE or DELETE of one fails with SQLSTATE AR409.
    create function registry_records_immutable() returns trigger language plpgsql as $fn$
    begin
      if old.status = 'published' then
        raise exception 'version % of base % is immutable', old.version, old.base_id using errcode = 'AR409';
      end if;
      if tg_op = 'DELETE' then
        return old;
      end if;
      return new;
    end
    $fn$;
    create trigger registry_records_immutable before update or delete on registry_records
      for each row execute function registry_records_immutable();

    create table registry_groups (
      id           uuid primary key,
      org_id       text not null,
      name         text not null,
      description  text not null default '',
      created_by   text not null,
      created_at   timestamptz not null default now(),
      updated_at   timestamptz not null default now(),
      constraint registry_groups_id_org unique (id, org_id)
    );
    create index registry_groups_list_idx on registry_groups (org_id, id desc);

    -- Memberships survive the soft deletion of their base (hidden, not lost); deleting a group
    -- deletes its memberships.
    create table registry_group_members (
      group_id     uuid not null,
      org_id       text not null,
      base_id      uuid not null,
      member_type  text not null,
      added_by     text not null,
      added_at     timestamptz not null default now(),
      primary key (group_id, base_id),
      constraint registry_group_members_group_fk foreign key (group_id, org_id)
        references registry_groups (id, org_id) on delete cascade,
      constraint registry_group_members_base_fk foreign key (base_id, member_type, org_id)
        references registry_bases (id, kind, org_id)
    );
    create index registry_group_members_base_idx on registry_group_members (base_id);

    -- Transactional outbox: an event row commits with its change; a relay publishes it to
    -- JetStream (message id = event_id) and marks it sent.
    create table registry_outbox (
      id          bigserial primary key,
      event_id    uuid not null unique,
      payload     jsonb not null,
      created_at  timestamptz not null default now(),
      attempts    integer not null default 0,
      last_error  text,
      sent_at     timestamptz
    );
    create index registry_outbox_pending_idx on registry_outbox (id) where sent_at is null;
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`
    drop table if exists registry_outbox;
    drop table if exists registry_group_members;
    drop table if exists registry_groups;
    alter table if exists registry_bases drop constraint if exists registry_bases_current_record_fk;
    drop table if exists registry_records;
    drop function if exists registry_records_immutable();
    drop table if exists registry_bases;
  `);
}
