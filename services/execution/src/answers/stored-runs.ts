import {
  ArbiterError,
  isArbiterError,
  tracesOf,
  type FlowDefinition,
  type FlowPolicyNode,
  type FlowRunResponse,
  type FlowTableNode,
  type LiveFlowRecordEntry,
  type LivePolicyRecordEntry,
  type Principal,
  type RunFlags,
  type RunnableRollout,
  type RunSpec,
  type ShadowIndexEntry,
} from '@arbiter/contracts';
import { runFlow, type FlowStepBudget, type PolicyRunResult, type ResolvedPolicy, type TableRun, type TableRunner } from '@arbiter/flow';
import pLimit from 'p-limit';
import type { DecisionRecorder } from '../recording/recorder.js';
import type { WorkerPool, EvalOutcome, ItemAnswer, RunItems } from '../workers/worker-pool.js';
import type { ExecutedEvents } from '../recording/executed-events.js';
import type { MaskedReads } from '../recording/masked-reads.js';
import type { ExecMetrics } from '../metrics.js';
import type { RunnableResolver, RunTarget } from './runnable-resolver.js';
import { flowAnswer, policyAnswer, type ShadowItem, type ShadowRuns } from './shadow-runs.js';
import { missingPolicyNode } from '@arbiter/run';
import type { RolloutGuard } from './rollout-guard.js';
import { tableSource } from '@arbiter/run/caches';
import { ITEM_BUDGET, ITEM_ERROR, ITEM_TRUE } from '../workers/tasks.js';
import { choosesNew } from '../workers/rollout-choice.js';

/**
 * Items of one flow batch group run at once. A flow item has one node job in progress at a time, so
 * a group takes at most this many of its caller's `EXEC_CALLER_MAX` jobs (64 by default), and the
 * ≤ 4 messages a 1,000-item batch call is split into stay under it together.
 */
const FLOW_ITEMS_IN_FLIGHT = 8;

/** How a run named its resource: a base id (current runnable record) or an exact record id. */
export type RunBy = 'base' | 'record';

/**
 * One stored run request: the record named (`id`, `by` a base or a record id), the run's options
 * (a replay runs at `now`, low priority, neither counted nor recorded) and its items.
 */
export type StoredRunRequest = Pick<RunSpec, 'principal' | 'trace' | 'traceBytes' | 'flags' | 'replay' | 'now' | 'nows' | 'asOf'> &
  RunItems & { id: string; by: RunBy };

/**
 * The target of a stored run: an exact record, or a base picked at the run's clock
 * (docs/design/timeline.md): `asOf`, else `now`, else the current time. A run that names its
 * instant needs the base's whole timeline (`asOf: true` on the target).
 */
function targetOf(req: StoredRunRequest): RunTarget {
  if (req.by === 'record') return { recordId: req.id };
  const named = req.asOf ?? (req.replay === true ? undefined : req.now);
  if (named === undefined) return { baseId: req.id };
  const at = Date.parse(named);
  if (Number.isNaN(at)) throw new ArbiterError('bad_request', `\`asOf\` / \`now\` must be an ISO instant: \`${named}\``);
  return { baseId: req.id, at, asOf: true };
}

/** The evaluation clock of a stored run that is not a replay: `now`, else `asOf`. */
function clockOf(req: StoredRunRequest): { now?: string } {
  if (req.replay === true) return {};
  const now = req.now ?? req.asOf;
  return now === undefined ? {} : { now };
}

/** One answer: the raw JSON body its single request answers, or its error. */
export type RunAnswer = Uint8Array | ArbiterError;

/** Dependencies of {@link StoredRuns}. */
export interface StoredRunsDeps {
  resolver: RunnableResolver;
  pool: WorkerPool;
  events: ExecutedEvents;
  metrics: ExecMetrics;
  /** Decision records of stored runs; none when recording is off. */
  decisions?: DecisionRecorder;
  /** Counts the outcomes of guarded rollouts (docs/design/canary.md); none: guards never trip from this replica. */
  guard?: RolloutGuard;
  /** Shadow runs of bases with a candidate (docs/design/shadow-runs.md); none: no shadow runs. */
  shadows?: ShadowRuns;
}

const encoder = new TextEncoder();

