/** Per-evaluation state shared by the compiled closures (compile/conditions.ts, compile/paths.ts). */

import type { TraceCondition, TraceRule } from '../api-types.js';

/** Marks a value that could not be resolved in a lenient lookup (`if present`, `is empty`). */
export const MISSING: unique symbol = Symbol('missing');
export type Missing = typeof MISSING;

/** Collects typed trace events; exists only when a trace was asked for. */
export class TraceRecorder {
  readonly rules: TraceRule[] = [];
  /** The condition list currently being filled. */
  list: TraceCondition[] = [];
}

export interface EvalContext {
  readonly data: unknown;
  /** Per rule: 0 not evaluated yet, 1 false, 2 true. */
  readonly states: Uint8Array;
  /** The clock: now in days since 1970-01-01 UTC (its floor is today's day number), or NaN when the policy never needs it. */
  readonly today: number;
  /** Current element of the innermost any/all. */
  its: unknown;
  /** JSON path of `its`, kept only when tracing. */
  itsPath: string;
  readonly trace: TraceRecorder | null;
  /** Steps left of the step budget (budget.ts); below 0 the evaluation stops. */
  left: number;
  /** The budget's limit, for the error message. */
  readonly limit: number;
  /** Coverage runs only: three counters per condition (true, false, stopped by missing data). */
  readonly coverage?: Uint32Array;
}

export type CondFn = (ctx: EvalContext) => boolean;
