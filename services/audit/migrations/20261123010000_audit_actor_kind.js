/**
 * "What did this user do of this kind" (`actor` + one `kind`) is a common audit question: with
 * only the actor index, a rare combination scanned all of the actor's events. This index answers
 * it as a range scan in newest-first order like the others.
 */

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`create index audit_events_org_actor_kind_at on audit_events (org_id, actor_user_id, kind, at desc, event_id desc)`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`drop index audit_events_org_actor_kind_at`);
}
