import type { ImpactReport } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';

/** Keeps `report` as the latest of its record and content hash. */
export async function saveImpactReport(db: Db, orgId: string, report: ImpactReport): Promise<void> {
  await db('governance_impact_reports')
    .insert({
      org_id: orgId,
      record_id: report.policyId ?? report.flowId,
      content_hash: report.contentHash,
      report: JSON.stringify(report),
    })
    .onConflict(['org_id', 'record_id', 'content_hash'])
    .merge({ report: JSON.stringify(report), created_at: db.fn.now() });
}

/** The latest report of a record for this content hash, or null. */
export async function latestImpactReport(db: Db, orgId: string, recordId: string, contentHash: string): Promise<ImpactReport | null> {
  const row = (await db('governance_impact_reports')
    .where({ org_id: orgId, record_id: recordId, content_hash: contentHash })
    .first('report')) as { report: ImpactReport } | undefined;
  return row?.report ?? null;
}
