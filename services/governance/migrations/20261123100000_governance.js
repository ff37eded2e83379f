// @ts-check
// NOTE: knex turns every `?` of a raw statement into a bind parameter, so none may appear below.
/**
 * Governance storage (docs/design/governance.md): one row per draft that was ever submitted
 * (locked by every change of its reviews, so submissions, decisions and publishes of one draft run
 * one at a time), its publish requests (history kept; the latest is the one that counts), and the
 * transactional event outbox. The drafts themselves stay in the registry's database: this one only
 * holds the content hash each request was made for.
 */
import { outboxTableSql } from '@arbiter/service-kit';

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.raw(`
    create table governance_drafts (
      draft_id           uuid primary key,
      org_id             text not null,
      kind               text not null constraint governance_drafts_kind check (kind in ('policy', 'flow')),
      base_id            uuid not null,
      latest_request_id  uuid,
      created_at         timestamptz not null default now()
    );

    create table governance_requests (
      id                 uuid primary key,
      draft_id           uuid not null references governance_drafts (draft_id),
      org_id             text not null,
      kind               text not null,
      base_id            uuid not null,
      state              text not null constraint governance_requests_state
                           check (state in ('pending_approval', 'approved', 'rejected', 'published')),
      -- the draft's content hash when submitted; an approval is only given for this content
      content_hash       text not null,
      requested_by       text not null,
      requested_at       timestamptz not null,
      decided_by         text,
      decided_at         timestamptz,
      comment            text,
      published_by       text,
      published_at       timestamptz,
      published_version  integer,
      constraint governance_requests_decided check ((decided_by is null) = (decided_at is null)),
      constraint governance_requests_published check ((state = 'published') = (published_at is not null))
    );
    create index governance_requests_draft_idx on governance_requests (draft_id, requested_at desc);

    alter table governance_drafts add constraint governance_drafts_latest_fk
      foreign key (latest_request_id) references governance_requests (id) deferrable initially deferred;
  `);
  await knex.raw(outboxTableSql('governance_outbox'));
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw(`
    drop table if exists governance_outbox;
    alter table if exists governance_drafts drop constraint if exists governance_drafts_latest_fk;
    drop table if exists governance_requests;
    drop table if exists governance_drafts;
  `);
}
