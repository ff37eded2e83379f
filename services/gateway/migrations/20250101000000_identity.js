// @ts-check
// NOTE: knex turns every `?` of a raw statement into a bind parameter, so none may appear below.
/**
 * Identity storage of the gateway (docs/design/identity.md): organizations, users, one membership (role) per
 * user and org, personal API keys stored only as SHA-256 hashes, and per-org settings.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table orgs (
      id          text primary key
                  constraint orgs_id_slug check (id ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9]){0,1}$'),
      created_at  timestamptz not null default now()
    );

    create table users (
      id          text primary key
                  constraint users_id_length check (char_length(id) between 1 and 255),
      created_at  timestamptz not null default now()
    );

    create table memberships (
      org_id      text not null references orgs (id) on delete cascade,
      user_id     text not null references users (id) on delete cascade,
      role        text not null
                  constraint memberships_role check (role in ('viewer', 'editor', 'publisher', 'admin', 'auditor')),
      created_at  timestamptz not null default now(),
      updated_at  timestamptz not null default now(),
      primary key (org_id, user_id)
    );
    create index memberships_user_idx on memberships (user_id);

    create table api_keys (
      id          uuid primary key,
      org_id      text not null,
      user_id     text not null,
      name        text not null
                  constraint api_keys_name_length check (char_length(name) between 1 and 100),
      scopes      text[] not null
                  constraint api_keys_scopes check (
                    cardinality(scopes) >= 1
                    and scopes <@ array['view', 'edit', 'publish', 'admin', 'audit']::text[]
                  ),
      key_hash    text not null unique
                  constraint api_keys_hash_hex check (key_hash ~ '^[0-9a-f]{64}$'),
      created_at  timestamptz not null default now(),
      expires_at  timestamptz,
      revoked_at  timestamptz,
      constraint api_keys_member foreign key (org_id, user_id)
        references memberships (org_id, user_id) on delete cascade,
      constraint api_keys_expiry_after_creation check (expires_at is null or expires_at > created_at)
    );
    create index api_keys_owner_idx on api_keys (org_id, user_id, id);

    create table org_settings (
      org_id               text primary key references orgs (id) on delete cascade,
      governance_approval  boolean not null default false,
      updated_at           timestamptz not null default now()
    );
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('drop table if exists org_settings, api_keys, memberships, users, orgs');
}
