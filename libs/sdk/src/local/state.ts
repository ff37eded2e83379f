import type {
  RunFlags,
  RunnableBase,
  RunnableFlow,
  RunnableLimits,
  RunnablePolicy,
  RunnableSnapshot,
  VersionTimeline,
} from '@arbiter/contracts';
import type { CompiledPolicy } from '@arbiter/rule-lang';
import {
  compileDataSchema,
  compileRule,
  resolveRun,
  timelinePick,
  type CompiledRule,
  type DataSchema,
  type ResolvedRun,
  type RolloutSplit,
  type RunLimits,
} from '@arbiter/run';

/** Resolved runs with flags a state keeps (past it, the cache starts over). */
const MAX_FLAGGED_RUNS = 16;
import type { Reporter, RunCounter } from './reporter.js';

/** A policy record compiled once: its policy (or the parse error its text gives) and its schema check. */
export interface PolicyEntry {
  readonly record: RunnablePolicy;
  /** The record's ids, copied here for the run's path (one load each). */
  readonly policyId: string;
  readonly baseId: string;
  readonly version: number | null;
  /** The policy compiled and no schema to check: the run's fast path. */
  readonly plain: boolean;
  readonly policy: CompiledPolicy | null;
  /** The policy, or the parse error its text gives, as the run layer answers it. */
  readonly compiled: CompiledRule;
  readonly schema: DataSchema | null;
  /** The schema's JSON, to tell whether a new copy of the record can reuse this entry. */
  readonly schemaJson: string | null;
  readonly counter: RunCounter;
}

/** A flow record as held. */
export interface FlowEntry {
  readonly record: RunnableFlow;
  readonly counter: RunCounter;
}

/** A base in a staged rollout as held: its split and both versions (docs/design/canary.md). */
export interface HeldRollout<E> {
  readonly split: RolloutSplit;
  /** The new version. */
  readonly next: E;
  /** The version the other runs get (and a flow's policy node naming the base). */
  readonly previous: E;
}

/**
 * A base whose versions sit on a timeline (docs/design/timeline.md): the part a runtime may still
 * pick from and the records of its entries, by record id. A run picks by its clock.
 */
export interface Timed<E> {
  readonly timeline: VersionTimeline;
  readonly byRecord: ReadonlyMap<string, E>;
}

/** The entry of `timed` in effect at `at` (epoch ms); a string saying why there is none. */
export function pickTimed<E>(kind: 'policy' | 'flow', baseId: string, timed: Timed<E>, at: number): E | string {
  const picked = timelinePick(timed.timeline, at);
  const first = timed.timeline[0];
  if (picked === undefined) {
    return first === undefined
      ? `${kind} \`${baseId}\` has no version in effect`
      : `${kind} \`${baseId}\` has no version in effect at that instant: its first held, version ${first.version}, takes effect at ${new Date(first.from).toISOString()}`;
  }
  return timed.byRecord.get(picked.recordId) ?? `${kind} \`${baseId}\` version ${picked.version} is not held by this runtime`;
}

/**
 * Since when (epoch ms) a runtime knows the record in effect of a base without a timeline: it was
 * in effect when a snapshot holding it arrived (or, from the cache, when that state was last
 * confirmed). When it took effect before that is not sent, so an as-of run earlier than this
 * instant cannot be answered locally.
 */
export interface HeldSince {
  readonly recordId: string;
  readonly since: number;
}

/**
 * The entry an as-of run at `at` uses of a base without a timeline: `entry`, the record in effect
 * (a rollout's new version: the service picks by instant, not by the split); a string saying why
 * none: a never-published base has no version at any instant, and before `held.since` the runtime
 * does not know which version was in effect.
 */
function pickHeld<E>(
  kind: 'policy' | 'flow',
  baseId: string,
  entry: E,
  version: number | null,
  held: HeldSince | undefined,
  at: number,
): E | string {
  if (version === null) return `${kind} \`${baseId}\` has no version in effect`;
  if (held === undefined || at < held.since) {
    const since = held === undefined ? '' : `, is known in effect from ${new Date(held.since).toISOString()}`;
    return `${kind} \`${baseId}\` has no version held for that instant: its first held, version ${version}${since}`;
  }
  return entry;
}

