import { createHash } from 'node:crypto';
import {
  ArbiterError,
  executedDetails,
  newEvent,
  type ArbiterEvent,
  type FlowDefinition,
  type Principal,
  type RunCount,
  type RunnableBase,
  type RunnableFlow,
  type RunnableLimits,
  type RunnablePolicy,
  type VersionTimeline,
  type RunnableSelection,
  type RunnableSnapshotPage,
  type RunReportReply,
} from '@arbiter/contracts';
import type { Knex } from 'knex';
import { requireCapability } from './domain/access.js';
import { snapshotRollouts } from './repositories/rollouts.js';
import {
  basesOfRecords,
  changedSince,
  currentRecords,
  enqueueOnce,
  groupExists,
  orgRevision,
  policyRecordsById,
  policyVersions,
  recordsById,
  recordsOfOrg,
  selectedBases,
  type RunnableRecordRow,
} from './repositories/runnable-feed.js';
import { timelineRowsOfBases, versionInstantsOfBase } from './repositories/timeline.js';
import { timelineOf } from './domain/timeline.js';
import { timelinePick } from '@arbiter/run';

/** What the service needs around it. */
export interface RunnableSyncDeps {
  db: Knex;
  /** The evaluation limits a local run must apply (the execution service's settings). */
  limits: RunnableLimits;
  /** The outbox table run reports' `executed` events go to. */
  outboxTable: string;
  /** Wakes the outbox relay after a commit. */
  committed(): void;
}

/** JSON bytes of one snapshot page at most (a base larger than this still goes, alone): well under the bus's 1 MiB. */
const PAGE_BYTES = 512 * 1024;

/** The policies a flow's nodes name: by base (its current record), by base and version, or by exact record id. */
interface FlowRefs {
  bases: Set<string>;
  versions: Array<[string, number]>;
  records: Set<string>;
}

/**
 * Local evaluation's side of the registry: the runnable records of a selection at the
 * org's revision, in pages (whole, or only what changed after a revision), the revision alone, and
 * run reports turned into `executed` events. Runs' visibility rules hold: any member with the
 * `view` right may run any live base of the org by id; a group or `all` selects what the caller
 * sees in lists.
 */
export class RunnableSyncService {
  constructor(private readonly deps: RunnableSyncDeps) {}

  /** The org's current revision. */
  async revision(p: Principal): Promise<number> {
    requireCapability(p, 'view', 'run policies and flows');
    return orgRevision(this.deps.db, p.orgId);
  }

  /**
   * One page of the selection at the org's current revision, bases in id order after `cursor`.
   * With `since`, only the bases whose runnable content changed after it (`full: false`), unless
   * the selected group's membership changed too (then everything, `full: true`); `removed` (first
   * page) lists the bases deleted since.
   */
  async snapshotPage(req: {
    principal: Principal;
    selection: RunnableSelection;
    since?: number;
    cursor?: string;
    limit: number;
  }): Promise<RunnableSnapshotPage> {
    const p = req.principal;
    requireCapability(p, 'view', 'run policies and flows');
    const sel = req.selection;
    if (sel.bases === undefined && sel.group === undefined && sel.all !== true) {
      throw new ArbiterError('validation_failed', 'choose what to load: `bases`, `group` or `all=true`');
    }
    // One snapshot of the database, so the page matches the revision it names.
    return this.deps.db.transaction(
      async (trx) => {
        if (sel.group !== undefined && !(await groupExists(trx, p.orgId, sel.group))) {
          throw new ArbiterError('not_found', `group \`${sel.group}\` not found`);
        }
        const revision = await orgRevision(trx, p.orgId);
        const selected = await selectedBases(trx, { orgId: p.orgId, userId: p.userId, ...sel });
        const flows = await currentRecords(
          trx,
          p.orgId,
          selected.filter((b) => b.kind === 'flow').map((b) => b.id),
        );
        const refsOf = new Map<string, FlowRefs>(flows.map((f) => [f.baseId, flowRefs(f.definition!)]));
        const baseOfRecord = await basesOfRecords(
          trx,
          p.orgId,
          [...refsOf.values()].flatMap((r) => [...r.records]),
        );
        const referenced = (refs: FlowRefs): string[] => [
          ...refs.bases,
          ...refs.versions.map(([baseId]) => baseId),
          ...[...refs.records].flatMap((id) => baseOfRecord.get(id) ?? []),
        ];

        const selectedIds = new Set(selected.map((b) => b.id));
        const needed = new Map<string, boolean>(selected.map((b) => [b.id, true]));
        for (const refs of refsOf.values()) for (const id of referenced(refs)) if (!needed.has(id)) needed.set(id, false);

        let full = req.since === undefined;
        let ids = [...needed.keys()];
        let removed: string[] = [];
        if (req.since !== undefined) {
          const changed = await changedSince(trx, p.orgId, req.since);
          if (sel.group !== undefined && changed.groups.has(sel.group)) full = true;
          else {
            const delta = new Set(ids.filter((id) => changed.bases.has(id)));
            for (const [flowId, refs] of refsOf) if (changed.bases.has(flowId)) for (const id of referenced(refs)) delta.add(id);
            ids = [...delta];
            removed = [...changed.bases].filter(([, deleted]) => deleted).map(([id]) => id);
          }
        }
        ids.sort();
        const after = req.cursor;
        const candidates = (after === undefined ? ids : ids.filter((id) => id > after)).slice(0, req.limit);

        const bases = await this.basesOf(trx, p.orgId, candidates, needed, [...refsOf.values()], baseOfRecord);
        const page: RunnableBase[] = [];
        let bytes = 0;
        for (const base of bases) {
          bytes += JSON.stringify(base).length;
          if (page.length > 0 && bytes > PAGE_BYTES) break;
          page.push(base);
        }
        const last = page.at(-1)?.baseId;
        const more = last !== undefined && ids.some((id) => id > last);
        return {
          revision,
          full,
          bases: page,
          removed: after === undefined ? removed.sort() : [],
          missing: after === undefined ? (sel.bases ?? []).filter((id) => !selectedIds.has(id)).sort() : [],
          limits: this.deps.limits,
          nextCursor: more ? last : null,
        };
      },
      { isolationLevel: 'repeatable read', readOnly: true },
    );
  }

