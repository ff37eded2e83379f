import { fileURLToPath } from 'node:url';
import knex, { type Knex } from 'knex';

/** A knex instance or an open transaction: what repository functions run their SQL on. */
export type Db = Knex | Knex.Transaction;

/** Where the registry's knex migrations live (same relative place from `src/` and `dist/`). */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/** The registry's own migrations table, so other services may share the database. */
const MIGRATIONS_TABLE = 'registry_knex_migrations';

/** Opens a connection pool on `databaseUrl`. */
export function openDatabase(databaseUrl: string, poolMax = 10): Knex {
  return knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: poolMax } });
}

/**
 * Creates the database named in `databaseUrl` when it does not exist yet, connecting to the
 * `postgres` maintenance database of the same server. Safe when several processes race.
 */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(name)) {
    throw new Error(`invalid database name in DATABASE_URL: \`${name}\``);
  }
  url.pathname = '/postgres';
  const admin = openDatabase(url.toString(), 1);
  try {
    const found = await admin.raw('select 1 from pg_database where datname = ?', [name]);
    if (found.rows.length > 0) return;
    try {
      await admin.raw('create database ??', [name]);
    } catch (err) {
      // 42P04 duplicate_database: another process created it between the check and now.
      if ((err as { code?: string }).code !== '42P04') throw err;
    }
  } finally {
    await admin.destroy();
  }
}

/** Runs every pending registry migration (knex takes a lock, so concurrent starts are safe). */
export async function migrateLatest(db: Knex): Promise<void> {
  await db.migrate.latest({ directory: MIGRATIONS_DIR, tableName: MIGRATIONS_TABLE, loadExtensions: ['.js'] });
}