/**
 * Everything a runtime runs, at one revision. Immutable: a sync builds a new state and swaps it in
 * one assignment, so a run (which reads the state once) sees the old record set or the new one,
 * never a mix.
 */
export class RunnableState {
  /** Both trace modes under {@link limits} without flags, resolved once by the run layer: a run allocates no options. */
  readonly runs: {
    readonly traced: ResolvedRun;
    readonly untraced: ResolvedRun;
  };
  /** Runs with flags, resolved once per trace mode and flags (a few combinations; bounded all the same). */
  private readonly flagged = new Map<string, ResolvedRun>();
  private readonly runLimits: Partial<RunLimits>;

  private constructor(
    readonly revision: number,
    readonly limits: RunnableLimits,
    /** The bases as the service sent them (for the cache file, and the next delta). */
    readonly bases: ReadonlyMap<string, RunnableBase>,
    /** Current policy records by base id (bases on a timeline are in {@link timedPolicies} instead). */
    readonly policies: ReadonlyMap<string, PolicyEntry>,
    /** Current flow records by base id (bases on a timeline are in {@link timedFlows} instead). */
    readonly flows: ReadonlyMap<string, FlowEntry>,
    /** Policy records (current and pinned) by record id. */
    readonly records: ReadonlyMap<string, PolicyEntry>,
    /** Policy versions (current and pinned) by `baseId:version`. */
    readonly versions: ReadonlyMap<string, PolicyEntry>,
    /** Named bases the service does not run (unknown, deleted, another org's). */
    readonly missing: readonly string[],
    /** Policy bases in a staged rollout, by base id (`policies` holds their previous version). */
    readonly rollouts: ReadonlyMap<string, HeldRollout<PolicyEntry>>,
    /** Flow bases in a staged rollout, by base id (`flows` holds their previous version). */
    readonly flowRollouts: ReadonlyMap<string, HeldRollout<FlowEntry>>,
    /** Policy bases on a timeline, by base id. */
    readonly timedPolicies: ReadonlyMap<string, Timed<PolicyEntry>> = new Map(),
    /** Flow bases on a timeline, by base id. */
    readonly timedFlows: ReadonlyMap<string, Timed<FlowEntry>> = new Map(),
    /** Bases without a timeline: since when the record in effect is known to be, by base id. */
    readonly heldSince: ReadonlyMap<string, HeldSince> = new Map(),
  ) {
    this.runLimits = { stepBudget: limits.stepBudget, tracedStepBudget: limits.traceStepBudget, maxTraceBytes: limits.maxTraceBytes };
    this.runs = {
      traced: resolveRun({ trace: true }, this.runLimits),
      untraced: resolveRun({ trace: false }, this.runLimits),
    };
  }

  /** The resolved run of a trace mode and the run's flags (contracts `RunFlags`); at clock `now` (ISO 8601) when given. */
  runOf(trace: boolean, flags?: RunFlags, now?: string): ResolvedRun {
    if (now !== undefined) return resolveRun({ trace, ...(flags !== undefined ? { flags } : {}), now }, this.runLimits);
    if (flags === undefined) return trace ? this.runs.traced : this.runs.untraced;
    const key = `${trace}:${JSON.stringify(flags)}`;
    let run = this.flagged.get(key);
    if (run === undefined) {
      run = resolveRun({ trace, flags }, this.runLimits);
      if (this.flagged.size >= MAX_FLAGGED_RUNS) this.flagged.clear();
      this.flagged.set(key, run);
    }
    return run;
  }

  /** The policy record a run by base id uses at `at` (epoch ms): the current one, or the one in effect on its timeline; a string saying why none. */
  policyAt(baseId: string, at: number): PolicyEntry | string | undefined {
    const timed = this.timedPolicies.get(baseId);
    return timed === undefined ? this.policies.get(baseId) : pickTimed('policy', baseId, timed, at);
  }

  /** The flow record a run by base id uses at `at`, as {@link policyAt}. */
  flowAt(baseId: string, at: number): FlowEntry | string | undefined {
    const timed = this.timedFlows.get(baseId);
    return timed === undefined ? this.flows.get(baseId) : pickTimed('flow', baseId, timed, at);
  }

