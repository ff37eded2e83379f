/**
 * Clean-up of the PostgreSQL databases tests create. Dropping a database waits for its sessions to
 * end and its files to go, which on a busy machine takes far longer than a service's statement
 * deadline: clean-ups run on a session of their own with a long deadline, and the hooks that call
 * them pass {@link CLEANUP_TIMEOUT_MS} as their own timeout (`afterAll(fn, CLEANUP_TIMEOUT_MS)`).
 */
import pg from 'pg';
import { withDatabase } from './servers.js';

/** How long a test hook that cleans up may take (vitest's default for hooks is 10 s; packages whose hooks drop databases set at least this). */
export const CLEANUP_TIMEOUT_MS = 60_000;

/** The statement deadline of a clean-up session: shorter than the hook's, so a stuck drop fails with PostgreSQL's message. */
export const CLEANUP_STATEMENT_TIMEOUT_MS = 45_000;

/**
 * Drops each of `names` (when it exists) on the PostgreSQL server of `serverUrl`, ending the sessions
 * still connected to it. The session sets its own `statement_timeout`, whatever the URL or the
 * environment says.
 */
export async function dropDatabases(serverUrl: string, names: readonly string[]): Promise<void> {
  const client = new pg.Client({
    connectionString: withDatabase(serverUrl, 'postgres'),
    connectionTimeoutMillis: 10_000,
    query_timeout: CLEANUP_STATEMENT_TIMEOUT_MS + 5_000,
  });
  await client.connect();
  try {
    await client.query(`set statement_timeout = ${CLEANUP_STATEMENT_TIMEOUT_MS}`);
    for (const name of names) await client.query(`drop database if exists ${client.escapeIdentifier(name)} with (force)`);
  } finally {
    await client.end();
  }
}
