/**
 * Evaluation of a compiled policy (LANGUAGE.md §8): the mode is chosen per call: no trace → the
 * generated evaluator (compile/codegen.ts); trace lines → the generated traced evaluator
 * (compile/codegen-trace.ts); coverage → the generated coverage evaluator (compile/codegen.ts);
 * structured trace, or no code generation → the closures (compile/conditions.ts), whose record trace/render.ts turns into lines. Here live the shapes
 * compile/ produces and the per-call work around them: options, today, the step budget, and
 * turning an EvalFailure into a result.
 */

import type { EvaluateOptions, EvaluationResult, Reason, Reasons, StepBudgetLike, StructuredTrace } from '../api-types.js';
import { renderTrace } from '../trace/render.js';
import { nowInDays } from '../values/dates.js';
import { DEFAULT_STEP_BUDGET, limitOf } from './budget.js';
import { TraceRecorder, type EvalContext } from './context.js';
import { EvalFailure } from './failure.js';

/**
 * The generated no-trace evaluator: data, the clock (now in days, its floor today's day number; NaN when unused), the step limit
 * and the shared budget whose `used` it advances (null when the evaluation has a budget of its
 * own, of `limit` steps) → the success result; throws EvalFailure.
 */
export type GeneratedEvaluator = (data: unknown, today: number, limit: number, shared: StepBudgetLike | null) => EvaluationResult;

/**
 * The generated coverage evaluator: as {@link GeneratedEvaluator}, adding each condition's
 * outcomes to `counts` (three per condition: true, false, stopped by missing data).
 */
export type CoveredEvaluator = (
  data: unknown,
  today: number,
  limit: number,
  shared: StepBudgetLike | null,
  counts: Uint32Array,
) => EvaluationResult;

/**
 * The generated traced evaluator: as {@link GeneratedEvaluator}, plus the array that receives the
 * trace lines; the success result's `trace` is that array (ending with `result: …`). Throws
 * EvalFailure, leaving in the array the lines before `error: …`.
 */
export type TracedEvaluator = (
  data: unknown,
  today: number,
  out: string[],
  limit: number,
  shared: StepBudgetLike | null,
) => EvaluationResult;

/**
 * The generated reasons evaluator (compile/codegen-reasons.ts): as {@link GeneratedEvaluator}, the
 * success result with its `reasons`. Throws EvalFailure (the closures then give the answer).
 */
export type ReasonsEvaluator = (data: unknown, today: number, limit: number, shared: StepBudgetLike | null) => EvaluationResult;

/** What the trace shows of each rule. */
export interface RuleMeta {
  outcome: string;
  label: string | null;
  selector: string;
}

/** What compile/ makes of a policy for its evaluation. */
export interface PolicyEvaluators {
  /** Outcome names in text order. */
  readonly outcomes: readonly string[];
  /** Index of the golden rule. */
  readonly golden: number;
  readonly meta: readonly RuleMeta[];
  /** Whether some comparison needs today's date (else `today` is NaN and the clock is not read). */
  readonly needsToday: boolean;
  /**
   * The no-trace evaluator; null where code generation is unavailable, and then the closures
   * serve both modes. INVARIANT: for every data and day it returns/throws exactly what the
   * closures would.
   */
  readonly generated: GeneratedEvaluator | null;
  /**
   * The traced evaluator, made on first use; null where code generation is unavailable.
   * INVARIANT: for every data and day its lines are exactly renderTrace of the closures' trace.
   */
  readonly traced: () => TracedEvaluator | null;
  /** The closures: evaluates rule `index` in `ctx` (once; its state is kept in `ctx.states`). */
  readonly runRule: (index: number, ctx: EvalContext) => boolean;
  /**
   * The coverage evaluator, made on first use; null where code generation is unavailable.
   * INVARIANT: for every data and day it returns/throws, and counts, exactly what the coverage
   * closures would.
   */
  readonly covered: () => CoveredEvaluator | null;
  /** The closures that also say why (reasons/compile-reasons.ts), made on first use. */
  readonly reasons: () => ReasonsProgram;
  /**
   * The reasons evaluator, made on first use; null where code generation is unavailable.
   * INVARIANT: for every data and day on which it returns, it returns exactly what the reasons
   * closures would (and takes the same steps); where it throws, the closures would fail too.
   */
  readonly generatedReasons: () => ReasonsEvaluator | null;
}

