import {
  ArbiterError,
  DecisionSubject,
  hasCapability,
  impactReportFor,
  type DecisionHistoryEntry,
  type DecisionHistoryHeader,
  type DecisionNodeReasons,
  type DecisionRecord,
  type ImpactExample,
  type ImpactReport,
  type ImpactRequest,
  type Principal,
  type Reasons,
  type RunnableKind,
} from '@arbiter/contracts';
import type { Bus, EvalClient } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { v7 } from 'uuid';
import { boundReport } from './impact-report.js';
import { Pacer } from './pacer.js';
import type { RegistryPort } from './registry-port.js';
import { saveImpactReport } from './repositories/impact-reports.js';

/**
 * Decisions read per history page: a page is read in one go (a query, a frame built) between paced
 * replays, so a small one keeps that burst of work short for live runs meanwhile.
 */
const PAGE = 250;
/** Changed decisions a report shows. */
const MAX_EXAMPLES = 20;
/** Longest `transitions` label of a table result (its JSON text); longer ones are cut. */
const MAX_LABEL = 200;
/**
 * Evaluation jobs an analysis keeps in flight at once. Each replay call is one job of the caller in
 * the execution service's fair queue (a flow: one per item and policy node, one node at a time),
 * counted against the caller's and its person's job limits (`EXEC_CALLER_MAX`, 64 by default):
 * well under them, so neither the replays nor the caller's own live runs are refused.
 */
const JOBS_IN_FLIGHT = 16;
/** Flow decisions replayed per call: their items run side by side, a job each. */
const FLOW_ITEMS_PER_CALL = 4;
/**
 * Policy decisions replayed per call (one job): small enough that a call is a short piece of work
 * for each process on the way, so the pace ({@link Pacer}) spreads the analysis evenly in time.
 */
const POLICY_ITEMS_PER_CALL = 50;

/** What {@link ImpactService} needs. */
export interface ImpactDeps {
  db: Knex;
  bus: Pick<Bus, 'requestFrame'>;
  evals: EvalClient;
  registry: RegistryPort;
  timeoutMs: number;
  /** Decisions an analysis replays per second at most (`GOVERNANCE_IMPACT_REPLAYS_PER_SECOND`; 0: as fast as it can). */
  replaysPerSecond: number;
  /** Bytes a report may take (`reportBudget` of the bus limit): its examples are trimmed to fit before it is kept. */
  maxReportBytes: number;
}

/** One side of a decision as compared (and, for an example, why it came out). */
type Side = ImpactExample['before'];

/** A replay answer as the execution service writes it: a policy's run response or a flow's. */
interface Replayed {
  result: DecisionRecord['result'];
  outcomes?: Record<string, unknown>;
  path?: Array<{ nodeId: string }>;
  errorCode?: string;
  maskedRead?: boolean;
  reasons?: Reasons;
  nodes?: Array<{ nodeId: string; reasons?: Reasons }>;
}

/** A decision of the history: what a replay compares, and its masked input as the audit service sent it. */
interface Recorded {
  entry: DecisionHistoryEntry;
  input: Uint8Array;
}

/**
 * Item errors that are not the replayed record's doing (`errors` counts the others: a replay past
 * its time or step limits, data deeper than allowed, an answer too large).
 */
const NOT_A_REPLAY_ERROR = new Set(['dependency_unavailable', 'rate_limited', 'internal', 'not_found']);

/** A report while it is made: its examples all collected, before the bound, and their inputs as sent. */
type Working = ImpactReport & { examples: ImpactExample[]; exampleInputs: Uint8Array[]; exampleRecorded: DecisionHistoryEntry[] };

/** Decisions replayed by one call, each at its own `now`. */
interface Batch {
  decisions: Recorded[];
}

const decoder = new TextDecoder();

/** The label of a side in `transitions`: `error`, else the result (`true`, `false`, a flow's outcome, a table output's JSON). */
function labelOf(side: Side): string {
  if (side.errorCode !== null) return 'error';
  const label = typeof side.result === 'string' ? side.result : JSON.stringify(side.result);
  return label.length <= MAX_LABEL ? label : `${label.slice(0, MAX_LABEL - 1)}…`;
}

