import { parentPort, threadId, workerData } from 'node:worker_threads';
import { exceedsDepth, type FlowNode, type RunResponse } from '@arbiter/contracts';
import { validateDefinition, type TableRun } from '@arbiter/flow';
import { explain, listOperators, StepBudget, validate } from '@arbiter/rule-lang';
import { answerPolicy, answerTable, resolveRun, type ResolvedRun } from '@arbiter/run';
import { PolicyCache, SchemaCache, TableCache, type PolicyEntry, type TableEntry, type TableSource } from '@arbiter/run/caches';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { watchMasked } from '../recording/masked-reads.js';
import { choicesOf } from './rollout-choice.js';
import {
  ITEM_BUDGET,
  ITEM_ERROR,
  ITEM_OK,
  ITEM_TRUE,
  type ChunkResult,
  type WorkerTask,
  type WorkerTaskResult,
  type EvalProgress,
  type EvalTask,
  type PolicySource,
  type TaskChunk,
  type TaskSource,
  type ValidateFlowTask,
  type WorkerConfig,
} from './tasks.js';

const config = workerData as WorkerConfig;
const cache = new PolicyCache(config.cacheSize);
const schemas = new SchemaCache(config.cacheSize);
const tables = new TableCache(config.cacheSize);
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** How long finished chunks may wait in the worker before they are posted ahead of the rest of the task. */
const PROGRESS_MS = 2;

/** Piscina task: the only place rules and flows' table nodes are parsed, compiled, checked and evaluated. */
export default function runTask(task: WorkerTask | EvalTask): unknown {
  switch (task.op) {
    case 'eval':
      return runEval(task);
    case 'validate':
      return validate(task.rule) satisfies WorkerTaskResult['validate'];
    case 'explain':
      return explain(task.rule) satisfies WorkerTaskResult['explain'];
    case 'operators':
      return listOperators() satisfies WorkerTaskResult['operators'];
    case 'validateFlow':
      return validateFlow(task) satisfies WorkerTaskResult['validateFlow'];
    case 'rolloutChoices':
      return choicesOf(task.rollout, task.data, task.ends) satisfies WorkerTaskResult['rolloutChoices'];
  }
}

/**
 * The structural problems of a flow definition (`validateDefinition`). Its table nodes are looked
 * up in (or added to) this worker's table cache, so the compile done here serves the runs after it.
 */
function validateFlow(task: ValidateFlowTask): WorkerTaskResult['validateFlow'] {
  const nodes = Object.fromEntries(
    task.nodes.map(([id, node]): [string, FlowNode] => {
      if (typeof node !== 'number') return [id, node];
      const source = task.tables[node];
      return [id, tables.lookupHashed(source.hash, source.text).entry.node];
    }),
  );
  return validateDefinition({ start: task.start, nodes });
}

/** Buffers handed back to the main thread without a copy. */
class Moved {
  constructor(
    private readonly value: EvalProgress,
    private readonly buffers: ArrayBuffer[],
  ) {}

  get [transferableSymbol](): ArrayBuffer[] {
    return this.buffers;
  }

  get [valueSymbol](): EvalProgress {
    return this.value;
  }
}

/**
 * Runs a task's chunks in order, each item with its own budget, deadline and error (one that took
 * longer than `itemTimeoutMs` answers `timeout`: a worker cannot stop a run midway, the step budget
 * bounds it). Chunks finished more than PROGRESS_MS ago are posted at once, so a slow chunk does
 * not hold its neighbours' replies.
 */
function runEval(task: EvalTask): unknown {
  let item = 0;
  let from = 0;
  let done: ChunkResult[] = [];
  let buffers: ArrayBuffer[] = [];
  let postedAt = performance.now();
  // Each policy found (or compiled) once per task; `compiled` goes with the first chunk that ran it.
  const policies = task.sources.map(policyOf);
  for (const [c, chunk] of task.chunks.entries()) {
    const policy = policies[chunk.source];
    const result = runChunk(task, chunk, item, policy);
    policy.compiled = false;
    item += chunk.count;
    done.push(result);
    if (result.json) buffers.push(result.json.buffer as ArrayBuffer);
    const now = performance.now();
    if (now - postedAt >= PROGRESS_MS && c < task.chunks.length - 1) {
      parentPort?.postMessage({ task: task.id, from, chunks: done } satisfies EvalProgress, buffers);
      from = c + 1;
      done = [];
      buffers = [];
      postedAt = now;
    }
  }
  return move(new Moved({ from, chunks: done }, buffers));
}

