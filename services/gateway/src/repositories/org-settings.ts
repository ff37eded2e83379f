import type { Db } from '@arbiter/service-kit';

/** Settings of one org. */
export interface OrgSettingsRow {
  readonly governanceApproval: boolean;
  /** The least coverage percent (0–100) a publish or a submission for review needs; 0 never refuses. */
  readonly minCoverage: number;
}

/** The org's settings (defaults when the row is missing). */
export async function getOrgSettings(db: Db, orgId: string): Promise<OrgSettingsRow> {
  const row = (await db('org_settings').where({ org_id: orgId }).first('governance_approval', 'min_coverage')) as
    { governance_approval: boolean; min_coverage: number } | undefined;
  return { governanceApproval: row?.governance_approval ?? false, minCoverage: row?.min_coverage ?? 0 };
}

/** Stores the org's settings. */
export async function putOrgSettings(db: Db, orgId: string, settings: OrgSettingsRow): Promise<OrgSettingsRow> {
  const columns = { governance_approval: settings.governanceApproval, min_coverage: settings.minCoverage };
  await db('org_settings')
    .insert({ org_id: orgId, ...columns })
    .onConflict('org_id')
    .merge({ ...columns, updated_at: db.fn.now() });
  return settings;
}
