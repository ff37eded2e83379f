/**
 * The evaluation step budget (LANGUAGE.md §8.1): a deterministic count of the work an evaluation
 * does, so that a runaway policy (nested any/all over large arrays) stops itself with the engine
 * error `budget_exceeded` instead of holding a thread.
 *
 * What counts, identically in the three evaluators (compile/codegen.ts, compile/codegen-trace.ts,
 * compile/conditions.ts):
 * - every comparison evaluated: 1 step, counted once it has finished (its trace line written);
 * - every any/all element: 1 step, counted once the element's conditions have finished;
 * - the size of what a comparison compares: an array operand costs its length, an object its
 *   number of own keys, a string one step per 64 characters (numbers, booleans, null: nothing).
 *   Charged before the operator runs; the check comes with the comparison's own step.
 * Rule references cost nothing of their own (each rule is evaluated at most once).
 */

import type { StepBudgetLike } from '../api-types.js';
import { EvalFailure } from './failure.js';

/**
 * Steps an evaluation without a trace may take unless told otherwise: a few ms to ~25 ms of the
 * generated evaluator; ordinary policies take tens to a few thousand.
 */
export const DEFAULT_STEP_BUDGET = 1_000_000;

/**
 * Steps a traced evaluation may take unless told otherwise. A traced step writes a trace line
 * (~0.8 µs, ~2 µs with the structured trace), so the same wall time buys ~20× fewer steps; and
 * the trace (about a line per step) stays under a megabyte, a size one can send back.
 */
export const DEFAULT_TRACED_STEP_BUDGET = 10_000;

/**
 * A budget of steps, shared by the evaluations it is passed to (a flow's policy nodes share one).
 * `used` grows as they run; once it would pass `limit` the evaluation stops with `budget_exceeded`.
 */
export class StepBudget implements StepBudgetLike {
  constructor(
    /** Steps allowed in all. */
    readonly limit: number = DEFAULT_STEP_BUDGET,
    /** Steps already taken (by earlier evaluations sharing this budget). */
    public used = 0,
  ) {
    checkedLimit(limit);
    if (!Number.isSafeInteger(used) || used < 0) throw new RangeError('the steps used must be a non-negative integer');
  }

  /** Steps still available (0 once exhausted). */
  get remaining(): number {
    return Math.max(0, this.limit - this.used);
  }
}

function checkedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('the step budget must be a non-negative integer');
  return limit;
}

/**
 * The step limit an evaluation runs with: the shared budget's, the number given (checked as
 * `new StepBudget(n)` checks it), or the default of its mode. Allocates nothing: a budget of the
 * evaluation's own is just this number, and only a shared one is written back.
 */
export function limitOf(option: number | StepBudgetLike | undefined, traced: boolean): number {
  if (option === undefined) return traced ? DEFAULT_TRACED_STEP_BUDGET : DEFAULT_STEP_BUDGET;
  return typeof option === 'object' ? option.limit : checkedLimit(option);
}

/** The engine error of an evaluation that needed more than `limit` steps. */
export function overBudget(limit: number): EvalFailure {
  return new EvalFailure('budget_exceeded', `Budget exceeded: the evaluation needs more than ${limit} steps`);
}

/** Steps the size of a compared value costs (see the header). */
export function sizeCost(x: unknown): number {
  if (typeof x === 'string') return x.length >>> 6;
  if (typeof x !== 'object' || x === null) return 0;
  return Array.isArray(x) ? x.length : Object.keys(x).length;
}
