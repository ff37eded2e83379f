// @ts-check
/**
 * Removed members: a row per user removed from an org, so a bearer token of that user (still
 * valid at the identity provider) does not make them a member again on their next request. An
 * admin adding the user back (`PUT /users/{userId}`) deletes the row.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table member_removals (
      org_id      text not null references orgs (id) on delete cascade,
      user_id     text not null
                  constraint member_removals_user_id_length check (char_length(user_id) between 1 and 255),
      removed_at  timestamptz not null default now(),
      removed_by  text not null,
      primary key (org_id, user_id)
    );
  `);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('drop table if exists member_removals');
}
