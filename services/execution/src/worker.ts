import { threadId, workerData } from 'node:worker_threads';
import type { RunResponse } from '@arbiter/contracts';
import { explain, listOperators, validate } from '@arbiter/rule-lang';
import { PolicyCache } from './policy-cache.js';
import type { EngineTask, EngineTaskResult, RunOutcome, WorkerConfig } from './tasks.js';

const cache = new PolicyCache((workerData as WorkerConfig).cacheSize);

/** Piscina task: the only place rules are parsed, compiled and evaluated. */
export default function runTask(task: EngineTask): EngineTaskResult[EngineTask['op']] {
  switch (task.op) {
    case 'run':
      return run(task);
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
  let response: RunResponse;
  if ('parseError' in entry) {
    const trace = task.trace ? [entry.parseError] : [];
    response = { result: false, outcomes: {}, trace, error: entry.parseError, errorCode: 'parse_error' };
  } else {
    const r = entry.policy.evaluate(task.data, {
      trace: task.trace,
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
  return { response, hash, cache: use, threadId };
}