/**
 * Impact analysis (docs/decisions.md#impact-analysis): replays a base's most recent
 * recorded decisions through one policy or flow record — usually the draft under review — in the
 * execution service's workers (as the caller's low-priority work, each at its decision's `now`),
 * compares each answer with the recorded one, and keeps the report as the latest for the record's
 * content hash (the review summary of the draft shows it until the draft changes).
 */
export class ImpactService {
  constructor(private readonly deps: ImpactDeps) {}

  async analyse(p: Principal, kind: RunnableKind, recordId: string, req: ImpactRequest, requestId?: string): Promise<ImpactReport> {
    const record = await this.deps.registry.get(p, kind, recordId, requestId);
    if (!hasCapability(p, 'publish')) {
      // Editors analyse drafts only (the registry already refused records they may not see).
      if (!hasCapability(p, 'edit') || record.status !== 'draft') {
        throw new ArbiterError('forbidden', `role \`${p.role}\` may analyse the impact of drafts only: it needs the \`publish\` right`);
      }
    }
    const report: Working = {
      impactId: v7(),
      ...(kind === 'policy' ? { policyId: record.recordId } : { flowId: record.recordId }),
      baseId: record.baseId,
      contentHash: record.contentHash,
      at: new Date().toISOString(),
      replayed: 0,
      unchanged: 0,
      changed: 0,
      errors: 0,
      unreplayable: 0,
      transitions: {},
      outcomes: {},
      examples: [],
      exampleInputs: [],
      exampleRecorded: [],
    };
    const pacer = new Pacer(this.deps.replaysPerSecond);
    let cursor: string | undefined;
    let left = req.limit;
    while (left > 0) {
      const page = await this.deps.bus.requestFrame(
        DecisionSubject.history,
        {
          principal: p,
          baseId: record.baseId,
          limit: Math.min(PAGE, left),
          ...(req.from !== undefined ? { from: req.from } : {}),
          ...(req.to !== undefined ? { to: req.to } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
        },
        { timeoutMs: this.deps.timeoutMs },
      );
      // The audit service's contract (its tests hold it); the inputs stay bytes, forwarded as they are.
      const { entries, nextCursor } = page.header as DecisionHistoryHeader;
      const decisions = entries.map((entry, i) => ({ entry, input: page.items[i] }));
      await this.replay(p, kind, record.recordId, decisions, report, pacer, requestId);
      left -= decisions.length;
      if (nextCursor === null || decisions.length === 0) break;
      cursor = nextCursor;
    }
    await this.explain(p, kind, record.recordId, report, pacer, requestId);
    const { exampleInputs: _inputs, exampleRecorded: _recorded, ...made } = report;
    // Bounded before it is kept: the review summary that shows it must fit one bus message.
    const bounded = boundReport(made, this.deps.maxReportBytes);
    await saveImpactReport(this.deps.db, p.orgId, bounded);
    return impactReportFor(p, bounded);
  }

  /**
   * Says why each example came out (docs/decisions.md#impact-analysis): after the change, its
   * decision replayed once more through the analysed record asking for reasons; before, as
   * recorded when the run asked for reasons, else its decision replayed through the record that
   * made it (kept only when that replay gives the recorded answer and read no masked value:
   * `reasonsReplayed`). Only the examples (at most {@link MAX_EXAMPLES}) pay for reasons. Best
   * effort: an example whose replay fails, or an analysis whose replays for reasons fail, keeps
   * its examples without them.
   */
  private async explain(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    report: Working,
    pacer: Pacer,
    requestId?: string,
  ): Promise<void> {
    const all = report.examples.map((_, i) => i);
    try {
      for (const [i, body] of await this.withReasons(p, kind, recordId, all, report, pacer, requestId)) {
        Object.assign(report.examples[i].after, reasonsOf(body));
      }
      // Before, for the decisions recorded without reasons: by the record that made each one.
      const byRecord = new Map<string, number[]>();
      report.exampleRecorded.forEach((d, i) => {
        const made = d.policyId ?? d.flowId;
        if (d.reasons !== undefined || d.nodeReasons !== undefined || made === undefined) return;
        byRecord.set(made, [...(byRecord.get(made) ?? []), i]);
      });
      for (const [made, indices] of byRecord) {
        for (const [i, body] of await this.withReasons(p, kind, made, indices, report, pacer, requestId)) {
          const before = report.examples[i].before;
          if (body.maskedRead === true || !sameAnswer(before, sideOf(kind, body))) continue;
          const reasons = reasonsOf(body);
          if (reasons.reasons !== undefined || reasons.nodeReasons !== undefined) Object.assign(before, reasons, { reasonsReplayed: true });
        }
      }
    } catch {
      // The counts and examples stand without the reasons.
    }
  }

  /** Examples `indices` replayed through record `recordId` asking for reasons, each at its decision's `now`: the answers that came. */
  private async withReasons(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    indices: readonly number[],
    report: Working,
    pacer: Pacer,
    requestId?: string,
  ): Promise<Map<number, Replayed>> {
    const out = new Map<number, Replayed>();
    const size = kind === 'flow' ? FLOW_ITEMS_PER_CALL : MAX_EXAMPLES;
    for (let from = 0; from < indices.length; from += size) {
      const chunk = indices.slice(from, from + size);
      await pacer.take(chunk.length);
      const answers = await this.deps.evals.many(
        {
          subject: kind === 'policy' ? 'exec.stored.policy.record' : 'exec.stored.flow.record',
          principal: p,
          id: recordId,
          trace: false,
          flags: { reasons: true },
          nows: chunk.map((i) => report.exampleRecorded[i].now),
          replay: true,
          timeoutMs: this.deps.timeoutMs,
          ...(requestId !== undefined ? { requestId } : {}),
        },
        chunk.map((i) => report.exampleInputs[i]),
      );
      answers.forEach((answer, j) => {
        if (!(answer instanceof ArbiterError)) out.set(chunk[j], JSON.parse(decoder.decode(answer)) as Replayed);
      });
    }
    return out;
  }

  /**
   * Replays one page, in calls of {@link POLICY_ITEMS_PER_CALL} decisions (a flow's
   * {@link FLOW_ITEMS_PER_CALL}), each decision at its own `now`; calls are sent as jobs free up, at most {@link JOBS_IN_FLIGHT}
   * jobs at a time.
   */
  private async replay(
    p: Principal,
    kind: RunnableKind,
    recordId: string,
    decisions: Recorded[],
    report: Working,
    pacer: Pacer,
    requestId?: string,
  ): Promise<void> {
    const batches = batchesOf(decisions, kind === 'flow' ? FLOW_ITEMS_PER_CALL : POLICY_ITEMS_PER_CALL);
    const jobs = (b: Batch): number => (kind === 'flow' ? b.decisions.length : 1);
    const send = async (b: Batch): Promise<void> => {
      await pacer.take(b.decisions.length);
      const answers = await this.deps.evals.many(
        {
          subject: kind === 'policy' ? 'exec.stored.policy.record' : 'exec.stored.flow.record',
          principal: p,
          id: recordId,
          trace: false,
          nows: b.decisions.map((d) => d.entry.now),
          replay: true,
          timeoutMs: this.deps.timeoutMs,
          ...(requestId !== undefined ? { requestId } : {}),
        },
        b.decisions.map((d) => d.input),
      );
      // A service away, a refusal or a fault says nothing of the record: the analysis fails (503,
      // 429, 500) instead of reporting decisions as errors.
      const failed = answers.find((a): a is ArbiterError => a instanceof ArbiterError && NOT_A_REPLAY_ERROR.has(a.code));
      if (failed !== undefined) throw failed;
      b.decisions.forEach((d, i) => count(report, kind, d, answers[i]));
    };
    await withinJobs(batches, jobs, JOBS_IN_FLIGHT, send);
  }
}

/** The decisions in groups of at most `size`. */
function batchesOf(decisions: Recorded[], size: number): Batch[] {
  const batches: Batch[] = [];
  for (let i = 0; i < decisions.length; i += size) batches.push({ decisions: decisions.slice(i, i + size) });
  return batches;
}

/**
 * Runs `send` on every batch, starting one whenever its jobs fit within `limit` jobs in flight (a
 * batch larger than `limit` goes alone). After a failure no batch starts; it rejects with the
 * first failure once those in flight are over.
 */
async function withinJobs<T>(batches: T[], jobs: (b: T) => number, limit: number, send: (b: T) => Promise<void>): Promise<void> {
  let inFlight = 0;
  let failed: Promise<void> | undefined;
  const running = new Set<Promise<void>>();
  for (const batch of batches) {
    const cost = jobs(batch);
    while (failed === undefined && inFlight > 0 && inFlight + cost > limit) await Promise.race(running);
    if (failed !== undefined) break;
    inFlight += cost;
    const sent = send(batch);
    const settled = sent
      .catch(() => {
        failed ??= sent;
      })
      .finally(() => {
        inFlight -= cost;
        running.delete(settled);
      });
    running.add(settled);
  }
  await Promise.all(running);
  // Rejects with the first failure's own error.
  if (failed !== undefined) await failed;
}

/** Counts one replayed decision in the report. */
function count(report: Working, kind: RunnableKind, recorded: Recorded, answer: Uint8Array | ArbiterError): void {
  const d = recorded.entry;
  report.replayed++;
  if (answer instanceof ArbiterError) {
    report.errors++;
    return;
  }
  const body = JSON.parse(decoder.decode(answer)) as Replayed;
  if (body.maskedRead === true) {
    report.unreplayable++;
    return;
  }
  const flow = kind === 'flow';
  const before: Side = { result: d.result, errorCode: d.errorCode, outcomes: d.outcomes ?? {}, ...(flow ? { path: d.path ?? [] } : {}) };
  const after = sideOf(kind, body);
  if (after.errorCode !== null) report.errors++;
  let outcomeChanged = false;
  for (const name of new Set([...Object.keys(before.outcomes), ...Object.keys(after.outcomes)])) {
    if (before.outcomes[name] !== after.outcomes[name]) {
      report.outcomes[name] = (report.outcomes[name] ?? 0) + 1;
      outcomeChanged = true;
    }
  }
  const from = labelOf(before);
  const to = labelOf(after);
  const pathChanged = flow && before.path!.join('\u0000') !== after.path!.join('\u0000');
  if (from === to && before.errorCode === after.errorCode && !outcomeChanged && !pathChanged) {
    report.unchanged++;
    return;
  }
  report.changed++;
  const transition = `${from}→${to}`;
  report.transitions[transition] = (report.transitions[transition] ?? 0) + 1;
  if (report.examples.length < MAX_EXAMPLES) {
    report.examples.push({
      decisionId: d.decisionId,
      at: d.at,
      // Why it came out before: as recorded, when the recorded run asked for reasons (masked there).
      before: {
        ...before,
        ...(d.reasons !== undefined ? { reasons: d.reasons } : {}),
        ...(d.nodeReasons !== undefined ? { nodeReasons: d.nodeReasons } : {}),
      },
      after,
      input: JSON.parse(decoder.decode(recorded.input)) as Record<string, unknown>,
    });
    report.exampleInputs.push(recorded.input);
    report.exampleRecorded.push(d);
  }
}

/** A replay's answer as a side compares it. */
function sideOf(kind: RunnableKind, body: Replayed): Side {
  return {
    result: body.result,
    errorCode: body.errorCode ?? null,
    outcomes: body.outcomes ?? {},
    ...(kind === 'flow' ? { path: (body.path ?? []).map((step) => step.nodeId) } : {}),
  };
}

/** JSON text with every object's keys sorted (a recorded object comes back from PostgreSQL's `jsonb` in its own key order). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** Whether two sides are the same answer: result, error code, named outcomes and a flow's path. */
function sameAnswer(a: Side, b: Side): boolean {
  return (
    canonical(a.result) === canonical(b.result) &&
    a.errorCode === b.errorCode &&
    canonical(a.outcomes) === canonical(b.outcomes) &&
    (a.path ?? []).join('\u0000') === (b.path ?? []).join('\u0000')
  );
}

/** A replay's reasons as an example side keeps them: a policy's, or each flow node's that has them. */
function reasonsOf(body: Replayed): Pick<Side, 'reasons' | 'nodeReasons'> {
  if (body.reasons !== undefined) return { reasons: body.reasons };
  const nodeReasons: DecisionNodeReasons = [];
  for (const node of body.nodes ?? []) if (node.reasons !== undefined) nodeReasons.push({ nodeId: node.nodeId, reasons: node.reasons });
  return nodeReasons.length > 0 ? { nodeReasons } : {};
}
