import {
  ArbiterError,
  isArbiterError,
  SHADOW_KEYS_TTL_SECONDS,
  SHADOW_MAX_EXAMPLE_CHARS,
  SHADOW_MAX_EXAMPLES,
  shadowCountsKey,
  type FlowRunResponse,
  type LiveFlowRecordEntry,
  type LivePolicyRecordEntry,
  type Principal,
  type RunnableKind,
  type ShadowAnswer,
  type ShadowExample,
  type ShadowIndexEntry,
} from '@arbiter/contracts';
import { BatchedWriter } from '@arbiter/service-kit/lifecycle';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { DecisionRecorder } from '../recording/recorder.js';
import { callerOf, type WorkerPool } from '../workers/worker-pool.js';
import type { LiveEntryOf, RunnableResolver } from './runnable-resolver.js';

/** Options of {@link ShadowRuns}. */
export interface ShadowRunsOptions {
  /** Candidate items queued or running at once; past it a sampled run is dropped. */
  maxInFlight: number;
  /** Shadow jobs (a run's sampled items) of one person queued or running at once; past it a sampled run is dropped. */
  maxPerPerson: number;
  /** Longest wait of a candidate run for a thread; one not started by then is dropped. */
  waitMs: number;
  /** How often counters and examples are written to Redis. */
  flushMs: number;
}

/** What {@link ShadowRuns} needs. */
export interface ShadowRunsDeps {
  redis: Redis;
  prefix: string;
  pool: WorkerPool;
  resolver: RunnableResolver;
  /** Masks the inputs of examples as decision records are; without it no example is kept. */
  decisions?: DecisionRecorder;
  logger: Logger;
  metrics: Registry;
}

/** One sampled run: its data and the live answer. */
export interface ShadowItem {
  item: Uint8Array;
  live: ShadowAnswer;
}

/** Counts of one shadow waiting for the next write, and its new examples. */
interface Pending {
  sampled: number;
  compared: number;
  same: number;
  changed: number;
  errors: number;
  dropped: number;
  transitions: Map<string, number>;
  examples: string[];
}

/** Shadows whose counts wait for a write at most (one interval); counts of further shadows are left out. */
const MAX_PENDING_SHADOWS = 10_000;

const decoder = new TextDecoder();

/**
 * Shadow runs (docs/design/shadow-runs.md): a base's candidate record runs on a sample of the base's
 * runs after their answers have gone, as the caller's low-priority work in the fair queue (it waits
 * while any of the caller's live work waits), never counted as a run nor recorded as a decision.
 * A sampled run is dropped (counted) rather than queued when `maxInFlight` candidate items are
 * in progress or live work waits for a thread, and when it has not started within `waitMs`.
 *
 * Counts are kept in memory per shadow and written in one pipeline per `flushMs` (atomic
 * `HINCRBY`s, the key expiring `SHADOW_KEYS_TTL_SECONDS` after its last write); examples (changed
 * answers, inputs masked as decision records mask them) are pushed to a list trimmed to
 * `SHADOW_MAX_EXAMPLES`. A failed write is logged and its counts dropped.
 */
export class ShadowRuns {
  private readonly writer: BatchedWriter<string, Pending>;
  private inFlight = 0;
  /** Shadow jobs in progress per person. */
  private readonly perPerson = new Map<string, number>();
  private readonly outcomes: Counter<'outcome'>;

  constructor(
    private readonly deps: ShadowRunsDeps,
    private readonly opts: ShadowRunsOptions,
  ) {
    this.writer = new BatchedWriter({
      flushMs: opts.flushMs,
      write: (batch) => this.write(batch),
      onFailure: 'drop',
      onError: (err, batch) => deps.logger.warn({ err, shadows: batch.size }, 'shadow counters not written: dropped'),
      maxKeys: MAX_PENDING_SHADOWS,
    });
    this.outcomes = new Counter({
      name: 'arbiter_shadow_runs_total',
      help: 'Sampled shadow runs by outcome: compared, dropped (busy, refused, not started in time), candidate_gone',
      labelNames: ['outcome'],
      registers: [deps.metrics],
    });
  }