/**
 * Item bytes a rollout by a data path parses on the main thread to choose each item's version
 * (well under a millisecond); a larger request is parsed in a worker, at the caller's place in the queue.
 */
export const MAIN_THREAD_CHOICE_BYTES = 8 * 1024;

function bytesOf(items: readonly Uint8Array[]): number {
  let bytes = 0;
  for (const item of items) bytes += item.byteLength;
  return bytes;
}

/**
 * Runs stored policies and flows (docs/api.md#evaluate-rules): resolves the record from the runnable index once per
 * request (however many items it carries), runs the policy in the pool (compiled policy looked up
 * by hash, data checked against the schema, answers written as raw JSON in the worker) and counts
 * each run for the `executed` events. Flow policy nodes resolve the same way, once per node per
 * request.
 */
export class StoredRuns {
  constructor(private readonly deps: StoredRunsDeps) {}

  /**
   * Runs a policy by base id or exact record id on each item; throws not_found for unknown, deleted
   * or other-org ids. A base in a rollout runs each item on the version its data chooses.
   */
  async runPolicy(req: StoredRunRequest): Promise<RunAnswer[]> {
    const target = targetOf(req);
    if ('baseId' in target) {
      const found = await this.deps.resolver.resolveBase('policy', req.principal, target);
      if ('rollout' in found) {
        const rollout = found.rollout;
        return this.byRollout(req, rollout, async (sub, next) => {
          const entry = await this.deps.resolver.resolve('policy', req.principal, {
            recordId: next ? rollout.recordId : rollout.previousRecordId,
          });
          return this.runPolicyEntry(sub, entry, (error) => this.deps.guard?.note('policy', req.id, rollout, req.principal, next, error));
        });
      }
      return this.runPolicyEntry(req, found.entry, undefined, found.shadow);
    }
    return this.runPolicyEntry(req, await this.deps.resolver.resolve('policy', req.principal, target));
  }

  /**
   * Splits a request's items by the version a rollout gives each (`@arbiter/run`'s choice on the
   * item's data, parsed only when the rollout picks by a data path: {@link choices}) and runs each
   * part with `run`, answers back in the items' order.
   */
  private async byRollout(
    req: StoredRunRequest,
    rollout: RunnableRollout,
    run: (sub: StoredRunRequest, next: boolean) => Promise<RunAnswer[]>,
  ): Promise<RunAnswer[]> {
    const parts: [number[], number[]] = [[], []];
    (await this.choices(req, rollout)).forEach((next, i) => parts[next ? 0 : 1].push(i));
    const answers = new Array<RunAnswer>(req.items.length);
    await Promise.all(
      parts.map(async (indexes, p) => {
        if (indexes.length === 0) return;
        const sub: StoredRunRequest = {
          ...req,
          items: indexes.map((i) => req.items[i]),
          ...(req.nows !== undefined ? { nows: indexes.map((i) => req.nows![i]) } : {}),
        };
        const out = await run(sub, p === 0);
        out.forEach((answer, j) => (answers[indexes[j]] = answer));
      }),
    );
    return answers;
  }

  /**
   * Whether each item of `req` gets `rollout`'s new version: here when nothing is parsed (no `by`)
   * or little is ({@link MAIN_THREAD_CHOICE_BYTES}), else in a worker as the caller's work.
   */
  private async choices(req: StoredRunRequest, rollout: RunnableRollout): Promise<boolean[]> {
    if (rollout.by === undefined || bytesOf(req.items) <= MAIN_THREAD_CHOICE_BYTES) {
      return req.items.map((item) => choosesNew(rollout, item));
    }
    return this.deps.pool.rolloutChoices(req.principal, rollout, req.items);
  }

