import type { ImpactReport, Principal } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';
import { shownReport } from '../impact-report.js';

/** Keeps `report` (bounded by the caller) as the latest of its record and content hash. */
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

/**
 * The latest report of a record of the reader's org for this content hash as the reader may see
 * it (examples only for the readers of decisions; at most `maxBytes`), or null. There is no read
 * of a kept report without its reader.
 */
export async function latestImpactReport(
  db: Db,
  reader: Principal,
  recordId: string,
  contentHash: string,
  maxBytes: number,
): Promise<ImpactReport | null> {
  const row = (await db('governance_impact_reports')
    .where({ org_id: reader.orgId, record_id: recordId, content_hash: contentHash })
    .first('report')) as { report: ImpactReport } | undefined;
  return row ? shownReport(reader, row.report, maxBytes) : null;
}
