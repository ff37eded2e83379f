import type {
  ErrorReason,
  FlowDefinition,
  ImportBundle,
  ImportFlowBase,
  ImportItem,
  ImportPolicyBase,
  RunnableKind,
} from '@arbiter/contracts';
import type { ImportedBaseRow, ImportedGroupRow, KnownBase } from '../repositories/import.js';
import type { RecordRow } from '../repositories/records.js';
import type { TimelineRow } from '../repositories/timeline.js';
import { MAX_PENDING_SCHEDULES } from './timeline.js';

/** What the target org already holds that the bundle's ids meet (looked up before planning). */
export interface ImportLookups {
  /** Bases of the org that bases of the bundle, or named by it (flow nodes, group members), map to, by source base id (see `knownBases`). */
  knownBases: Map<string, KnownBase>;
  /** Policy base and record ids named by flows that are live in the org itself. */
  orgPolicies: { bases: Set<string>; records: Set<string> };
  /** Groups of the org a bundle group maps to, by source group id. */
  knownGroups: Map<string, string>;
}

/** The plan of an import: one item per base and group, and the rows to insert when nothing conflicts. */
export interface ImportPlan {
  items: ImportItem[];
  bases: ImportedBaseRow[];
  groups: ImportedGroupRow[];
}

type Base = ImportPolicyBase | ImportFlowBase;

/** The current record of a bundle base: its latest version, else its draft. */
function currentOf(b: Base): Base['records'][number] {
  const versions = b.records.filter((r) => r.version !== null);
  if (versions.length === 0) return b.records[0];
  return versions.reduce((a, r) => (r.version! > a.version! ? r : a));
}

/** Why a bundle base cannot be stored as it is (duplicate versions, two drafts, a wrong `latestVersion`), if it cannot. */
function inconsistency(b: Base): string | undefined {
  const versions = b.records.flatMap((r) => (r.version === null ? [] : [r.version]));
  if (new Set(versions).size !== versions.length) return 'the bundle numbers two records of it with the same version';
  if (b.records.length - versions.length > 1) return 'the bundle has two drafts of it';
  const latest = versions.length === 0 ? null : Math.max(...versions);
  if (latest !== b.latestVersion) return `its \`latestVersion\` is ${b.latestVersion} but its newest record is version ${latest}`;
  return undefined;
}

/**
 * What is wrong with the bundle's timeline (a 400 before anything is looked up: the bundle itself is
 * wrong), each with the record's or base's path: a version whose `rollbackOf` names no earlier
 * version of its own base in the bundle, and a base with more than {@link MAX_PENDING_SCHEDULES}
 * versions still waiting for their instant at `now` (the bound a publish keeps).
 */
export function timelineProblems(bundle: ImportBundle, now: Date): ErrorReason[] {
  const problems: ErrorReason[] = [];
  for (const [section, bases] of [
    ['policies', bundle.policies],
    ['flows', bundle.flows],
  ] as const) {
    bases.forEach((b: Base, i) => {
      const versions = new Set(b.records.flatMap((r) => (r.version === null ? [] : [r.version])));
      b.records.forEach((r, j) => {
        if (r.rollbackOf === undefined) return;
        if (r.version !== null && r.rollbackOf < r.version && versions.has(r.rollbackOf)) return;
        problems.push({
          code: 'invalid_rollback',
          message: `record \`${r.recordId}\` (version ${r.version ?? 'none'} of base \`${b.baseId}\`) rolls back to version ${r.rollbackOf}, which is not an earlier version of its base in the bundle`,
          path: `${section}.${i}.records.${j}.rollbackOf`,
        });
      });
      const pending = b.records.filter(
        (r) => r.version !== null && r.cancelled !== true && r.effectiveFrom !== undefined && Date.parse(r.effectiveFrom) > now.getTime(),
      ).length;
      if (pending > MAX_PENDING_SCHEDULES) {
        problems.push({
          code: 'too_many_schedules',
          message: `base \`${b.baseId}\` has ${pending} versions waiting for their instant; a base may have at most ${MAX_PENDING_SCHEDULES}`,
          path: `${section}.${i}.records`,
        });
      }
    });
  }
  return problems;
}

/** The timeline row of an imported version, if the bundle gives it one (docs/design/timeline.md). */
function timelineRow(r: Base['records'][number], recordId: string, baseId: string): TimelineRow[] {
  if (r.version === null || (r.effectiveFrom === undefined && r.cancelled === undefined && r.rollbackOf === undefined)) return [];
  return [
    {
      recordId,
      baseId,
      version: r.version,
      effectiveFrom: r.effectiveFrom === undefined ? null : new Date(r.effectiveFrom),
      rollbackOf: r.rollbackOf ?? null,
      cancelledAt: r.cancelled === true && r.cancelledAt !== undefined ? new Date(r.cancelledAt) : null,
      cancelledBy: r.cancelled === true ? (r.cancelledBy ?? null) : null,
    },
  ];
}

