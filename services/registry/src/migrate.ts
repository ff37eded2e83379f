import { fileURLToPath } from 'node:url';
import { migrateLatest } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** Runs the registry's pending migrations (its own folder and migrations table, so services may share a database). */
export function migrateRegistry(db: Knex): Promise<void> {
  return migrateLatest(db, {
    directory: fileURLToPath(new URL('../migrations', import.meta.url)),
    tableName: 'registry_knex_migrations',
  });
}