  /**
   * Turns a runtime's run counts into `executed` events like the execution service's (one per
   * record of the report, `via: ["sdk"]`), attributed to the caller. Records not found in the
   * caller's org are left out and named. Each event is dated when the report is received, the
   * runtime's window in its details. Event ids derive from the report id, the record and the window:
   * a report sent again adds nothing (the outbox keeps the ids it sent for a day).
   */
  async report(req: { principal: Principal; reportId: string; runs: RunCount[] }): Promise<RunReportReply> {
    const p = req.principal;
    requireCapability(p, 'view', 'run policies and flows');
    const known = await recordsOfOrg(
      this.deps.db,
      p.orgId,
      req.runs.map((r) => r.recordId),
    );
    const ignored: string[] = [];
    const events: ArbiterEvent[] = [];
    const now = Date.now();
    for (const run of req.runs) {
      const record = known.get(run.recordId);
      if (record === undefined || record.baseId !== run.baseId || record.kind !== run.kind) {
        ignored.push(run.recordId);
        continue;
      }
      events.push(executedEvent(p, req.reportId, run, now));
    }
    if (events.length > 0) {
      await this.deps.db.transaction((trx) => enqueueOnce(trx, this.deps.outboxTable, events));
      this.deps.committed();
    }
    return { accepted: events.length, ignored };
  }

  /** The {@link RunnableBase} of each live base of `ids`, with the records the flows pin for policies. */
  private async basesOf(
    trx: Knex.Transaction,
    orgId: string,
    ids: string[],
    needed: Map<string, boolean>,
    refs: FlowRefs[],
    baseOfRecord: Map<string, string>,
  ): Promise<RunnableBase[]> {
    const current = await this.inEffect(trx, orgId, await currentRecords(trx, orgId, ids));
    const inPage = new Set(ids);
    const pinnedIds = refs.flatMap((r) => [...r.records]).filter((id) => inPage.has(baseOfRecord.get(id) ?? ''));
    const pinnedVersions = refs.flatMap((r) => r.versions).filter(([baseId]) => inPage.has(baseId));
    const pinned = new Map<string, Map<string, RunnablePolicy>>();
    for (const r of [
      ...(await policyRecordsById(trx, orgId, pinnedIds)),
      ...(await policyVersions(trx, orgId, dedupePairs(pinnedVersions))),
    ]) {
      const forBase = pinned.get(r.baseId) ?? new Map<string, RunnablePolicy>();
      forBase.set(r.id, toPolicy(r));
      pinned.set(r.baseId, forBase);
    }
    const rollouts = await snapshotRollouts(trx, orgId, ids);
    return current.map(({ record: r, timeline, scheduled }): RunnableBase => {
      const selected = needed.get(r.baseId) === true;
      const timed = timeline === undefined ? {} : { timeline };
      const rollout = rollouts.get(r.baseId);
      const split = rollout === undefined ? undefined : { percent: rollout.percent, ...(rollout.by !== null ? { by: rollout.by } : {}) };
      if (r.kind === 'flow') {
        return {
          kind: 'flow',
          baseId: r.baseId,
          selected,
          current: toFlow(r),
          ...timed,
          ...(scheduled.length > 0 ? { scheduled: scheduled.map(toFlow) } : {}),
          ...(rollout !== undefined ? { rollout: { ...split!, previous: toFlow(rollout.previous) } } : {}),
        };
      }
      const pins = [...(pinned.get(r.baseId)?.values() ?? [])].sort((a, b) => (a.policyId < b.policyId ? -1 : 1));
      return {
        kind: 'policy',
        baseId: r.baseId,
        selected,
        current: toPolicy(r),
        pinned: pins,
        ...timed,
        ...(scheduled.length > 0 ? { scheduled: scheduled.map(toPolicy) } : {}),
        ...(rollout !== undefined ? { rollout: { ...split!, previous: toPolicy(rollout.previous) } } : {}),
      };
    });
  }