  /**
   * Runs one policy record on each item of `req`; `noted` hears whether each answer had an error (a
   * rollout's guard); `shadow`, the base's shadow candidate, runs on a sample after the answers.
   */
  private async runPolicyEntry(
    req: StoredRunRequest,
    entry: LivePolicyRecordEntry,
    noted?: (error: boolean) => void,
    shadow?: ShadowIndexEntry,
  ): Promise<RunAnswer[]> {
    // A shadowed run is pinned to one clock (its own, else the current time), which its candidate runs at too.
    const shadowing = this.shadowOf(req, shadow);
    const clock = clockOf(req);
    const now = shadowing === undefined ? undefined : (clock.now ?? new Date().toISOString());
    const outcome = await this.deps.pool.runJob({
      principal: req.principal,
      source: sourceOf(entry),
      trace: req.trace,
      ...(req.traceBytes !== undefined ? { traceBytes: req.traceBytes } : {}),
      ...(req.flags !== undefined ? { flags: req.flags } : {}),
      reply: { kind: 'json', extra: { policyId: entry.recordId, baseId: entry.baseId, version: entry.version } },
      items: req.items,
      ...(req.deadline !== undefined ? { deadline: req.deadline } : {}),
      ...(req.replyBudget !== undefined ? { replyBudget: req.replyBudget } : {}),
      ...(req.replay === true
        ? { replay: true, ...(req.now !== undefined ? { now: req.now } : {}), ...(req.nows !== undefined ? { nows: req.nows } : {}) }
        : now !== undefined
          ? { now }
          : clock),
    });
    this.count(outcome);
    if (req.replay === true) return outcome.answers.map((answer) => (answer instanceof ArbiterError ? answer : answer.json!));
    const resource = { type: 'policy' as const, id: entry.recordId, baseId: entry.baseId };
    // Answers finished after the caller stopped waiting reach nobody: they are not decisions.
    const inTime = this.answeredInTime(req.deadline);
    const decisions = inTime ? this.deps.decisions : undefined;
    const sampled: ShadowItem[] = [];
    const answers = outcome.answers.map((answer, i) => {
      if (answer instanceof ArbiterError) return answer;
      const error = (answer.flags & ITEM_ERROR) !== 0;
      noted?.(error);
      this.deps.events.record(req.principal, {
        resource,
        version: entry.version,
        via: req.by,
        result: (answer.flags & ITEM_TRUE) !== 0,
        error,
      });
      // The sampling decision first: only a recorded run's bytes are ever parsed here.
      if (decisions?.admit(entry.orgId, entry.baseId, error))
        decisions.policy(req.principal, ranOf('policy', entry), req.items[i], answer.json!, answer.ms);
      if (shadowing !== undefined && inTime && this.deps.shadows!.sampled(shadowing))
        sampled.push({ item: req.items[i], live: policyAnswer(answer.json!) });
      return answer.json!;
    });
    if (shadowing !== undefined) this.deps.shadows!.policy(req.principal, entry, shadowing, sampled, now!);
    return answers;
  }

  /** The shadow a run by base id takes part in: running, and the run neither a replay nor a pinned version. */
  private shadowOf(req: StoredRunRequest, shadow: ShadowIndexEntry | undefined): ShadowIndexEntry | undefined {
    if (this.deps.shadows === undefined || req.replay === true || req.by !== 'base') return undefined;
    return this.deps.shadows.running(shadow, Date.now()) ? shadow : undefined;
  }

  /**
   * Runs a flow by base id or exact record id on each item; its policy nodes resolve like
   * {@link runPolicy}. A replay runs at `now`, its nodes as low-priority work, neither counted nor
   * recorded; an answer whose run read a masked value (in a policy node or a table node) carries
   * `"maskedRead": true`.
   */
  async runFlow(req: StoredRunRequest): Promise<RunAnswer[]> {
    const target = targetOf(req);
    if ('baseId' in target) {
      const found = await this.deps.resolver.resolveBase('flow', req.principal, target);
      if ('rollout' in found) {
        const rollout = found.rollout;
        return this.byRollout(req, rollout, async (sub, next) => {
          const entry = await this.deps.resolver.resolve('flow', req.principal, {
            recordId: next ? rollout.recordId : rollout.previousRecordId,
          });
          return this.runFlowEntry(sub, entry, (error) => this.deps.guard?.note('flow', req.id, rollout, req.principal, next, error));
        });
      }
      return this.runFlowEntry(req, found.entry, undefined, found.shadow);
    }
    return this.runFlowEntry(req, await this.deps.resolver.resolve('flow', req.principal, target));
  }