  /** Whether `shadow` runs at `nowMs` ({@link shadowRunning}). */
  running(shadow: ShadowIndexEntry | undefined, nowMs: number): shadow is ShadowIndexEntry {
    return shadowRunning(shadow, nowMs);
  }

  /** Whether one run is sampled. */
  sampled(shadow: ShadowIndexEntry): boolean {
    return shadow.sampleRate >= 1 || Math.random() < shadow.sampleRate;
  }

  /**
   * Runs the candidate policy on `items` at `now` (the clock their live runs had) and compares.
   * Starts on the next turn of the event loop: the caller's answer is sent first.
   */
  policy(principal: Principal, live: LivePolicyRecordEntry, shadow: ShadowIndexEntry, items: ShadowItem[], now: string): void {
    if (items.length === 0) return;
    setImmediate(() => void this.runPolicy(principal, live, shadow, items, now).catch((err) => this.failed(err, live, items.length)));
  }

  /**
   * Runs the candidate flow on `items` through `run` (the flow walker of the stored runs, its nodes
   * as low-priority work at the live runs' clock) and compares. Starts on the next turn of the event loop.
   */
  flow(
    principal: Principal,
    live: LiveFlowRecordEntry,
    shadow: ShadowIndexEntry,
    items: ShadowItem[],
    run: (candidate: LiveFlowRecordEntry, item: Uint8Array, deadline: number) => Promise<FlowRunResponse>,
  ): void {
    if (items.length === 0) return;
    setImmediate(() => void this.runFlow(principal, live, shadow, items, run).catch((err) => this.failed(err, live, items.length)));
  }

  /** Writes the pending counts now (tests, shutdown). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Stops the timer and writes what is pending. */
  close(): Promise<void> {
    return this.writer.close();
  }

  private async runPolicy(
    principal: Principal,
    live: LivePolicyRecordEntry,
    shadow: ShadowIndexEntry,
    sampled: ShadowItem[],
    now: string,
  ): Promise<void> {
    const candidate = await this.candidate('policy', principal, live.baseId, shadow);
    if (candidate === undefined) return;
    const key = shadowCountsKey(this.deps.prefix, 'policy', live.baseId, shadow.since);
    const admitted = this.admit(principal, sampled.length);
    if (admitted < sampled.length) this.drop(key, sampled.length - admitted);
    if (admitted === 0) return;
    const items = sampled.slice(0, admitted);
    this.inFlight += items.length;
    this.track(principal, 1);
    try {
      const outcome = await this.deps.pool.runJob({
        principal,
        source: {
          kind: 'stored',
          hash: candidate.ruleHash,
          rule: candidate.rule,
          schema:
            candidate.schema !== null && candidate.schemaHash !== null ? { hash: candidate.schemaHash, schema: candidate.schema } : null,
        },
        trace: false,
        reply: { kind: 'json' },
        items: items.map((i) => i.item),
        deadline: this.deps.pool.clock() + this.opts.waitMs,
        lowPriority: true,
        now,
      });
      outcome.answers.forEach((answer, i) => {
        if (answer instanceof ArbiterError) return this.drop(key, 1);
        this.compare('policy', live.orgId, live.baseId, shadow, items[i], policyAnswer(answer.json!));
      });
    } catch (err) {
      // Refused by the queue (the caller's limits, the queue full): dropped like load.
      if (!isArbiterError(err)) throw err;
      this.drop(key, items.length);
    } finally {
      this.inFlight -= items.length;
      this.track(principal, -1);
    }
  }