/** The policy references of a flow definition, as `[nodeId, kind, id]`. */
function policyRefs(def: FlowDefinition): [string, 'baseId' | 'policyId', string][] {
  const out: [string, 'baseId' | 'policyId', string][] = [];
  for (const [nodeId, node] of Object.entries(def.nodes)) {
    if (node.type !== 'policy') continue;
    if (node.baseId !== undefined) out.push([nodeId, 'baseId', node.baseId]);
    if (node.policyId !== undefined) out.push([nodeId, 'policyId', node.policyId]);
  }
  return out;
}

/** `def` with its policy references replaced by their ids in the target org. */
function remapDefinition(def: FlowDefinition, baseIds: Map<string, string>, recordIds: Map<string, string>): FlowDefinition {
  // Object.fromEntries defines own properties, so a node named like a prototype member stays a node.
  const nodes: FlowDefinition['nodes'] = Object.fromEntries(
    Object.entries(def.nodes).map(([nodeId, node]) => [
      nodeId,
      node.type !== 'policy'
        ? node
        : {
            ...node,
            ...(node.baseId !== undefined ? { baseId: baseIds.get(node.baseId) ?? node.baseId } : {}),
            ...(node.policyId !== undefined ? { policyId: recordIds.get(node.policyId) ?? node.policyId } : {}),
          },
    ]),
  );
  return { start: def.start, nodes };
}

/**
 * Plans loading `bundle` into the caller's org, with no I/O: each base or group is created (new
 * ids), unchanged (imported before at the same latest version, or the same org's own base), or a
 * conflict (an earlier import at another version, an inconsistent base, a flow naming a policy
 * neither imported nor in the org, a group member not imported; in a `governed` org, a new base
 * with published versions: those enter it only through review). Names are labels, not keys, as at
 * create (docs/api.md#export-and-import): a bundle or an org holding two bases or groups of one
 * name is no conflict, so every export imports into an empty org. Version numbers, statuses and
 * the records' authors and times are kept; the bases and groups are owned by the importer.
 */
