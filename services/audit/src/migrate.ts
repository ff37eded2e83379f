import { fileURLToPath } from 'node:url';
import { migrateLatest } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** Runs the audit service's pending migrations (its own folder and migrations table). */
export function migrateAudit(db: Knex): Promise<void> {
  return migrateLatest(db, {
    directory: fileURLToPath(new URL('../migrations', import.meta.url)),
    tableName: 'audit_knex_migrations',
  });
}
