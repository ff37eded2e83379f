/**
 * The gateway's transactional outbox: identity events (role assignments, API keys, org settings)
 * commit with their change and are published by the event relay, so none is lost when NATS is
 * down or the process dies (they were queued in memory before).
 */
import { outboxTableSql } from '@arbiter/service-kit';

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(outboxTableSql('gateway_outbox'));
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('drop table if exists gateway_outbox');
}