function runChunk(task: EvalTask, chunk: TaskChunk, first: number, policy: FoundSource): ChunkResult {
  const { hash, compiled } = policy;
  const n = chunk.count;
  const result: ChunkResult = {
    hash,
    compiled,
    threadId,
    ms: new Array<number>(n),
    steps: new Array<number>(n),
    flags: new Array<number>(n),
  };
  const answers: Array<string | undefined> = chunk.reply.kind === 'json' ? new Array<string | undefined>(n) : [];
  const values: unknown[] = chunk.reply.kind === 'value' ? new Array<unknown>(n) : [];
  // The pool decided the chunk's budget; the run layer decides the rest (the trace cap, the clock).
  const run = resolveRun(
    {
      trace: chunk.trace,
      ...(chunk.now !== undefined ? { now: chunk.now } : {}),
      ...(chunk.flags !== undefined ? { flags: chunk.flags } : {}),
    },
    {
      stepBudget: chunk.budgetLimit,
      tracedStepBudget: chunk.budgetLimit,
      maxTraceBytes: Math.min(config.maxTraceBytes, chunk.traceBytes ?? Infinity),
    },
  );
  for (let i = 0; i < n; i++) {
    const at = first + i;
    const started = performance.now();
    let flags = 0;
    let steps = chunk.budgetUsed;
    try {
      const text = decoder.decode(task.data.subarray(at === 0 ? 0 : task.ends[at - 1], task.ends[at]));
      if (chunk.deadline !== undefined && Date.now() > chunk.deadline) {
        // Its caller has gone: not run.
        (result.failures ??= {})[i] = { code: 'timeout', message: 'the caller stopped waiting before this evaluation could start' };
      } else if (exceedsDepth(text, config.maxDataDepth)) {
        (result.failures ??= {})[i] = {
          code: 'validation_failed',
          message: `data is nested deeper than ${config.maxDataDepth} levels`,
        };
      } else {
        const data = JSON.parse(text) as Record<string, unknown>;
        const masked = chunk.replay === true ? watchMasked(data) : undefined;
        const budget = new StepBudget(chunk.budgetLimit, chunk.budgetUsed);
        const now = chunk.nows?.[i];
        const response: Answer =
          policy.table !== null
            ? answerTable(policy.table.nodeId, policy.table.node, data, run, budget, now)
            : runCompiled(policy.entry, policy.source, run, now, data, budget);
        if (masked?.read === true) (response as RunResponse & { maskedRead?: true }).maskedRead = true;
        steps = budget.used;
        const ms = performance.now() - started;
        if (ms > task.itemTimeoutMs) {
          (result.failures ??= {})[i] = { code: 'timeout', message: `evaluation took longer than ${task.itemTimeoutMs} ms` };
        } else {
          flags = ITEM_OK | flagsOf(response);
          if (chunk.reply.kind === 'json') {
            answers[i] = JSON.stringify(chunk.reply.extra === undefined ? response : { ...response, ...chunk.reply.extra });
          } else values[i] = response;
        }
      }
    } catch {
      (result.failures ??= {})[i] = { code: 'internal', message: 'evaluation failed: run' };
    }
    result.ms[i] = performance.now() - started;
    result.steps[i] = steps;
    result.flags[i] = flags;
  }
  if (chunk.reply.kind === 'json') packJson(result, answers);
  else result.values = values;
  return result;
}

/** The answers' UTF-8 back to back in one buffer of their own (so it can be transferred). */
function packJson(result: ChunkResult, answers: Array<string | undefined>): void {
  let total = 0;
  for (const a of answers) if (a !== undefined) total += Buffer.byteLength(a, 'utf8');
  const buf = new Uint8Array(total);
  const ends = new Array<number>(answers.length);
  let at = 0;
  for (let i = 0; i < answers.length; i++) {
    const a = answers[i];
    if (a !== undefined) at += encoder.encodeInto(a, buf.subarray(at)).written;
    ends[i] = at;
  }
  result.json = buf;
  result.jsonEnds = ends;
}

/** A task's policy, found or compiled; or its table node (`table` set, the policy fields unused). */
type FoundSource =
  | { source: PolicySource; hash: string; entry: PolicyEntry; table: null; compiled: boolean }
  | { source: TableSource; hash: string; entry: null; table: TableEntry; compiled: boolean };

function policyOf(source: TaskSource): FoundSource {
  if (source.kind === 'table') {
    const found = tables.lookupHashed(source.hash, source.text);
    return { source, hash: found.hash, entry: null, table: found.entry, compiled: found.cache === 'compile' };
  }
  const found = source.kind === 'text' ? cache.lookup(source.rule) : cache.lookupHashed(source.hash, source.rule);
  return { source, hash: found.hash, entry: found.entry, table: null, compiled: found.cache === 'compile' };
}

/** An item's answer: a policy's run response, or a table node's run. */
type Answer = RunResponse | TableRun;

/** The ITEM_* flags of an answer beyond ITEM_OK: true result, error, budget stop. */
function flagsOf(answer: Answer): number {
  if ('ok' in answer) {
    if (!answer.ok) return ITEM_ERROR;
    const out = answer.outcome;
    return (out.error !== undefined ? ITEM_ERROR : 0) | (out.errorCode === 'budget_exceeded' ? ITEM_BUDGET : 0);
  }
  return (
    (answer.result ? ITEM_TRUE : 0) |
    (answer.error !== undefined ? ITEM_ERROR : 0) |
    (answer.errorCode === 'budget_exceeded' ? ITEM_BUDGET : 0)
  );
}

/**
 * One evaluation within `budget` (whose `used` it advances): past it, `budget_exceeded`, the worker
 * unharmed. A stored policy's data is checked against its schema first (validators cached by
 * schema hash). The answer is the run layer's (`answerPolicy`), keys in the contract's order, so
 * its JSON is the body as the gateway answers it.
 */
function runCompiled(
  entry: PolicyEntry,
  source: PolicySource,
  run: ResolvedRun,
  now: string | undefined,
  data: Record<string, unknown>,
  budget: StepBudget,
): RunResponse {
  const schema = source.kind === 'stored' && source.schema !== null ? schemas.get(source.schema.hash, source.schema.schema) : null;
  return answerPolicy(entry, data, run, { schema, budget, ...(now !== undefined ? { now } : {}) });
}
