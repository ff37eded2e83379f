import pg from 'pg';

/** SQLSTATEs meaning "that database exists already" when two processes create it at once. */
const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505';

/**
 * Creates the database named in `databaseUrl` when it does not exist yet, connecting to the
 * `postgres` maintenance database of the same server. Safe when several services start at once:
 * the loser of a concurrent CREATE DATABASE sees either 42P04 or a unique violation on
 * `pg_database`, and both mean the database is there.
 */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(name)) {
    throw new Error(`invalid database name in DATABASE_URL: \`${name}\``);
  }
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount) return;
    try {
      await admin.query(`create database ${pg.escapeIdentifier(name)}`);
    } catch (err) {
      const { code, constraint } = err as { code?: string; constraint?: string };
      const raced = code === DUPLICATE_DATABASE || (code === UNIQUE_VIOLATION && constraint === 'pg_database_datname_index');
      if (!raced) throw err;
    }
  } finally {
    await admin.end();
  }
}