  private async runFlow(
    principal: Principal,
    live: LiveFlowRecordEntry,
    shadow: ShadowIndexEntry,
    sampled: ShadowItem[],
    run: (candidate: LiveFlowRecordEntry, item: Uint8Array, deadline: number) => Promise<FlowRunResponse>,
  ): Promise<void> {
    const candidate = await this.candidate('flow', principal, live.baseId, shadow);
    if (candidate === undefined) return;
    const key = shadowCountsKey(this.deps.prefix, 'flow', live.baseId, shadow.since);
    const admitted = this.admit(principal, sampled.length);
    if (admitted < sampled.length) this.drop(key, sampled.length - admitted);
    if (admitted === 0) return;
    const items = sampled.slice(0, admitted);
    this.inFlight += items.length;
    this.track(principal, 1);
    const deadline = this.deps.pool.clock() + this.opts.waitMs;
    try {
      // One item at a time: a flow item's nodes are jobs of their own, and shadow work stays small.
      for (const item of items) {
        let response: FlowRunResponse;
        try {
          response = await run(candidate, item.item, deadline);
        } catch (err) {
          if (!isArbiterError(err)) throw err;
          this.drop(key, 1);
          continue;
        }
        if (response.errorCode === 'timeout') {
          this.drop(key, 1);
          continue;
        }
        this.compare('flow', live.orgId, live.baseId, shadow, item, flowAnswer(response));
      }
    } finally {
      this.inFlight -= items.length;
      this.track(principal, -1);
    }
  }

  /** The candidate record, or undefined (shadowing stops: nothing counted) when it is gone or not of the base. */
  private async candidate<K extends RunnableKind>(
    kind: K,
    principal: Principal,
    baseId: string,
    shadow: ShadowIndexEntry,
  ): Promise<LiveEntryOf[K] | undefined> {
    try {
      const entry = await this.deps.resolver.resolve(kind, principal, { recordId: shadow.recordId });
      if (entry.baseId !== baseId) throw new ArbiterError('not_found', 'the candidate is not a record of the base');
      return entry;
    } catch (err) {
      if (!isArbiterError(err, 'not_found')) throw err;
      this.outcomes.inc({ outcome: 'candidate_gone' });
      return undefined;
    }
  }

  /**
   * How many of `n` candidate items of `principal`'s runs may be queued now (the rest are dropped):
   * under `maxInFlight` in all and `maxPerPerson` jobs of this person, none while work waits with
   * every thread busy, and only while the person uses under half of its own job and item limits,
   * so its shadow work never takes the room its live runs need (they would be `rate_limited`).
   */
  private admit(principal: Principal, n: number): number {
    const person = callerOf(principal).person;
    if ((this.perPerson.get(person) ?? 0) >= this.opts.maxPerPerson) return 0;
    const { queued, running } = this.deps.pool.stats();
    if (queued > 0 && running >= this.deps.pool.readyThreads) return 0;
    const load = this.deps.pool.personLoad(principal);
    if ((load.jobs + 1) * 2 > load.maxJobs) return 0;
    return Math.max(0, Math.min(n, this.opts.maxInFlight - this.inFlight, Math.floor(load.maxItems / 2) - load.items));
  }

  /** Counts a shadow job of `principal`'s person in progress (`+1`) or over (`-1`). */
  private track(principal: Principal, delta: 1 | -1): void {
    const person = callerOf(principal).person;
    const n = (this.perPerson.get(person) ?? 0) + delta;
    if (n <= 0) this.perPerson.delete(person);
    else this.perPerson.set(person, n);
  }

  private compare(
    kind: RunnableKind,
    orgId: string,
    baseId: string,
    shadow: ShadowIndexEntry,
    item: ShadowItem,
    candidate: ShadowAnswer,
  ): void {
    const key = shadowCountsKey(this.deps.prefix, kind, baseId, shadow.since);
    const same = sameAnswer(item.live, candidate);
    this.outcomes.inc({ outcome: 'compared' });
    this.note(key, (p) => {
      p.sampled++;
      p.compared++;
      if (same) p.same++;
      else {
        p.changed++;
        const t = `${sideOf(item.live)}→${sideOf(candidate)}`;
        p.transitions.set(t, (p.transitions.get(t) ?? 0) + 1);
      }
      if (candidate.errorCode !== null) p.errors++;
    });
    if (!same) void this.example(orgId, baseId, key, item, candidate);
  }

