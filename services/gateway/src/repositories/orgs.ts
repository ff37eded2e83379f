import type { Db } from '@arbiter/service-kit';

/** Whether the organization exists. */
export async function orgExists(db: Db, orgId: string): Promise<boolean> {
  const row: unknown = await db('orgs').where({ id: orgId }).first('id');
  return row !== undefined;
}

/** Creates the organization and its default settings; false when it already existed. */
export async function insertOrg(db: Db, orgId: string): Promise<boolean> {
  const inserted = await db('orgs').insert({ id: orgId }).onConflict('id').ignore().returning('id');
  await db('org_settings').insert({ org_id: orgId }).onConflict('org_id').ignore();
  return inserted.length > 0;
}

/**
 * Serialises bootstrap work on one org across processes for the rest of the transaction
 * (a PostgreSQL transaction-level advisory lock).
 */
export async function lockOrgForBootstrap(trx: Db, orgId: string): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtext('arbiter.gateway.bootstrap:' || ?))", [orgId]);
}