/** The evaluation state of a run with reasons. */
export interface ReasonsContext extends EvalContext {
  /** Per rule: the entries that decided it, once evaluated. */
  readonly because: (Reason[] | undefined)[];
  /** The entry where missing data or the step budget stopped the evaluation, wrapped by the references and elements that led there. */
  failure: Reason | null;
}

/** What the reasons closures offer the evaluation. */
export interface ReasonsProgram {
  /** Evaluates rule `index` once; its entries go to `ctx.because[index]`. */
  runRule(index: number, ctx: ReasonsContext): boolean;
  /** The golden rule's sentence. */
  sentence(result: boolean, because: readonly Reason[]): string;
}

function failed(err: unknown, trace: string[]): EvaluationResult {
  if (!(err instanceof EvalFailure)) throw err;
  return { result: false, outcomes: {}, trace, error: err.message, errorCode: err.code };
}

function todayOf(p: PolicyEvaluators, now: Date | number | undefined): number {
  if (!p.needsToday) return NaN;
  return nowInDays(now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime());
}

/**
 * Evaluates `p` against `data`. Never throws for any data: missing selectors and properties, and
 * an exceeded step budget, come back as `error` + `errorCode` with `result: false`. With a shared
 * budget in `options.stepBudget`, its `used` grows by the steps taken.
 */
export function evaluatePolicy(p: PolicyEvaluators, data: unknown, options: EvaluateOptions | undefined): EvaluationResult {
  const generated = p.generated;
  // The common call, without a trace: nothing to allocate but the result. (`options` may be null from JavaScript.)
  if (generated !== null && (options == null || (options.trace !== true && options.traceTree !== true && options.reasons !== true))) {
    const budget = options?.stepBudget;
    const shared = typeof budget === 'object' ? budget : null;
    const limit = budget === undefined ? DEFAULT_STEP_BUDGET : limitOf(budget, false);
    try {
      return generated(data, todayOf(p, options?.now), limit, shared);
    } catch (err) {
      return failed(err, []);
    }
  }
  if (options?.reasons === true) return evaluateWithReasons(p, data, options);
  return evaluateSlowly(p, data, options);
}

/**
 * An evaluation with reasons (LANGUAGE.md §10.4). With a trace too, the traced evaluation gives the
 * result and its trace (and takes the steps of a shared budget); the reasons come from a second
 * pass, with a budget of the same limit of its own. The generated reasons evaluator runs first;
 * when missing data or the budget stops it, the closures run from the start (the budget as it was),
 * since only they write the failure entry.
 */
function evaluateWithReasons(p: PolicyEvaluators, data: unknown, options: EvaluateOptions): EvaluationResult {
  const traced = options.trace === true || options.traceTree === true;
  const first = traced ? evaluateSlowly(p, data, options) : null;
  const budget = options.stepBudget;
  const shared = !traced && typeof budget === 'object' ? budget : null;
  const limit = limitOf(budget, traced);
  const today = todayOf(p, options.now);
  const generated = p.generatedReasons();
  if (generated !== null) {
    const used = shared?.used ?? 0;
    try {
      const answer = generated(data, today, limit, shared);
      return first !== null ? { ...first, reasons: answer.reasons } : answer;
    } catch (err) {
      if (!(err instanceof EvalFailure)) throw err;
      if (shared !== null) shared.used = used;
    }
  }
  return reasonsOnClosures(p, data, today, limit, shared, first);
}

