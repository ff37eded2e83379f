// @ts-check
// NOTE: knex turns every `?` of a raw statement into a bind parameter, so none may appear below.
/**
 * Webhooks storage (docs/design/webhooks.md): an org's endpoints with their signing secrets (the
 * previous one kept while it still signs), one delivery per event and endpoint (unique, so an event
 * redelivered by JetStream is fanned out once), each attempt of a delivery, and the transactional
 * outbox of the service's own events.
 */
import { outboxTableSql } from '@arbiter/service-kit';

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table webhook_endpoints (
      id                     uuid primary key,
      org_id                 text not null,
      url                    text not null,
      events                 text[] not null,
      description            text not null default '',
      secret                 text not null,
      previous_secret        text,
      previous_secret_until  timestamptz,
      secret_rotated_at      timestamptz,
      enabled                boolean not null default true,
      disabled_reason        text,
      disabled_at            timestamptz,
      -- first failed attempt since the last success; failing for the whole retry window disables
      failing_since          timestamptz,
      created_by             text not null,
      created_at             timestamptz not null,
      updated_at             timestamptz not null
    );
    create index webhook_endpoints_org_idx on webhook_endpoints (org_id, created_at, id);

    create table webhook_deliveries (
      id               uuid primary key,
      endpoint_id      uuid not null references webhook_endpoints (id) on delete cascade,
      org_id           text not null,
      event_id         uuid not null,
      event_kind       text not null,
      body             text not null,
      status           text not null constraint webhook_deliveries_status check (status in ('pending', 'delivered', 'failed')),
      attempts         integer not null default 0,
      created_at       timestamptz not null,
      -- the retry window runs from here (the creation, or a manual retry)
      retry_from       timestamptz not null,
      next_attempt_at  timestamptz,
      -- a dispatcher holds the delivery until then; a crashed one's deliveries are taken again after it
      lease_until      timestamptz,
      delivered_at     timestamptz,
      finished_at      timestamptz,
      constraint webhook_deliveries_once unique (endpoint_id, event_id)
    );
    create index webhook_deliveries_due_idx on webhook_deliveries (endpoint_id, next_attempt_at) where status = 'pending';
    create index webhook_deliveries_list_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
    create index webhook_deliveries_finished_idx on webhook_deliveries (finished_at) where status <> 'pending';

    create table webhook_attempts (
      id           bigserial primary key,
      delivery_id  uuid not null references webhook_deliveries (id) on delete cascade,
      at           timestamptz not null,
      status_code  integer,
      duration_ms  integer not null,
      error        text,
      response     text
    );
    create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, at desc);
    create index webhook_attempts_at_idx on webhook_attempts (at);
  `);
  await knex.raw(outboxTableSql('webhooks_outbox'));
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`
    drop table if exists webhooks_outbox;
    drop table if exists webhook_attempts;
    drop table if exists webhook_deliveries;
    drop table if exists webhook_endpoints;
  `);
}
