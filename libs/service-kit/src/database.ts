import knex, { type Knex } from 'knex';
import pg from 'pg';

/** SQLSTATEs meaning "that database exists already" when two processes create it at once. */
const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505';

/** Pool size and deadlines of a service's PostgreSQL connections (the `DatabaseConfig` part's variables). */
export interface DatabaseOptions {
  poolMax: number;
  /** `statement_timeout` of every session, and the client's wait for any query's answer (a bit longer). */
  statementTimeoutMs: number;
  /** Time to open a connection, and to wait for a free one from the pool. */
  connectTimeoutMs: number;
}

const DEFAULTS: DatabaseOptions = { poolMax: 10, statementTimeoutMs: 5000, connectTimeoutMs: 2000 };

/** The {@link DatabaseOptions} of a service configuration that composes `DatabaseConfig`. */
export function databaseOptionsOf(config: {
  DB_POOL_MAX: number;
  DB_STATEMENT_TIMEOUT_MS: number;
  DB_CONNECT_TIMEOUT_MS: number;
}): DatabaseOptions {
  return {
    poolMax: config.DB_POOL_MAX,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
  };
}

/** A knex instance or an open transaction: what repository functions run their SQL on. */
export type Db = Knex | Knex.Transaction;

/**
 * A knex pool on `databaseUrl` in which nothing waits forever: connecting and acquiring a connection
 * give up after `connectTimeoutMs`, PostgreSQL cancels a statement after `statementTimeoutMs`, and
 * the client stops waiting shortly after (in case the server itself is frozen).
 */
export function openDatabase(databaseUrl: string, opts: Partial<DatabaseOptions> = {}): Knex {
  const o = { ...DEFAULTS, ...opts };
  return knex({
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      connectionTimeoutMillis: o.connectTimeoutMs,
      statement_timeout: o.statementTimeoutMs,
      query_timeout: o.statementTimeoutMs + 1000,
    },
    pool: { min: 0, max: o.poolMax },
    acquireConnectionTimeout: o.connectTimeoutMs,
  });
}

/**
 * Runs every pending migration of one service: its own folder and its own migrations table, so
 * services may share a database. knex takes a lock, so concurrent starts are safe.
 */
export async function migrateLatest(db: Knex, opts: { directory: string; tableName: string }): Promise<void> {
  await db.migrate.latest({ directory: opts.directory, tableName: opts.tableName, loadExtensions: ['.js'] });
}

/** Resolves when the database answers a trivial query. */
export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('select 1');
}

/**
 * Creates the database named in `databaseUrl` when it does not exist yet, connecting to the
 * `postgres` maintenance database of the same server. Safe when several services start at once:
 * the loser of a concurrent CREATE DATABASE sees either 42P04 or a unique violation on
 * `pg_database`, and both mean the database is there.
 */
export async function ensureDatabase(databaseUrl: string, opts: { connectTimeoutMs?: number } = {}): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(name)) {
    throw new Error(`invalid database name in DATABASE_URL: \`${name}\``);
  }
  url.pathname = '/postgres';
  const timeoutMs = opts.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
  const admin = new pg.Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: timeoutMs,
    query_timeout: DEFAULTS.statementTimeoutMs,
  });
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