  /** Runs one flow record on each item of `req`; `noted` and `shadow` as for {@link runPolicyEntry}. */
  private async runFlowEntry(
    req: StoredRunRequest,
    entry: LiveFlowRecordEntry,
    noted?: (error: boolean) => void,
    shadow?: ShadowIndexEntry,
  ): Promise<RunAnswer[]> {
    const target = targetOf(req);
    const shadowing = this.shadowOf(req, shadow);
    const clock = clockOf(req);
    const now = shadowing === undefined ? undefined : (clock.now ?? new Date().toISOString());
    const mode: NodeMode = { ...modeOf(req), ...(now !== undefined ? { now } : clock), ...nodeClockOf(target) };
    const sampled: ShadowItem[] = [];
    const nodes = new Map<string, Promise<ResolvedNode>>();
    const resource = { type: 'flow' as const, id: entry.recordId, baseId: entry.baseId };
    const ran = { flowId: entry.recordId, baseId: entry.baseId, version: entry.version };
    // Each item's node runs are jobs of the caller's (one at a time per item): a few items at a
    // time keep a batch well under the caller's job limit, however many items it has.
    const inFlight = pLimit(FLOW_ITEMS_IN_FLIGHT);
    const answers = await Promise.all(
      req.items.map((item, i) =>
        inFlight(async (): Promise<RunAnswer> => {
          let response: FlowRunResponse;
          const started = performance.now();
          const replay: FlowReplay | undefined = req.replay === true ? { now: req.nows?.[i] ?? req.now, seen: { read: false } } : undefined;
          try {
            response = await this.flow(entry.definition, req.principal, item, mode, req.deadline, nodes, replay);
          } catch (err) {
            return isArbiterError(err) ? err : new ArbiterError('internal', 'evaluation failed: flow', undefined, { cause: err });
          }
          if (replay !== undefined) {
            return encoder.encode(JSON.stringify({ ...response, ...ran, ...(replay.seen.read ? { maskedRead: true } : {}) }));
          }
          noted?.(response.error !== undefined);
          this.deps.events.record(req.principal, {
            resource,
            version: entry.version,
            via: req.by,
            result: response.result,
            error: response.error !== undefined,
          });
          const inTime = this.answeredInTime(req.deadline);
          if (inTime && this.deps.decisions?.admit(entry.orgId, entry.baseId, response.error !== undefined)) {
            this.deps.decisions.flow(req.principal, ranOf('flow', entry), item, response, performance.now() - started);
          }
          if (shadowing !== undefined && inTime && this.deps.shadows!.sampled(shadowing))
            sampled.push({ item, live: flowAnswer(response) });
          return encoder.encode(JSON.stringify({ ...response, ...ran }));
        }),
      ),
    );
    if (shadowing !== undefined) {
      // The candidate's nodes run as low-priority work at the live runs' clock, untraced.
      const candidateMode: NodeMode = { trace: false, now: now!, low: true, ...nodeClockOf(target) };
      const candidateNodes = new Map<string, Promise<ResolvedNode>>();
      this.deps.shadows!.flow(req.principal, entry, shadowing, sampled, (candidate, item, deadline) =>
        this.flow(candidate.definition, req.principal, item, candidateMode, deadline, candidateNodes),
      );
    }
    return answers;
  }

  /** Whether it is still before `deadline` (the pool's clock): an answer sent now may still reach its caller. */
  private answeredInTime(deadline: number | undefined): boolean {
    return deadline === undefined || this.deps.pool.clock() <= deadline;
  }

  /**
   * Runs an ad hoc definition (`POST /flow/test`): `validation_failed` with every structural problem.
   * The definition is checked in a worker as the caller's work (compiling a big table there, not
   * on the thread that serves everyone). No event: nothing stored ran as a flow.
   */
  async testFlow(req: {
    principal: Principal;
    definition: FlowDefinition;
    data: unknown;
    trace: boolean;
    flags?: RunFlags | undefined;
  }): Promise<FlowRunResponse> {
    const problems = await this.deps.pool.validateFlow(req.principal, req.definition);
    if (problems.length > 0) {
      throw new ArbiterError('validation_failed', `invalid flow definition: ${problems.map((p) => p.message).join('; ')}`, problems);
    }
    return this.flow(req.definition, req.principal, encoder.encode(JSON.stringify(req.data)), modeOf(req), undefined, new Map());
  }