/** {@link evaluateWithReasons} on the closures. */
function reasonsOnClosures(
  p: PolicyEvaluators,
  data: unknown,
  today: number,
  limit: number,
  shared: StepBudgetLike | null,
  first: EvaluationResult | null,
): EvaluationResult {
  const program = p.reasons();
  const ctx: ReasonsContext = {
    data,
    states: new Uint8Array(p.outcomes.length),
    today,
    its: undefined,
    itsPath: '',
    trace: null,
    left: shared === null ? limit : limit - shared.used,
    limit,
    because: new Array<Reason[] | undefined>(p.outcomes.length),
    failure: null,
  };
  const names = p.outcomes;
  let answer: EvaluationResult;
  let reasons: Reasons;
  try {
    const result = program.runRule(p.golden, ctx);
    const outcomes: Record<string, boolean> = {};
    for (let i = 0; i < names.length; i++) outcomes[names[i]] = ctx.states[i] === 2;
    const because = ctx.because[p.golden] ?? [];
    reasons = { result, sentence: program.sentence(result, because), because };
    answer = { result, outcomes, trace: [] };
  } catch (err) {
    answer = failed(err, []);
    const because = ctx.failure === null ? [] : [ctx.failure];
    reasons = { result: false, sentence: program.sentence(false, because), because };
  } finally {
    if (shared !== null) shared.used = limit - Math.max(0, ctx.left);
  }
  if (first !== null) return { ...first, reasons };
  answer.reasons = reasons;
  return answer;
}

/** Closures that count each condition's outcomes (made when first asked for), and the counters (three per condition). */
export interface CoverageRun {
  readonly runRule: () => PolicyEvaluators['runRule'];
  readonly counts: Uint32Array;
}

/**
 * Evaluates `p` untraced, adding to `cover.counts`, on the generated coverage evaluator, or on the
 * coverage closures where there is none; otherwise as {@link evaluatePolicy}.
 */
export function evaluateCovered(
  p: PolicyEvaluators,
  data: unknown,
  options: EvaluateOptions | undefined,
  cover: CoverageRun,
): EvaluationResult {
  const generated = p.covered();
  if (generated === null) return evaluateSlowly(p, data, options, cover);
  const budget = options?.stepBudget;
  const shared = typeof budget === 'object' ? budget : null;
  const limit = budget === undefined ? DEFAULT_STEP_BUDGET : limitOf(budget, false);
  try {
    return generated(data, todayOf(p, options?.now), limit, shared, cover.counts);
  } catch (err) {
    return failed(err, []);
  }
}

/** Trace lines, the structured trace, or no generated code; or a coverage run. */
function evaluateSlowly(p: PolicyEvaluators, data: unknown, options: EvaluateOptions | undefined, cover?: CoverageRun): EvaluationResult {
  const wantTree = cover === undefined && options?.traceTree === true;
  const wantTrace = cover === undefined && (wantTree || options?.trace === true);
  const today = todayOf(p, options?.now);
  const budget = options?.stepBudget;
  const shared = typeof budget === 'object' ? budget : null;
  const limit = limitOf(budget, wantTrace);
  const traced = wantTrace && !wantTree ? p.traced() : null;
  if (traced !== null) {
    const lines: string[] = [];
    try {
      return traced(data, today, lines, limit, shared);
    } catch (err) {
      const result = failed(err, lines);
      lines.push(`error: ${result.error}`);
      return result;
    }
  }
  const recorder = wantTrace ? new TraceRecorder() : null;
  const ctx: EvalContext = {
    data,
    states: new Uint8Array(p.outcomes.length),
    today,
    its: undefined,
    itsPath: '',
    trace: recorder,
    left: shared === null ? limit : limit - shared.used,
    limit,
    ...(cover === undefined ? {} : { coverage: cover.counts }),
  };
  const names = p.outcomes;
  try {
    const result = (cover === undefined ? p.runRule : cover.runRule())(p.golden, ctx);
    const outcomes: Record<string, boolean> = {};
    for (let i = 0; i < names.length; i++) outcomes[names[i]] = ctx.states[i] === 2;
    if (!recorder) return { result, outcomes, trace: [] };
    const tree: StructuredTrace = { golden: names[p.golden], rules: recorder.rules, error: null };
    const trace = renderTrace(tree, result, p.golden, p.meta);
    return wantTree ? { result, outcomes, trace, traceTree: tree } : { result, outcomes, trace };
  } catch (err) {
    const base = failed(err, []);
    if (!recorder) return base;
    const tree: StructuredTrace = { golden: names[p.golden], rules: recorder.rules, error: base.error! };
    const trace = renderTrace(tree, false, p.golden, p.meta);
    return wantTree ? { ...base, trace, traceTree: tree } : { ...base, trace };
  } finally {
    if (shared !== null) shared.used = limit - Math.max(0, ctx.left);
  }
}