  /**
   * The policy record an as-of run at `at` (epoch ms) uses, as the service picks it on the base's
   * whole timeline (a base in rollout: by instant, its new version); a string saying why none is
   * held for that instant (docs/design/timeline.md); undefined for a base not held.
   */
  policyAsOf(baseId: string, at: number): PolicyEntry | string | undefined {
    const timed = this.timedPolicies.get(baseId);
    if (timed !== undefined) return pickTimed('policy', baseId, timed, at);
    const entry = this.rollouts.get(baseId)?.next ?? this.policies.get(baseId);
    return entry === undefined ? undefined : pickHeld('policy', baseId, entry, entry.version, this.heldSince.get(baseId), at);
  }

  /** The flow record an as-of run at `at` uses, as {@link policyAsOf}. */
  flowAsOf(baseId: string, at: number): FlowEntry | string | undefined {
    const timed = this.timedFlows.get(baseId);
    if (timed !== undefined) return pickTimed('flow', baseId, timed, at);
    const entry = this.flowRollouts.get(baseId)?.next ?? this.flows.get(baseId);
    return entry === undefined ? undefined : pickHeld('flow', baseId, entry, entry.record.version, this.heldSince.get(baseId), at);
  }

  /**
   * The state a snapshot describes, on top of `previous` when it is a delta; compiled entries are
   * reused when a record is unchanged. `at` (epoch ms): an instant at which the snapshot's records
   * were in effect (when it arrived, or when a cached one was last confirmed).
   */
  static from(snapshot: RunnableSnapshot, previous: RunnableState | null, reporter: Reporter, at: number = Date.now()): RunnableState {
    const bases = new Map<string, RunnableBase>(snapshot.full || previous === null ? [] : previous.bases);
    for (const id of snapshot.removed) bases.delete(id);
    for (const base of snapshot.bases) bases.set(base.baseId, base);
    if (!snapshot.full) collectUnreferenced(bases);

    const reuse = previous?.records ?? new Map<string, PolicyEntry>();
    const policies = new Map<string, PolicyEntry>();
    const flows = new Map<string, FlowEntry>();
    const records = new Map<string, PolicyEntry>();
    const versions = new Map<string, PolicyEntry>();
    const timedPolicies = new Map<string, Timed<PolicyEntry>>();
    const timedFlows = new Map<string, Timed<FlowEntry>>();
    const rollouts = new Map<string, HeldRollout<PolicyEntry>>();
    const flowRollouts = new Map<string, HeldRollout<FlowEntry>>();
    const heldSince = new Map<string, HeldSince>();
    const holdSince = (baseId: string, recordId: string): void => {
      const before = previous?.heldSince.get(baseId);
      heldSince.set(baseId, before !== undefined && before.recordId === recordId ? before : { recordId, since: at });
    };
    const hold = (record: RunnablePolicy): PolicyEntry => {
      const held = records.get(record.policyId);
      if (held !== undefined) return held;
      const entry = policyEntry(record, reuse.get(record.policyId), reporter);
      records.set(record.policyId, entry);
      if (record.version !== null) versions.set(`${record.baseId}:${record.version}`, entry);
      return entry;
    };
    const flowEntry = (record: RunnableFlow): FlowEntry => {
      const old = previous?.flows.get(record.baseId) ?? previous?.timedFlows.get(record.baseId)?.byRecord.get(record.flowId);
      const same = old !== undefined && old.record.flowId === record.flowId && old.record.version === record.version;
      return { record, counter: same ? old.counter : reporter.counterFor('flow', record.flowId, record.baseId, record.version) };
    };
    for (const base of bases.values()) {
      if (base.kind === 'flow') {
        if (base.timeline !== undefined) {
          const byRecord = new Map([base.current, ...(base.scheduled ?? [])].map((r) => [r.flowId, flowEntry(r)]));
          timedFlows.set(base.baseId, { timeline: base.timeline, byRecord });
          continue;
        }
        const holdFlow = (record: RunnableFlow): FlowEntry => {
          const old = [previous?.flows.get(base.baseId), previous?.flowRollouts.get(base.baseId)?.next].find(
            (e) => e !== undefined && e.record.flowId === record.flowId && e.record.version === record.version,
          );
          return {
            record,
            counter: old !== undefined ? old.counter : reporter.counterFor('flow', record.flowId, base.baseId, record.version),
          };
        };
        const current = holdFlow(base.current);
        holdSince(base.baseId, base.current.flowId);
        if (base.rollout === undefined) flows.set(base.baseId, current);
        else {
          const before = holdFlow(base.rollout.previous);
          flows.set(base.baseId, before);
          flowRollouts.set(base.baseId, { split: base.rollout, next: current, previous: before });
        }
        continue;
      }
      if (base.timeline !== undefined) {
        const byRecord = new Map([base.current, ...(base.scheduled ?? [])].map((r) => [r.policyId, hold(r)]));
        timedPolicies.set(base.baseId, { timeline: base.timeline, byRecord });
      } else {
        const current = hold(base.current);
        holdSince(base.baseId, base.current.policyId);
        if (base.rollout === undefined) policies.set(base.baseId, current);
        else {
          const before = hold(base.rollout.previous);
          policies.set(base.baseId, before);
          rollouts.set(base.baseId, { split: base.rollout, next: current, previous: before });
        }
      }
      for (const pinned of base.pinned) hold(pinned);
    }
    const timedFlowEntries = [...timedFlows.values()].flatMap((t) => [...t.byRecord.values()]);
    const counters = new Set<RunCounter>(
      [...records.values(), ...flows.values(), ...timedFlowEntries, ...[...flowRollouts.values()].map((r) => r.next)].map((e) => e.counter),
    );
    reporter.retain(counters);
    return new RunnableState(
      snapshot.revision,
      snapshot.limits,
      bases,
      policies,
      flows,
      records,
      versions,
      snapshot.missing,
      rollouts,
      flowRollouts,
      timedPolicies,
      timedFlows,
      heldSince,
    );
  }