  /** Keeps a changed run as an example, its input masked as a decision record's (none when the masks cannot be read). */
  private async example(orgId: string, baseId: string, key: string, item: ShadowItem, candidate: ShadowAnswer): Promise<void> {
    const recorder = this.deps.decisions;
    if (recorder === undefined) return;
    try {
      const masked = await recorder.maskedInput(orgId, baseId, item.item);
      if (masked === undefined) return;
      const example: ShadowExample = {
        at: new Date().toISOString(),
        input: masked.input,
        masked: masked.masked,
        live: item.live,
        candidate,
      };
      let text = JSON.stringify(example);
      if (text.length > SHADOW_MAX_EXAMPLE_CHARS) text = JSON.stringify({ ...example, input: null });
      if (text.length > SHADOW_MAX_EXAMPLE_CHARS) return;
      this.note(key, (p) => {
        if (p.examples.length >= SHADOW_MAX_EXAMPLES) p.examples.shift();
        p.examples.push(text);
      });
    } catch (err) {
      this.deps.logger.warn({ err, baseId }, 'a shadow example could not be built');
    }
  }

  private drop(key: string, n: number): void {
    this.outcomes.inc({ outcome: 'dropped' }, n);
    this.note(key, (p) => {
      p.sampled += n;
      p.dropped += n;
    });
  }

  private note(key: string, update: (p: Pending) => void): void {
    this.writer.note(key, (p) => {
      const pending = p ?? { sampled: 0, compared: 0, same: 0, changed: 0, errors: 0, dropped: 0, transitions: new Map(), examples: [] };
      update(pending);
      return pending;
    });
  }

  private failed(err: unknown, live: { baseId: string }, n: number): void {
    this.deps.logger.warn({ err, baseId: live.baseId, items: n }, 'shadow run failed');
  }

  private async write(batch: ReadonlyMap<string, Pending>): Promise<void> {
    const pipe = this.deps.redis.pipeline();
    for (const [key, p] of batch) {
      for (const f of ['sampled', 'compared', 'same', 'changed', 'errors', 'dropped'] as const) if (p[f] > 0) pipe.hincrby(key, f, p[f]);
      for (const [t, n] of p.transitions) pipe.hincrby(key, `t:${t}`, n);
      pipe.expire(key, SHADOW_KEYS_TTL_SECONDS);
      if (p.examples.length > 0) {
        const list = `${key}:examples`;
        pipe
          .lpush(list, ...p.examples)
          .ltrim(list, 0, SHADOW_MAX_EXAMPLES - 1)
          .expire(list, SHADOW_KEYS_TTL_SECONDS);
      }
    }
    const results = (await pipe.exec()) ?? [];
    const failed = results.find(([err]) => err);
    if (failed?.[0]) throw failed[0];
  }
}

/** Whether a base entry's `shadow` runs at `nowMs`: present, a share above 0, its `until` not passed. */
export function shadowRunning(shadow: ShadowIndexEntry | undefined, nowMs: number): shadow is ShadowIndexEntry {
  return shadow !== undefined && shadow.sampleRate > 0 && (shadow.until === null || Date.parse(shadow.until) > nowMs);
}

/** What a comparison looks at of a flow's answer: result, error code, the node ids of the path. */
export function flowAnswer(response: FlowRunResponse): ShadowAnswer {
  return { result: response.result, errorCode: response.errorCode ?? null, path: response.path.map((s) => s.nodeId) };
}

/** What a comparison looks at of a policy's answer (its raw JSON). */
export function policyAnswer(json: Uint8Array): ShadowAnswer {
  const body = JSON.parse(decoder.decode(json)) as { result: boolean; outcomes?: Record<string, unknown>; errorCode?: string };
  return { result: body.result, outcomes: body.outcomes ?? {}, errorCode: body.errorCode ?? null };
}

/** Whether two answers are the same: result, error code, outcomes and path (keys in any order). */
export function sameAnswer(a: ShadowAnswer, b: ShadowAnswer): boolean {
  return (
    a.errorCode === b.errorCode &&
    canonical(a.result) === canonical(b.result) &&
    canonical(a.outcomes) === canonical(b.outcomes) &&
    canonical(a.path) === canonical(b.path)
  );
}

/** One side of a transition: `true`, `false`, `error` (an error code) or `other` (a flow's text or table result). */
export function sideOf(a: ShadowAnswer): string {
  if (a.errorCode !== null) return 'error';
  return a.result === true ? 'true' : a.result === false ? 'false' : 'other';
}

function canonical(value: unknown): string {
  return (
    JSON.stringify(value, (_k, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
        : v,
    ) ?? 'undefined'
  );
}