  /**
   * Runs a flow on one item; its policy and table nodes share one step budget (LANGUAGE.md §8.1).
   * Both run in the workers, on the item's bytes: this thread walks the graph and never parses the
   * data or evaluates a cell. A worker compiles a table once (cached by its source's hash). A
   * replay's nodes run as low-priority work at its `now`, each noting whether it read a masked value.
   */
  private flow(
    definition: FlowDefinition,
    principal: Principal,
    item: Uint8Array,
    mode: NodeMode,
    deadline: number | undefined,
    nodes: Map<string, Promise<ResolvedNode>>,
    replay?: FlowReplay,
  ): Promise<FlowRunResponse> {
    const trace = mode.trace;
    const resolve = (node: FlowPolicyNode, nodeId: string): Promise<ResolvedPolicy> => {
      let resolved = nodes.get(nodeId);
      if (resolved === undefined) {
        resolved = this.resolveNode(node, principal, mode);
        nodes.set(nodeId, resolved);
      }
      return resolved.then((r) => r.bind(item, deadline, replay));
    };
    const runTable: TableRunner = (nodeId, node, budget) => this.runTable(principal, nodeId, node, item, mode, budget, deadline, replay);
    return runFlow(definition, {}, resolve, this.deps.pool.budgetLimit(trace), { trace, runTable });
  }

  /** Runs table node `nodeId` on the item in a worker within what is left of `budget` (advancing its `used`). */
  private async runTable(
    principal: Principal,
    nodeId: string,
    node: FlowTableNode,
    item: Uint8Array,
    mode: NodeMode,
    budget: FlowStepBudget,
    deadline: number | undefined,
    replay: FlowReplay | undefined,
  ): Promise<TableRun> {
    return this.runOnItem<TableRun>(principal, tableSource(nodeId, node), item, mode, budget, deadline, replay);
  }

  /**
   * The policy a node runs. A deleted, unknown or other-org policy is not thrown: the node answers
   * an error result (`policy_not_found`), so the flow stops there with `path` and `nodes` so far.
   */
  private async resolveNode(node: FlowPolicyNode, principal: Principal, mode: NodeMode): Promise<ResolvedNode> {
    try {
      const entry = await this.deps.resolver.resolve(
        'policy',
        principal,
        node.policyId !== undefined
          ? { recordId: node.policyId }
          : node.version !== undefined
            ? { baseId: node.baseId!, version: node.version }
            : { baseId: node.baseId!, ...(mode.at !== undefined ? { at: mode.at, asOf: true } : {}) },
      );
      return {
        bind: (item, deadline, replay) => ({
          policyId: entry.recordId,
          version: entry.version,
          run: (_data, budget) => this.runNode(principal, entry, item, mode, budget, deadline, replay),
        }),
      };
    } catch (err) {
      if (!isArbiterError(err, 'not_found')) throw err;
      const missing = missingPolicyNode(node.policyId ?? node.baseId!, node.version ?? null, err.message, { trace: mode.trace });
      return { bind: () => missing };
    }
  }

  /** Runs one policy node on the item within what is left of `budget` (advancing its `used`). */
  private async runNode(
    principal: Principal,
    entry: LivePolicyRecordEntry,
    item: Uint8Array,
    mode: NodeMode,
    budget: FlowStepBudget,
    deadline: number | undefined,
    replay: FlowReplay | undefined,
  ): Promise<PolicyRunResult> {
    return this.runOnItem<PolicyRunResult>(principal, sourceOf(entry), item, mode, budget, deadline, replay);
  }

  /** Runs one flow node (`source`: a policy or a table) on the item in a worker within what is left of `budget` (advancing its `used`). */
  private async runOnItem<T extends PolicyRunResult | TableRun>(
    principal: Principal,
    source: Parameters<WorkerPool['runJob']>[0]['source'],
    item: Uint8Array,
    mode: NodeMode,
    budget: FlowStepBudget,
    deadline: number | undefined,
    replay: FlowReplay | undefined,
  ): Promise<T> {
    const outcome = await this.deps.pool.runJob({
      principal,
      source,
      trace: mode.trace,
      ...(mode.flags !== undefined ? { flags: mode.flags } : {}),
      reply: { kind: 'value' },
      items: [item],
      budgetUsed: budget.used,
      ...(deadline !== undefined ? { deadline } : {}),
      ...(replay === undefined && mode.now !== undefined ? { now: mode.now } : {}),
      ...(mode.low === true ? { lowPriority: true } : {}),
      ...replayOf(replay),
    });
    this.count(outcome);
    const answer = outcome.answers[0];
    if (answer instanceof ArbiterError) throw answer;
    budget.used = answer.steps;
    return noteMaskedRead(answer.value as T, replay);
  }

