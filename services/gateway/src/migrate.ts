import { fileURLToPath } from 'node:url';
import { migrateLatest } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** Runs the gateway's pending migrations (its own folder and migrations table, so services may share a database). */
export function migrateGateway(db: Knex): Promise<void> {
  return migrateLatest(db, {
    directory: fileURLToPath(new URL('../migrations', import.meta.url)),
    tableName: 'gateway_knex_migrations',
  });
}
