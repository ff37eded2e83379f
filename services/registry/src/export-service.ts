import {
  EXPORT_PAGE_MAX_BYTES,
  type BundleBase,
  type BundleGroup,
  type BundleRecord,
  type ExportPage,
  type ExportSection,
  type Principal,
} from '@arbiter/contracts';
import { cursorField, decodeCursor, encodeCursor } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { z } from 'zod';
import { requireCapability } from './domain/access.js';
import { exportBases, exportGroups, type ExportedBase, type ExportedGroup } from './repositories/export.js';
import type { RecordRow } from './repositories/records.js';
import type { TimelineRow } from './repositories/timeline.js';

/** After base or group `id`; with `from`, base `id` itself again, from its record `from` on (its first records filled the last page). */
const IdCursor = z.object({ id: cursorField.uuid(), from: cursorField.int4().optional() });
const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** A version's timeline fields as the bundle carries them (none without a row: it took effect when published). */
function timelineFields(row: TimelineRow | undefined): Partial<BundleRecord> {
  if (row === undefined) return {};
  return {
    ...(row.effectiveFrom !== null ? { effectiveFrom: row.effectiveFrom.toISOString() } : {}),
    ...(row.cancelledAt !== null
      ? { cancelled: true as const, cancelledAt: row.cancelledAt.toISOString(), cancelledBy: row.cancelledBy ?? '' }
      : {}),
    ...(row.rollbackOf !== null ? { rollbackOf: row.rollbackOf } : {}),
  };
}

function bundleRecord(r: RecordRow, row: TimelineRow | undefined): BundleRecord {
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
    ...timelineFields(row),
  };
}

function bundleBase({ base, records, timeline }: ExportedBase): BundleBase {
  const rowOf = new Map(timeline.map((t) => [t.recordId, t]));
  return {
    baseId: base.id,
    createdBy: base.createdBy,
    createdAt: base.createdAt.toISOString(),
    latestVersion: base.latestVersion,
    records: records.map((r) => bundleRecord(r, rowOf.get(r.id))),
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

/** UTF-8 bytes of `value`'s JSON. */
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * Export of an org, admin only: pages of its live policy and flow bases (each
 * with every version and its draft) and of its groups (with their live members), by id. A page
 * holds at most `limit` items and {@link EXPORT_PAGE_MAX_BYTES} of them (it crosses the bus in one
 * reply); a base bigger than that is split by records over several pages (`from` in the cursor).
 */
export class ExportService {
  constructor(
    private readonly db: Knex,
    private readonly maxBytes: number = EXPORT_PAGE_MAX_BYTES,
  ) {}

  async page(p: Principal, query: { section: ExportSection; limit: number; cursor?: string }): Promise<ExportPage> {
    requireCapability(p, 'admin', 'export the org');
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, IdCursor);
    if (query.section === 'groups') {
      const rows = await exportGroups(this.db, { orgId: p.orgId, afterId: cursor?.id, limit: query.limit });
      return this.groupPage(rows.map(bundleGroup), query.limit);
    }
    const kind = query.section === 'policies' ? 'policy' : 'flow';
    const rows = await exportBases(this.db, {
      orgId: p.orgId,
      kind,
      ...(cursor === undefined ? {} : cursor.from !== undefined ? { fromId: cursor.id } : { afterId: cursor.id }),
      limit: query.limit,
    });
    return this.basePage(rows.map(bundleBase), query.limit, cursor?.from ?? 0);
  }

  /** Whole groups, up to `limit` and the page's bytes (always one). `groups` has one more than `limit` when more follow. */
  private groupPage(groups: BundleGroup[], limit: number): ExportPage {
    const items: BundleGroup[] = [];
    let used = 0;
    for (const group of groups.slice(0, limit)) {
      const bytes = jsonBytes(group) + 1;
      if (items.length > 0 && used + bytes > this.maxBytes) break;
      items.push(group);
      used += bytes;
    }
    const more = items.length < groups.length;
    return { items, nextCursor: more ? encodeCursor({ id: items[items.length - 1].groupId }) : null };
  }

  /**
   * Bases up to `limit` and the page's bytes, the first one from its record `from` on. A base that
   * does not fit whole is cut after the records that fit (at least one record a page) and the
   * cursor continues it. `bases` has one more than `limit` when more follow.
   */
  private basePage(bases: BundleBase[], limit: number, from: number): ExportPage {
    const items: BundleBase[] = [];
    let used = 0;
    for (const [i, base] of bases.slice(0, limit).entries()) {
      const first = i === 0 ? from : 0;
      let bytes = jsonBytes({ ...base, records: [] }) + 1;
      const records: BundleRecord[] = [];
      for (const record of base.records.slice(first)) {
        const size = jsonBytes(record) + 1;
        if (used + bytes + size > this.maxBytes && (items.length > 0 || records.length > 0)) break;
        records.push(record);
        bytes += size;
      }
      if (records.length < base.records.length - first) {
        // The rest of this base (all of it, when not one record fitted) goes on the next page.
        if (records.length === 0) return { items, nextCursor: encodeCursor({ id: items[items.length - 1].baseId }) };
        items.push({ ...base, records });
        return { items, nextCursor: encodeCursor({ id: base.baseId, from: first + records.length }) };
      }
      items.push(first === 0 ? base : { ...base, records });
      used += bytes;
    }
    const more = items.length < bases.length;
    return { items, nextCursor: more ? encodeCursor({ id: items[items.length - 1].baseId }) : null };
  }
}
