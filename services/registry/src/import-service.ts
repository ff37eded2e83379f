import {
  ArbiterError,
  newEvent,
  type ArbiterEvent,
  type ErrorReason,
  type FlowDefinition,
  type ImportBundle,
  type ImportReply,
  type Principal,
  type RunnableKind,
} from '@arbiter/contracts';
import type { EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { requireCapability } from './domain/access.js';
import { newId } from './domain/ids.js';
import { planImport, timelineProblems, type ImportLookups, type ImportPlan } from './domain/import-plan.js';
import { insertImported, knownBases, knownGroups, livePolicyIds, lockOrgImports } from './repositories/import.js';
import type { KindSpec } from './records-service.js';
import type { RunnableIndexWriter } from './runnable-index.js';

/** What the import needs around it. */
export interface ImportDeps {
  db: Knex;
  index: RunnableIndexWriter;
  events: EventOutbox<Knex.Transaction>;
  logger: Logger;
  /** The publish checks of each kind, run on every published version an import creates (within its transaction). */
  publishProblems: Record<RunnableKind, KindSpec['publishProblems']>;
  /** Every structural problem of each flow definition (`validateDefinition`), checked in a worker. */
  definitionProblems(definitions: FlowDefinition[]): Promise<ErrorReason[][]>;
}

/** Runnable-index writes in flight at once after an import. */
const INDEX_CONCURRENCY = 8;

/**
 * Every problem of the bundle itself (400 before anything is looked up): its flow definitions'
 * structure (`structure`: each flow record's problems, in bundle order), a record id used twice
 * (records are stored by id), a version rolling back to no earlier version of its base, a base with
 * more versions waiting for their instant than a publish allows, a group listing a member twice.
 */
function bundleProblems(bundle: ImportBundle, structure: ErrorReason[][], now: Date): ErrorReason[] {
  let k = 0;
  const problems: ErrorReason[] = bundle.flows.flatMap((b, i) =>
    b.records.flatMap((_r, j) =>
      structure[k++].map((p) => ({ ...p, path: `flows.${i}.records.${j}.definition${p.path ? `.${p.path}` : ''}` })),
    ),
  );
  const firstRecord = new Map<string, string>();
  for (const [section, bases] of [
    ['policies', bundle.policies],
    ['flows', bundle.flows],
  ] as const) {
    bases.forEach((b, i) =>
      b.records.forEach((r, j) => {
        const path = `${section}.${i}.records.${j}.recordId`;
        const first = firstRecord.get(r.recordId);
        if (first === undefined) firstRecord.set(r.recordId, path);
        else problems.push({ code: 'duplicate_id', message: `record id \`${r.recordId}\` is used twice (first at \`${first}\`)`, path });
      }),
    );
  }
  problems.push(...timelineProblems(bundle, now));
  bundle.groups.forEach((g, i) => {
    const seen = new Set<string>();
    g.members.forEach((m, j) => {
      if (seen.has(m.memberId)) {
        problems.push({
          code: 'duplicate_member',
          message: `group \`${g.groupId}\` lists member \`${m.memberId}\` twice`,
          path: `groups.${i}.members.${j}.memberId`,
        });
      }
      seen.add(m.memberId);
    });
  });
  return problems;
}

/**
 * Import of a bundle into the caller's org, admin only. A dry run answers the
 * plan; a real import plans again inside one transaction that holds the org's import lock,
 * refuses with 409 (listing every conflict) when anything conflicts, else inserts every created
 * base, record, group and membership, runs the publish checks on every published version it
 * created (422 with every reason, everything rolled back), and queues one `imported` event for
 * each base and group.
 */
export class ImportService {
  constructor(private readonly deps: ImportDeps) {}

  async run(p: Principal, bundle: ImportBundle, dryRun: boolean, governed = false): Promise<ImportReply> {
    requireCapability(p, 'admin', 'import bundles');
    const structure = await this.deps.definitionProblems(bundle.flows.flatMap((b) => b.records.map((r) => r.definition)));
    const bad = bundleProblems(bundle, structure, new Date());
    if (bad.length > 0) {
      throw new ArbiterError(
        'validation_failed',
        `the bundle is invalid: ${bad.length} problem(s): ${bad[0].message}${bad.length > 1 ? '; …' : ''}`,
        bad,
      );
    }
    if (dryRun) return reply(true, await this.plan(this.deps.db, p, bundle, governed));
    const plan = await this.deps.db.transaction(async (trx) => {
      await lockOrgImports(trx, p.orgId);
      const planned = await this.plan(trx, p, bundle, governed);
      const conflicts = planned.items.filter((i) => i.action === 'conflict');
      if (conflicts.length > 0) {
        throw new ArbiterError(
          'conflict',
          `the bundle conflicts with this org in ${conflicts.length} place(s); nothing was imported: ${conflicts
            .slice(0, 5)
            .map((c) => `${c.type} "${c.name}": ${c.reason}`)
            .join('; ')}`,
          conflicts.map((c) => ({ code: 'import_conflict', message: `${c.type} "${c.name}": ${c.reason}`, path: c.sourceId })),
        );
      }
      const now = new Date();
      await insertImported(trx, planned.bases, planned.groups, p.userId, now);
      // Checked once inserted, so a flow's nodes find the policies of the same bundle.
      const problems = await this.publishProblems(trx, p, bundle, planned);
      if (problems.length > 0) {
        throw new ArbiterError(
          'cannot_publish',
          `the bundle's published versions fail the publish checks: ${problems.length} problem(s): ${problems[0].message}${problems.length > 1 ? '; …' : ''}; nothing was imported`,
          problems,
        );
      }
      await this.deps.events.enqueue(trx, importEvents(p, bundle.orgId, planned, now));
      return planned;
    });
    if (plan.bases.length + plan.groups.length > 0) this.deps.events.committed();
    await this.refreshIndex(plan);
    return reply(false, plan);
  }

  /**
   * The publish checks of every published version the import creates, each
   * reason's path prefixed with the record's place in the bundle (`policies.0.records.1.…`).
   */
  private async publishProblems(trx: Knex.Transaction, p: Principal, bundle: ImportBundle, plan: ImportPlan): Promise<ErrorReason[]> {
    const sections = { policy: ['policies', bundle.policies], flow: ['flows', bundle.flows] } as const;
    const problems: ErrorReason[] = [];
    for (const base of plan.bases) {
      const [section, list] = sections[base.kind];
      const i = list.findIndex((b) => b.baseId === base.originBaseId);
      for (const [j, record] of base.records.entries()) {
        if (record.status !== 'published') continue;
        const at = `${section}.${i}.records.${j}`;
        for (const reason of await this.deps.publishProblems[base.kind](record, trx, p.orgId)) {
          problems.push({ ...reason, message: `${at}: ${reason.message}`, path: reason.path ? `${at}.${reason.path}` : at });
        }
      }
    }
    return problems;
  }

  private async plan(db: Knex, p: Principal, bundle: ImportBundle, governed: boolean): Promise<ImportPlan> {
    const all = [...bundle.policies, ...bundle.flows];
    const refs = new Set<string>();
    const namedBases = new Set<string>(all.map((b) => b.baseId));
    for (const b of bundle.flows)
      for (const r of b.records)
        for (const node of Object.values(r.definition.nodes)) {
          if (node.type !== 'policy') continue;
          if (node.baseId !== undefined) {
            refs.add(node.baseId);
            namedBases.add(node.baseId);
          }
          if (node.policyId !== undefined) refs.add(node.policyId);
        }
    for (const g of bundle.groups) for (const m of g.members) namedBases.add(m.memberId);
    const lookups: ImportLookups = {
      knownBases: await knownBases(db, p.orgId, bundle.orgId, [...namedBases]),
      orgPolicies: await livePolicyIds(db, p.orgId, [...refs]),
      knownGroups: await knownGroups(
        db,
        p.orgId,
        bundle.orgId,
        bundle.groups.map((g) => g.groupId),
      ),
    };
    return planImport(bundle, lookups, { orgId: p.orgId, importer: p.userId, governed }, newId);
  }

  /** Writes the new bases' runnable entries; a failed write is retried in the background by the index writer. */
  private async refreshIndex(plan: ImportPlan): Promise<void> {
    const queue = [...plan.bases];
    const worker = async (): Promise<void> => {
      for (let b = queue.shift(); b !== undefined; b = queue.shift()) {
        await this.deps.index.refresh(b.kind, b.id).catch((err: unknown) => {
          this.deps.logger.warn({ err, baseId: b.id }, 'runnable index not written after import: retried in the background');
        });
      }
    };
    await Promise.all(Array.from({ length: INDEX_CONCURRENCY }, worker));
  }
}

function reply(dryRun: boolean, plan: ImportPlan): ImportReply {
  const count = (a: string) => plan.items.filter((i) => i.action === a).length;
  const items = dryRun ? plan.items.map((i) => (i.action === 'create' ? { ...i, targetId: null } : i)) : plan.items;
  return { dryRun, created: count('create'), unchanged: count('unchanged'), conflicts: count('conflict'), items };
}

function importEvents(p: Principal, sourceOrgId: string, plan: ImportPlan, at: Date): ArbiterEvent[] {
  return [
    ...plan.bases.map((b) =>
      newEvent(
        'imported',
        p,
        { type: b.kind, id: b.currentRecordId, baseId: b.id },
        {
          name: b.records.find((r) => r.id === b.currentRecordId)!.name,
          sourceOrgId,
          sourceBaseId: b.originBaseId,
          records: b.records.length,
        },
        { at },
      ),
    ),
    ...plan.groups.map((g) =>
      newEvent(
        'imported',
        p,
        { type: 'group', id: g.id },
        { name: g.name, sourceOrgId, sourceGroupId: g.originGroupId, members: g.members.length },
        { at },
      ),
    ),
  ];
}
