/**
 * A checked policy compiled to closures and generated evaluators, and its evaluation (LANGUAGE.md
 * §8): no trace → codegen.ts; trace lines → codegen-trace.ts; structured trace (or no code
 * generation) → the closures of conditions.ts, then trace/render.ts.
 */

import type { EvaluateOptions, EvaluationResult, StructuredTrace, TraceRule } from '../api-types.js';
import type { Condition, ConditionList, Rule } from '../ast/types.js';
import type { CheckedPolicy } from '../check/check.js';
import { renderTrace } from '../trace/render.js';
import { dayOfInstant } from '../values/dates.js';
import { budgetOf } from './budget.js';
import { EvalFailure, TraceRecorder, type CondFn, type EvalContext } from './context.js';
import { generateEvaluator, type GeneratedEvaluator } from './codegen.js';
import { generateTracedEvaluator, type RuleMeta, type TracedEvaluator } from './codegen-trace.js';
import { compileList } from './conditions.js';
import { Lowering } from './lowering.js';

const DATE_RELATIVE = new Set(['period', 'is older than', 'is younger than']);

function usesToday(list: ConditionList): boolean {
  const visit = (c: Condition): boolean =>
    c.kind === 'comparison' ? DATE_RELATIVE.has(c.op.name) : c.kind === 'group' || c.kind === 'quantifier' ? usesToday(c.body) : false;
  return list.items.some(visit);
}

/** Subject reported for a rule: verbose subject, or the root of its first path (LANGUAGE.md §12.2). */
export type SelectorOf = (rule: Rule) => string;

/** A policy ready to evaluate any number of times. Immutable and safe to share within a thread. */
export class CompiledPolicy {
  /** Outcome names in text order. */
  readonly outcomes: readonly string[];
  /** Index of the golden rule. */
  readonly golden: number;
  private readonly rules: readonly CondFn[];
  private readonly needsToday: boolean;
  private readonly meta: readonly RuleMeta[];

  /** @internal Use `compile(text)`. */
  constructor(checked: CheckedPolicy, selectorOf: SelectorOf) {
    const ast = checked.ast;
    this.golden = checked.golden;
    this.outcomes = ast.rules.map((r) => r.outcome);
    this.meta = ast.rules.map((r) => ({ outcome: r.outcome, label: r.label, selector: selectorOf(r) }));
    this.needsToday = ast.rules.some((r) => usesToday(r.conditions));
    const fns: CondFn[] = [];
    const meta = this.meta;
    const runRule = (index: number, ctx: EvalContext): boolean => {
      const trace = ctx.trace;
      if (!trace) {
        const value = fns[index](ctx);
        ctx.states[index] = value ? 2 : 1;
        return value;
      }
      const outer = trace.list;
      const conditions: TraceRule['conditions'] = [];
      trace.list = conditions;
      const m = meta[index];
      const entry: TraceRule = { outcome: m.outcome, label: m.label, selector: m.selector, result: false, conditions };
      try {
        entry.result = fns[index](ctx);
        ctx.states[index] = entry.result ? 2 : 1;
        return entry.result;
      } catch (err) {
        if (err instanceof EvalFailure) entry.error = err.message;
        throw err;
      } finally {
        trace.list = outer;
        trace.rules.push(entry);
      }
    };
    const lowering = new Lowering();
    const env = {
      targetOf: (ref: Parameters<typeof checked.targets.get>[0]) => checked.targets.get(ref)!,
      runRule,
      outcomeOf: (i: number) => ast.rules[i].outcome,
      lowering,
    };
    for (const rule of ast.rules) fns.push(compileList(rule.conditions, env));
    this.rules = fns;
    this.run = runRule;
    this.generated = generateEvaluator(checked, lowering);
    // Generated on the first traced evaluation, and only where the no-trace one could be (same
    // conditions: code generation allowed, nesting within the cap), so compile costs no more.
    const generated = this.generated;
    let traced: TracedEvaluator | null | undefined = generated === null ? null : undefined;
    this.traced = () => (traced === undefined ? (traced = generateTracedEvaluator(checked, lowering, meta)) : traced);
  }

  private readonly run: (index: number, ctx: EvalContext) => boolean;
  /**
   * The no-trace evaluator as one generated function (codegen.ts); null where code generation is
   * unavailable, and then the closures serve both modes.
   * INVARIANT: for every data and day it returns/throws exactly what the closures would.
   */
  private readonly generated: GeneratedEvaluator | null;
  /**
   * The traced evaluator (codegen-trace.ts): the trace lines without the structured trace; null
   * where code generation is unavailable, and then the closures serve trace mode.
   * INVARIANT: for every data and day its lines are exactly renderTrace of the closures' trace.
   */
  private readonly traced: () => TracedEvaluator | null;

  /**
   * Evaluates the policy against `data`. Never throws for any data: missing selectors and
   * properties, and an exceeded step budget, come back as `error` + `errorCode` with `result: false`.
   * With a shared `StepBudget` in `options.stepBudget`, its `used` grows by the steps taken.
   */
  evaluate(data: unknown, options?: EvaluateOptions): EvaluationResult {
    const wantTree = options?.traceTree === true;
    const wantTrace = wantTree || options?.trace === true;
    const now = options?.now;
    const today = this.needsToday ? dayOfInstant(now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime()) : NaN;
    const budget = budgetOf(options?.stepBudget, wantTrace);
    if (!wantTrace && this.generated !== null) {
      try {
        return this.generated(data, today, budget);
      } catch (err) {
        if (!(err instanceof EvalFailure)) throw err;
        return { result: false, outcomes: {}, trace: [], error: err.message, errorCode: err.code };
      }
    }
    const traced = wantTrace && !wantTree ? this.traced() : null;
    if (traced !== null) {
      const lines: string[] = [];
      try {
        return traced(data, today, lines, budget);
      } catch (err) {
        if (!(err instanceof EvalFailure)) throw err;
        lines.push(`error: ${err.message}`);
        return { result: false, outcomes: {}, trace: lines, error: err.message, errorCode: err.code };
      }
    }
    const recorder = wantTrace ? new TraceRecorder() : null;
    const ctx: EvalContext = {
      data,
      states: new Uint8Array(this.rules.length),
      today,
      its: undefined,
      itsPath: '',
      trace: recorder,
      left: budget.limit - budget.used,
      limit: budget.limit,
    };
    try {
      const result = this.run(this.golden, ctx);
      const outcomes: Record<string, boolean> = {};
      const names = this.outcomes;
      for (let i = 0; i < names.length; i++) outcomes[names[i]] = ctx.states[i] === 2;
      if (!recorder) return { result, outcomes, trace: [] };
      const tree: StructuredTrace = { golden: names[this.golden], rules: recorder.rules, error: null };
      const trace = renderTrace(tree, result, this.golden, this.meta);
      return wantTree ? { result, outcomes, trace, traceTree: tree } : { result, outcomes, trace };
    } catch (err) {
      if (!(err instanceof EvalFailure)) throw err;
      const base: EvaluationResult = { result: false, outcomes: {}, trace: [], error: err.message, errorCode: err.code };
      if (!recorder) return base;
      const tree: StructuredTrace = { golden: this.outcomes[this.golden], rules: recorder.rules, error: err.message };
      const trace = renderTrace(tree, false, this.golden, this.meta);
      return wantTree ? { ...base, trace, traceTree: tree } : { ...base, trace };
    } finally {
      budget.used = budget.limit - Math.max(0, ctx.left);
    }
  }
}