  /** The state as one full snapshot (what a cache file keeps). */
  toSnapshot(): RunnableSnapshot {
    return {
      revision: this.revision,
      full: true,
      bases: [...this.bases.values()],
      removed: [],
      missing: [...this.missing],
      limits: this.limits,
    };
  }
}

/** Compiles a record, or reuses `previous` when it is the same record with the same text and schema. */
function policyEntry(record: RunnablePolicy, previous: PolicyEntry | undefined, reporter: Reporter): PolicyEntry {
  const schemaJson = record.schema === null ? null : JSON.stringify(record.schema);
  if (
    previous !== undefined &&
    previous.record.rule === record.rule &&
    previous.schemaJson === schemaJson &&
    previous.record.version === record.version &&
    previous.record.baseId === record.baseId
  ) {
    return previous.record === record
      ? previous
      : { ...previous, record, policyId: record.policyId, baseId: record.baseId, version: record.version };
  }
  const compiled = compileRule(record.rule);
  const policy = 'policy' in compiled ? compiled.policy : null;
  const schema = record.schema === null ? null : compileDataSchema(record.schema);
  return {
    record,
    policyId: record.policyId,
    baseId: record.baseId,
    version: record.version,
    plain: policy !== null && schema === null,
    policy,
    compiled,
    schema,
    schemaJson,
    counter: reporter.counterFor('policy', record.policyId, record.baseId, record.version),
  };
}

/** Drops the bases that came only because a flow named them, once no held flow names them. */
function collectUnreferenced(bases: Map<string, RunnableBase>): void {
  const named = new Set<string>();
  const records = new Map<string, string>();
  for (const base of bases.values()) {
    if (base.kind === 'policy') {
      for (const r of [base.current, ...base.pinned, ...(base.scheduled ?? []), ...(base.rollout ? [base.rollout.previous] : [])])
        records.set(r.policyId, base.baseId);
    }
  }
  for (const base of bases.values()) {
    if (base.kind !== 'flow') continue;
    for (const node of [base.current, ...(base.scheduled ?? [])].flatMap((r) => Object.values(r.definition.nodes))) {
      if (node.type !== 'policy') continue;
      if (node.baseId !== undefined) named.add(node.baseId);
      if (node.policyId !== undefined) {
        const owner = records.get(node.policyId);
        if (owner !== undefined) named.add(owner);
      }
    }
  }
  for (const [id, base] of bases) if (!base.selected && !named.has(id)) bases.delete(id);
}
