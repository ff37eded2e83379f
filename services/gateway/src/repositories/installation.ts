import type { Db } from '@arbiter/service-kit';

/** The id of the database this gateway runs on, made once by its migration (a restored backup keeps it; a new database has another). */
export async function installationId(db: Db): Promise<string> {
  const row = (await db('gateway_installation').first('id')) as { id: string } | undefined;
  if (row === undefined) throw new Error('gateway_installation has no row: run the gateway migrations');
  return row.id;
}