  /** Counts cache use, time-outs and budget stops of an outcome in the metrics. */
  private count(outcome: EvalOutcome): void {
    countOutcome(this.deps.metrics, outcome);
  }
}

/**
 * How a flow's nodes run: with a trace or not, and the run's flags; at the run's clock `now` and,
 * for a run that named its instant, nodes that follow a base pick its version at `at` (epoch ms);
 * as low-priority work for a shadow run.
 */
interface NodeMode {
  trace: boolean;
  flags?: RunFlags;
  now?: string;
  at?: number;
  low?: boolean;
}

/** The instant a flow's base-following nodes pick their version at: the flow's own, when the run named one. */
function nodeClockOf(target: RunTarget): { at?: number } {
  return 'baseId' in target && target.at !== undefined ? { at: target.at } : {};
}

function modeOf(req: { trace?: boolean | undefined; flags?: RunFlags | undefined }): NodeMode {
  return { trace: tracesOf(req), ...(req.flags !== undefined ? { flags: req.flags } : {}) };
}

/** A node's resolved policy, bound to each item of a request when it runs. */
interface ResolvedNode {
  bind(item: Uint8Array, deadline: number | undefined, replay?: FlowReplay): ResolvedPolicy;
}

/** One flow run replaying a recorded decision: its clock, and whether any of its nodes read a masked value. */
interface FlowReplay {
  now: string | undefined;
  seen: MaskedReads;
}

/** The pool's replay fields of a node's evaluation: low priority, at the replay's `now`. */
function replayOf(replay: FlowReplay | undefined): { replay?: true; now?: string } {
  if (replay === undefined) return {};
  return { replay: true, ...(replay.now !== undefined ? { now: replay.now } : {}) };
}

/** A node's answer without the worker's `maskedRead` mark, which goes to the replay's `seen`. */
function noteMaskedRead<T extends object>(value: T, replay: FlowReplay | undefined): T {
  const { maskedRead, ...rest } = value as T & { maskedRead?: true };
  if (maskedRead === true && replay !== undefined) replay.seen.read = true;
  return rest as T;
}

/** What a decision record names of the record that ran. */
function ranOf(kind: 'policy' | 'flow', entry: LivePolicyRecordEntry | LiveFlowRecordEntry) {
  return { kind, orgId: entry.orgId, baseId: entry.baseId, recordId: entry.recordId, version: entry.version };
}

/** The worker's source for a stored policy record. */
function sourceOf(entry: LivePolicyRecordEntry) {
  return {
    kind: 'stored' as const,
    hash: entry.ruleHash,
    rule: entry.rule,
    schema: entry.schema !== null && entry.schemaHash !== null ? { hash: entry.schemaHash, schema: entry.schema } : null,
  };
}

/** Counts an outcome in the metrics: compiles and cache hits, budget stops, time-outs, data too deep. */
export function countOutcome(metrics: ExecMetrics, outcome: EvalOutcome): void {
  let answered = 0;
  for (const answer of outcome.answers) {
    if (answer instanceof ArbiterError) {
      if (answer.code === 'timeout') metrics.timeouts.inc();
      else if (answer.code === 'validation_failed') metrics.refused.inc({ reason: 'data_depth' });
      continue;
    }
    answered++;
    if (isBudgetStop(answer)) metrics.budgetExceeded.inc();
  }
  if (outcome.compiles > 0) metrics.compiles.inc(outcome.compiles);
  if (answered > outcome.compiles) metrics.cacheHits.inc(answered - outcome.compiles);
}

function isBudgetStop(answer: ItemAnswer): boolean {
  return (answer.flags & ITEM_BUDGET) !== 0;
}
