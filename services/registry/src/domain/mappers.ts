import type { FlowRecord, FlowSummary, FlowTest, PolicyRecord, PolicySummary, PolicyTest } from '@arbiter/contracts';
import type { BaseListRow, DeletedBaseListRow, RecordRow } from '../repositories/records.js';
import { contentHashOf } from './hash.js';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function meta(r: RecordRow) {
  return {
    baseId: r.baseId,
    name: r.name,
    description: r.description,
    schema: r.schema,
    status: r.status,
    version: r.version,
    basedOnVersion: r.basedOnVersion,
    createdAt: r.createdAt.toISOString(),
    createdBy: r.createdBy,
    updatedAt: r.updatedAt.toISOString(),
    updatedBy: r.updatedBy,
    publishedAt: iso(r.publishedAt),
    publishedBy: r.publishedBy,
    contentHash: contentHashOf(r),
    authors: r.authors,
  };
}

/** The wire form of a policy record. */
export function toPolicyRecord(r: RecordRow): PolicyRecord {
  return { policyId: r.id, ...meta(r), rule: r.rule ?? '', tests: r.tests as PolicyTest[] };
}

/** The wire form of a flow record. */
export function toFlowRecord(r: RecordRow): FlowRecord {
  return {
    flowId: r.id,
    ...meta(r),
    definition: r.definition!,
    tests: r.tests as FlowTest[],
    ...(r.pinnedVersions !== null ? { pinnedVersions: r.pinnedVersions } : {}),
  };
}

function summaryMeta({ base, current }: BaseListRow) {
  return {
    baseId: base.id,
    name: current.name,
    description: current.description,
    status: current.status,
    version: current.version,
    latestVersion: base.latestVersion,
    createdBy: base.createdBy,
    createdAt: base.createdAt.toISOString(),
    updatedAt: current.updatedAt.toISOString(),
    publishedAt: iso(current.publishedAt),
  };
}

/** A policy base in a list. */
export function toPolicySummary(row: BaseListRow): PolicySummary {
  return { policyId: row.current.id, draftId: row.draftId, ...summaryMeta(row) };
}

/** A flow base in a list. */
export function toFlowSummary(row: BaseListRow): FlowSummary {
  return { flowId: row.current.id, draftId: row.draftId, ...summaryMeta(row) };
}

/** A deleted policy base in a list (`?deleted=true`). */
export function toDeletedPolicySummary(row: DeletedBaseListRow): PolicySummary {
  return { ...toPolicySummary(row), deletedAt: row.deletedAt.toISOString(), deletedBy: row.deletedBy };
}

/** A deleted flow base in a list (`?deleted=true`). */
export function toDeletedFlowSummary(row: DeletedBaseListRow): FlowSummary {
  return { ...toFlowSummary(row), deletedAt: row.deletedAt.toISOString(), deletedBy: row.deletedBy };
}