  /**
   * For bases whose versions sit on a timeline (docs/design/timeline.md): the record in effect now
   * instead of the latest version, the part of the timeline a runtime may still pick from (the
   * entry in effect and those ahead of it) and the records of the entries ahead. Other bases as given.
   */
  private async inEffect(
    trx: Knex.Transaction,
    orgId: string,
    current: RunnableRecordRow[],
  ): Promise<{ record: RunnableRecordRow; timeline?: VersionTimeline; scheduled: RunnableRecordRow[] }[]> {
    const rows = await timelineRowsOfBases(
      trx,
      current.map((r) => r.baseId),
    );
    const now = Date.now();
    const plans = new Map<string, VersionTimeline>();
    for (const [baseId, baseRows] of rows) {
      const timeline = timelineOf(await versionInstantsOfBase(trx, baseId), baseRows);
      const effective = timelinePick(timeline, now);
      plans.set(
        baseId,
        timeline.filter((e) => e.from > now || e === effective),
      );
    }
    const wanted = [...plans.values()].flatMap((t) => t.map((e) => e.recordId));
    const byId = new Map((await recordsById(trx, orgId, wanted)).map((r) => [r.id, r]));
    return current.map((record) => {
      const timeline = plans.get(record.baseId);
      if (timeline === undefined) return { record, scheduled: [] };
      const effective = timelinePick(timeline, now);
      const held = effective === undefined ? record : (byId.get(effective.recordId) ?? record);
      const scheduled = timeline.filter((e) => e !== effective).flatMap((e) => byId.get(e.recordId) ?? []);
      return { record: held, timeline, scheduled };
    });
  }
}

function toFlow(r: RunnableRecordRow): RunnableFlow {
  return { flowId: r.id, baseId: r.baseId, status: r.status, version: r.version, definition: r.definition! };
}

function toPolicy(r: RunnableRecordRow): RunnablePolicy {
  return { policyId: r.id, baseId: r.baseId, status: r.status, version: r.version, rule: r.rule ?? '', schema: r.schema };
}

function dedupePairs(pairs: Array<[string, number]>): Array<[string, number]> {
  const seen = new Map<string, [string, number]>();
  for (const p of pairs) seen.set(`${p[0]}:${p[1]}`, p);
  return [...seen.values()];
}

/** The policies the nodes of a definition name. */
export function flowRefs(def: FlowDefinition): FlowRefs {
  const refs: FlowRefs = { bases: new Set(), versions: [], records: new Set() };
  for (const node of Object.values(def.nodes)) {
    if (node.type !== 'policy') continue;
    if (node.policyId !== undefined) refs.records.add(node.policyId);
    else if (node.baseId !== undefined && node.version !== undefined) refs.versions.push([node.baseId, node.version]);
    else if (node.baseId !== undefined) refs.bases.add(node.baseId);
  }
  return refs;
}

/**
 * The id of the event counting `recordId`'s runs over one window of report `reportId`: a UUID v7
 * whose time is the window's start (0 before 1970) and whose other bits come from a hash of the
 * report, the record and the window, so the same report always makes the same ids (the outbox,
 * JetStream and the audit store each drop a repeat) and two windows never share one.
 */
export function reportEventId(reportId: string, run: { recordId: string; from: string; to: string }): string {
  const fromMs = Date.parse(run.from);
  const h = createHash('sha256')
    .update(`${reportId}:${run.recordId}:${fromMs}:${Date.parse(run.to)}`)
    .digest();
  const b = Buffer.alloc(16);
  b.writeUIntBE(Math.max(0, Math.min(fromMs, 2 ** 48 - 1)), 0, 6);
  b[6] = 0x70 | (h[0] & 0x0f);
  b[7] = h[1];
  b[8] = 0x80 | (h[2] & 0x3f);
  h.copy(b, 9, 3, 10);
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function executedEvent(p: Principal, reportId: string, run: RunCount, now: number): ArbiterEvent {
  const details = executedDetails({ ...run, via: ['sdk'] });
  // Dated when the report is received, never by the runtime's window (kept in the details): a
  // date a caller sends must not choose where, or in which month, the trail stores an event.
  return newEvent('executed', p, { type: run.kind, id: run.recordId, baseId: run.baseId }, details, {
    at: new Date(now),
    eventId: reportEventId(reportId, run),
  });
}
