import { parentPort, threadId, workerData } from 'node:worker_threads';
import type { RunResponse } from '@arbiter/contracts';
import { explain, listOperators, StepBudget, validate } from '@arbiter/rule-lang';
import { PolicyCache, type PolicyEntry } from './policy-cache.js';
import { SchemaCache } from './schema-cache.js';
import type {
  BatchItemResult,
  BatchProgress,
  BatchTask,
  EngineTask,
  EngineTaskResult,
  RunManyItem,
  RunManyResult,
  RunManyTask,
  RunOutcome,
  StoredRunTask,
  WorkerConfig,
} from './tasks.js';

const cache = new PolicyCache((workerData as WorkerConfig).cacheSize);
const schemas = new SchemaCache((workerData as WorkerConfig).cacheSize);

/** Piscina task: the only place rules are parsed, compiled and evaluated. */
export default function runTask(
  task: EngineTask | BatchTask | RunManyTask,
): EngineTaskResult[EngineTask['op']] | BatchProgress | RunManyResult {
  if (task.op === 'batch') return runBatch(task);
  if (task.op === 'runMany') return runMany(task);
  return runOne(task);
}

/** One rule, compiled or found once, on each item in turn: each its own budget, deadline and error. */
function runMany(task: RunManyTask): RunManyResult {
  const { hash, entry, cache: use } = cache.lookup(task.rule);
  const results: RunManyItem[] = [];
  for (const data of task.items) {
    const started = performance.now();
    try {
      const budget = new StepBudget(task.budgetLimit, 0);
      const response = evaluate(entry, { data, trace: task.trace, ...(task.now !== undefined ? { now: task.now } : {}) }, budget);
      const ms = performance.now() - started;
      results.push(
        ms > task.itemTimeoutMs
          ? { ok: false, error: { code: 'timeout', message: `evaluation took longer than ${task.itemTimeoutMs} ms` }, ms }
          : { ok: true, response, steps: budget.used, ms },
      );
    } catch {
      results.push({ ok: false, error: { code: 'internal', message: 'evaluation failed: run' }, ms: performance.now() - started });
    }
  }
  return { hash, cache: use, threadId, results };
}

/** How long a batch's finished answers may wait in the worker before they are posted ahead of the rest. */
const PROGRESS_MS = 2;

/**
 * Runs a batch's tasks in order. Each has its own deadline from when it starts: one that took
 * longer answers `timeout` (a worker cannot stop a run midway; the step budget bounds it), one
 * that throws answers `internal`, and neither touches the others' answers. Answers finished more
 * than PROGRESS_MS ago are posted at once, so a slow item does not hold its neighbours' replies.
 */
function runBatch(batch: BatchTask): BatchProgress {
  let from = 0;
  let results: BatchItemResult[] = [];
  let postedAt = performance.now();
  for (const task of batch.tasks) {
    const started = performance.now();
    try {
      const value = runOne(task);
      const ms = performance.now() - started;
      results.push(
        ms > batch.itemTimeoutMs
          ? { ok: false, error: { code: 'timeout', message: `evaluation took longer than ${batch.itemTimeoutMs} ms` }, ms }
          : { ok: true, value, ms },
      );
    } catch {
      results.push({ ok: false, error: { code: 'internal', message: `evaluation failed: ${task.op}` }, ms: performance.now() - started });
    }
    const now = performance.now();
    if (now - postedAt >= PROGRESS_MS && results.length < batch.tasks.length - from) {
      parentPort?.postMessage({ batch: batch.id, from, results } satisfies BatchProgress);
      from += results.length;
      results = [];
      postedAt = now;
    }
  }
  return { from, results };
}

function runOne(task: EngineTask): EngineTaskResult[EngineTask['op']] {
  switch (task.op) {
    case 'run':
      return run(task);
    case 'runStored':
      return runStored(task);
    case 'validate':
      return validate(task.rule);
    case 'explain':
      return explain(task.rule);
    case 'operators':
      return listOperators();
  }
}

function run(task: Extract<EngineTask, { op: 'run' }>): RunOutcome {
  const { hash, entry, cache: use } = cache.lookup(task.rule);
  const budget = new StepBudget(task.budget.limit, task.budget.used);
  return { response: evaluate(entry, task, budget), hash, cache: use, threadId, steps: budget.used };
}

/** A stored policy: compiled policy by the registry's hash, data checked against the schema first. */
function runStored(task: StoredRunTask): RunOutcome {
  const { hash, entry, cache: use } = cache.lookupHashed(task.hash, task.rule);
  const budget = new StepBudget(task.budget.limit, task.budget.used);
  const mismatch = task.schema ? schemas.mismatch(task.schema.hash, task.schema.schema, task.data) : null;
  const response: RunResponse =
    mismatch === null
      ? evaluate(entry, task, budget)
      : { result: false, outcomes: {}, trace: task.trace ? [mismatch] : [], error: mismatch, errorCode: 'schema_mismatch' };
  return { response, hash, cache: use, threadId, steps: budget.used };
}

/** Evaluates within `budget` (whose `used` it advances): past it, `budget_exceeded`, the worker unharmed. */
function evaluate(
  entry: PolicyEntry,
  task: { data: Record<string, unknown>; trace: boolean; now?: string },
  budget: StepBudget,
): RunResponse {
  let response: RunResponse;
  if ('parseError' in entry) {
    const trace = task.trace ? [entry.parseError] : [];
    response = { result: false, outcomes: {}, trace, error: entry.parseError, errorCode: 'parse_error' };
  } else {
    const r = entry.policy.evaluate(task.data, {
      trace: task.trace,
      stepBudget: budget,
      ...(task.now !== undefined ? { now: new Date(task.now) } : {}),
    });
    response = {
      result: r.result,
      outcomes: r.outcomes,
      trace: r.trace,
      ...(r.error !== undefined ? { error: r.error } : {}),
      ...(r.errorCode !== undefined ? { errorCode: r.errorCode } : {}),
    };
  }
  return response;
}
