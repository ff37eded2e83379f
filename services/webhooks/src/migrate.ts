import { fileURLToPath } from 'node:url';
import { migrateLatest } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** Runs the webhooks service's pending migrations (its own folder and migrations table). */
export function migrateWebhooks(db: Knex): Promise<void> {
  return migrateLatest(db, {
    directory: fileURLToPath(new URL('../migrations', import.meta.url)),
    tableName: 'webhooks_knex_migrations',
  });
}
