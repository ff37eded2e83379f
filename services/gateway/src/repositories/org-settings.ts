import type { Db } from '@arbiter/service-kit';

/** Settings of one org. */
export interface OrgSettingsRow {
  readonly governanceApproval: boolean;
}

/** The org's settings (defaults when the row is missing). */
export async function getOrgSettings(db: Db, orgId: string): Promise<OrgSettingsRow> {
  const row = (await db('org_settings').where({ org_id: orgId }).first('governance_approval')) as
    { governance_approval: boolean } | undefined;
  return { governanceApproval: row?.governance_approval ?? false };
}

/** Stores the org's settings. */
export async function putOrgSettings(db: Db, orgId: string, settings: OrgSettingsRow): Promise<OrgSettingsRow> {
  await db('org_settings')
    .insert({ org_id: orgId, governance_approval: settings.governanceApproval })
    .onConflict('org_id')
    .merge({ governance_approval: settings.governanceApproval, updated_at: db.fn.now() });
  return settings;
}
