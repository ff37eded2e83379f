/** A checked policy compiled to closures, and its evaluation (LANGUAGE.md §8). */

import type { EvaluateOptions, EvaluationResult, StructuredTrace, TraceRule } from '../api-types.js';
import type { Condition, ConditionList, Rule } from '../ast/types.js';
import type { CheckedPolicy } from '../check/check.js';
import { renderTrace } from '../trace/render.js';
import { dayOfInstant } from '../values/dates.js';
import { EvalFailure, TraceRecorder, type CondFn, type EvalContext } from './context.js';
import { generateEvaluator, type GeneratedEvaluator } from './codegen.js';
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
  private readonly meta: readonly { outcome: string; label: string | null; selector: string }[];

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
        const value = fns[index]!(ctx);
        ctx.states[index] = value ? 2 : 1;
        return value;
      }
      const outer = trace.list;
      const conditions: TraceRule['conditions'] = [];
      trace.list = conditions;
      const m = meta[index]!;
      const entry: TraceRule = { outcome: m.outcome, label: m.label, selector: m.selector, result: false, conditions };
      try {
        entry.result = fns[index]!(ctx);
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
      outcomeOf: (i: number) => ast.rules[i]!.outcome,
      lowering,
    };
    for (const rule of ast.rules) fns.push(compileList(rule.conditions, env));
    this.rules = fns;
    this.run = runRule;
    this.generated = generateEvaluator(checked, lowering);
  }

  private readonly run: (index: number, ctx: EvalContext) => boolean;
  /**
   * The no-trace evaluator as one generated function (codegen.ts); null where code generation is
   * unavailable, and then the closures serve both modes.
   * INVARIANT: for every data and day it returns/throws exactly what the closures would.
   */
  private readonly generated: GeneratedEvaluator | null;

  /**
   * Evaluates the policy against `data`. Never throws for any data: missing selectors and
   * properties come back as `error` + `errorCode` with `result: false`.
   */
  evaluate(data: unknown, options?: EvaluateOptions): EvaluationResult {
    const wantTrace = options?.trace === true;
    const now = options?.now;
    const today = this.needsToday
      ? dayOfInstant(now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime())
      : NaN;
    const generated = this.generated;
    if (!wantTrace && generated !== null) {
      try {
        return generated(data, today);
      } catch (err) {
        if (!(err instanceof EvalFailure)) throw err;
        return { result: false, outcomes: {}, trace: [], error: err.message, errorCode: err.code };
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
    };
    try {
      const result = this.run(this.golden, ctx);
      const outcomes: Record<string, boolean> = {};
      const names = this.outcomes;
      for (let i = 0; i < names.length; i++) outcomes[names[i]!] = ctx.states[i] === 2;
      if (!recorder) return { result, outcomes, trace: [] };
      const tree: StructuredTrace = { golden: names[this.golden]!, rules: recorder.rules, error: null };
      return { result, outcomes, trace: renderTrace(tree, result, this.golden, this.meta), traceTree: tree };
    } catch (err) {
      if (!(err instanceof EvalFailure)) throw err;
      const base: EvaluationResult = { result: false, outcomes: {}, trace: [], error: err.message, errorCode: err.code };
      if (!recorder) return base;
      const tree: StructuredTrace = { golden: this.outcomes[this.golden]!, rules: recorder.rules, error: err.message };
      return { ...base, trace: renderTrace(tree, false, this.golden, this.meta), traceTree: tree };
    }
  }
}
