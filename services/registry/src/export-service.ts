import type { BundleBase, BundleGroup, BundleRecord, ExportPage, ExportSection, Principal } from '@arbiter/contracts';
import { cursorField, decodeCursor, pageFrom } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { z } from 'zod';
import { requireCapability } from './domain/access.js';
import { exportBases, exportGroups, type ExportedBase, type ExportedGroup } from './repositories/export.js';
import type { RecordRow } from './repositories/records.js';

const IdCursor = z.object({ id: cursorField.uuid() });
const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function bundleRecord(r: RecordRow): BundleRecord {
  return {
    recordId: r.id,
    status: r.status,
    version: r.version,
    basedOnVersion: r.basedOnVersion,
    name: r.name,
    description: r.description,
    rule: r.rule,
    definition: r.definition,
    schema: r.schema,
    tests: r.tests,
    createdAt: r.createdAt.toISOString(),
    createdBy: r.createdBy,
    updatedAt: r.updatedAt.toISOString(),
    updatedBy: r.updatedBy,
    publishedAt: iso(r.publishedAt),
    publishedBy: r.publishedBy,
    ...(r.pinnedVersions !== null ? { pinnedVersions: r.pinnedVersions } : {}),
  };
}

function bundleBase({ base, records }: ExportedBase): BundleBase {
  return {
    baseId: base.id,
    createdBy: base.createdBy,
    createdAt: base.createdAt.toISOString(),
    latestVersion: base.latestVersion,
    records: records.map(bundleRecord),
  };
}

function bundleGroup(g: ExportedGroup): BundleGroup {
  return {
    groupId: g.id,
    name: g.name,
    description: g.description,
    createdBy: g.createdBy,
    createdAt: g.createdAt.toISOString(),
    members: g.members,
  };
}

/**
 * Export of an org (issue 15 item 6), admin only: pages of its live policy and flow bases (each
 * with every version and its draft) and of its groups (with their live members), by id.
 */
export class ExportService {
  constructor(private readonly db: Knex) {}

  async page(p: Principal, query: { section: ExportSection; limit: number; cursor?: string }): Promise<ExportPage> {
    requireCapability(p, 'admin', 'export the org');
    const afterId = query.cursor === undefined ? undefined : decodeCursor(query.cursor, IdCursor).id;
    if (query.section === 'groups') {
      const rows = await exportGroups(this.db, { orgId: p.orgId, afterId, limit: query.limit });
      return pageFrom(rows, query.limit, bundleGroup, (last) => ({ id: last.id }));
    }
    const kind = query.section === 'policies' ? 'policy' : 'flow';
    const rows = await exportBases(this.db, { orgId: p.orgId, kind, afterId, limit: query.limit });
    return pageFrom(rows, query.limit, bundleBase, (last) => ({ id: last.base.id }));
  }
}
