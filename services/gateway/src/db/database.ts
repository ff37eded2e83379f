import { fileURLToPath } from 'node:url';
import knex, { type Knex } from 'knex';
export { ensureDatabase } from '@arbiter/service-kit';

/** A knex instance or an open transaction: what repository functions run their SQL on. */
export type Db = Knex | Knex.Transaction;

/** Where the gateway's knex migrations live (same relative place from `src/` and `dist/`). */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/** The gateway's own migrations table, so other services may share the database. */
const MIGRATIONS_TABLE = 'gateway_knex_migrations';

/** Opens a connection pool on `databaseUrl`. */
export function openDatabase(databaseUrl: string, poolMax = 10): Knex {
  return knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: poolMax } });
}

/** Runs every pending gateway migration (knex takes a lock, so concurrent starts are safe). */
export async function migrateLatest(db: Knex): Promise<void> {
  await db.migrate.latest({ directory: MIGRATIONS_DIR, tableName: MIGRATIONS_TABLE, loadExtensions: ['.js'] });
}

/** Resolves when the database answers a trivial query. */
export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('select 1');
}