export function planImport(
  bundle: ImportBundle,
  lookups: ImportLookups,
  target: { orgId: string; importer: string; governed?: boolean },
  newId: () => string,
): ImportPlan {
  const items: ImportItem[] = [];
  const bases: ImportedBaseRow[] = [];
  const groups: ImportedGroupRow[] = [];
  const baseIds = new Map<string, string>();
  const baseKinds = new Map<string, RunnableKind>();
  const recordIds = new Map<string, string>();
  const seenIds = new Set<string>();

  const planBase = (kind: RunnableKind, b: Base): { item: ImportItem; create: boolean } => {
    const name = currentOf(b).name;
    const item = (action: ImportItem['action'], targetId: string | null, reason?: string): ImportItem => ({
      type: kind,
      name,
      sourceId: b.baseId,
      action,
      targetId,
      ...(reason !== undefined ? { reason } : {}),
    });
    if (seenIds.has(b.baseId)) return { item: item('conflict', null, `base \`${b.baseId}\` is twice in the bundle`), create: false };
    seenIds.add(b.baseId);
    const bad = inconsistency(b);
    if (bad !== undefined) return { item: item('conflict', null, bad), create: false };
    const known = lookups.knownBases.get(b.baseId);
    if (known !== undefined) {
      if (known.kind !== kind) return { item: item('conflict', null, `\`${b.baseId}\` is a ${known.kind} in this org`), create: false };
      if (known.latestVersion !== b.latestVersion) {
        return {
          item: item(
            'conflict',
            known.id,
            `already in this org as \`${known.id}\` at version ${known.latestVersion ?? 'none'}; the bundle has version ` +
              `${b.latestVersion ?? 'none'}: an import does not merge versions into an existing base`,
          ),
          create: false,
        };
      }
      baseIds.set(b.baseId, known.id);
      baseKinds.set(b.baseId, kind);
      for (const r of b.records) {
        const id = known.records.get(r.version ?? 'draft');
        if (id !== undefined) recordIds.set(r.recordId, id);
      }
      return { item: item('unchanged', known.id, `already in this org as \`${known.id}\` at the same version`), create: false };
    }
    if (target.governed === true && b.records.some((r) => r.status === 'published')) {
      const reason = `org \`${target.orgId}\` publishes through review only: a published version cannot be imported into it`;
      return { item: item('conflict', null, reason), create: false };
    }
    const id = newId();
    baseIds.set(b.baseId, id);
    baseKinds.set(b.baseId, kind);
    for (const r of b.records) recordIds.set(r.recordId, newId());
    return { item: item('create', id), create: true };
  };

  const toRows = (kind: RunnableKind, b: Base): ImportedBaseRow => {
    const id = baseIds.get(b.baseId)!;
    const records: RecordRow[] = b.records.map((r) => ({
      id: recordIds.get(r.recordId)!,
      baseId: id,
      kind,
      status: r.status,
      version: r.version,
      basedOnVersion: r.basedOnVersion,
      name: r.name,
      description: r.description,
      rule: r.rule,
      definition: r.definition === null ? null : remapDefinition(r.definition, baseIds, recordIds),
      schema: r.schema,
      tests: r.tests,
      createdAt: new Date(r.createdAt),
      createdBy: r.createdBy,
      updatedAt: new Date(r.updatedAt),
      updatedBy: r.updatedBy,
      publishedAt: r.publishedAt === null ? null : new Date(r.publishedAt),
      publishedBy: r.publishedBy,
      authors: [...new Set([r.createdBy, r.updatedBy])],
      // Node ids stay as they are, and pins are version numbers of the nodes' bases: they carry over.
      pinnedVersions: r.status === 'published' && 'pinnedVersions' in r ? (r.pinnedVersions ?? null) : null,
    }));
    return {
      id,
      orgId: target.orgId,
      kind,
      createdBy: target.importer,
      createdAt: new Date(b.createdAt),
      latestVersion: b.latestVersion,
      currentRecordId: recordIds.get(currentOf(b).recordId)!,
      originOrgId: bundle.orgId,
      originBaseId: b.baseId,
      records,
      // Schedules keep their instants (past or future), cancellations and rollbacks their marks.
      timeline: b.records.flatMap((r) => timelineRow(r, recordIds.get(r.recordId)!, id)),
    };
  };

  const sections: [RunnableKind, Base[]][] = [
    ['policy', bundle.policies],
    ['flow', bundle.flows],
  ];
  const created: [RunnableKind, Base, ImportItem][] = [];
  for (const [kind, list] of sections) {
    for (const b of list) {
      const { item, create } = planBase(kind, b);
      items.push(item);
      if (create) created.push([kind, b, item]);
    }
  }
  // Bases the bundle only names (flow nodes, group members) resolve to their earlier import, so a
  // large org can be imported in parts.
  for (const [sourceId, known] of lookups.knownBases) {
    if (seenIds.has(sourceId)) continue;
    baseIds.set(sourceId, known.id);
    baseKinds.set(sourceId, known.kind);
  }
  // Flow references are checked once every policy is mapped.
  for (const [kind, b, item] of created) {
    const missing = b.records.flatMap((r) =>
      r.definition === null
        ? []
        : policyRefs(r.definition).filter(([, field, id]) =>
            field === 'baseId'
              ? !baseIds.has(id) && !lookups.orgPolicies.bases.has(id)
              : !recordIds.has(id) && !lookups.orgPolicies.records.has(id),
          ),
    );
    if (missing.length > 0) {
      const [nodeId, field, id] = missing[0];
      item.action = 'conflict';
      item.targetId = null;
      baseKinds.delete(b.baseId);
      item.reason = `node \`${nodeId}\` names policy ${field === 'baseId' ? 'base' : 'record'} \`${id}\`, which is neither imported nor in this org`;
      continue;
    }
    bases.push(toRows(kind, b));
  }

  for (const g of bundle.groups) {
    const item = (action: ImportItem['action'], targetId: string | null, reason?: string): ImportItem => ({
      type: 'group',
      name: g.name,
      sourceId: g.groupId,
      action,
      targetId,
      ...(reason !== undefined ? { reason } : {}),
    });
    const known = lookups.knownGroups.get(g.groupId);
    const notMapped = g.members.find((m) => baseKinds.get(m.memberId) !== m.memberType);
    if (seenIds.has(g.groupId)) items.push(item('conflict', null, `group \`${g.groupId}\` is twice in the bundle`));
    else if (known !== undefined) items.push(item('unchanged', known, `already in this org as \`${known}\``));
    else if (notMapped !== undefined)
      items.push(item('conflict', null, `member ${notMapped.memberType} \`${notMapped.memberId}\` is neither imported nor in this org`));
    else {
      const id = newId();
      items.push(item('create', id));
      groups.push({
        id,
        orgId: target.orgId,
        name: g.name,
        description: g.description,
        createdBy: target.importer,
        createdAt: new Date(g.createdAt),
        originOrgId: bundle.orgId,
        originGroupId: g.groupId,
        members: g.members.map((m) => ({ baseId: baseIds.get(m.memberId)!, memberType: m.memberType })),
      });
    }
    seenIds.add(g.groupId);
  }
  return { items, bases, groups };
}
