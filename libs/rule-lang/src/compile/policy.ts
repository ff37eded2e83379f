/**
 * A checked policy compiled to closures and generated evaluators. Its evaluation (which of them
 * runs, the options, the budget, the result) is evaluate/evaluate.ts.
 */

import type { EvaluateOptions, EvaluationResult, TraceRule } from '../api-types.js';
import type { Condition, ConditionList, Rule } from '../ast/types.js';
import { referencedRules, type CheckedPolicy } from '../check/check.js';
import type { CondFn, EvalContext } from '../evaluate/context.js';
import {
  evaluateCovered,
  evaluatePolicy,
  type CoveredEvaluator,
  type PolicyEvaluators,
  type RuleMeta,
  type TracedEvaluator,
} from '../evaluate/evaluate.js';
import { EvalFailure } from '../evaluate/failure.js';
import { generateCoveredEvaluator, generateEvaluator } from './codegen.js';
import { generateReasonsEvaluator } from './codegen-reasons.js';
import { generateTracedEvaluator } from './codegen-trace.js';
import { compileList } from './conditions.js';
import { Lowering } from './lowering.js';
import { usesClock } from '../operators/index.js';
import { compileReasons } from '../reasons/compile-reasons.js';
import type { ReasonsEvaluator, ReasonsProgram } from '../evaluate/evaluate.js';

function usesToday(list: ConditionList): boolean {
  const visit = (c: Condition): boolean =>
    c.kind === 'comparison' ? usesClock(c.op.name) : c.kind === 'group' || c.kind === 'quantifier' ? usesToday(c.body) : false;
  return list.items.some(visit);
}

/** Subject reported for a rule: verbose subject, or the root of its first path (LANGUAGE.md §12.2). */
export type SelectorOf = (rule: Rule) => string;

/** The closures of every rule, and the function that evaluates a rule once (recording its trace when asked). */
function compileRules(
  checked: CheckedPolicy,
  meta: readonly RuleMeta[],
  lowering: Lowering,
  coverSlot?: (c: Condition) => number,
): PolicyEvaluators['runRule'] {
  const ast = checked.ast;
  const fns: CondFn[] = [];
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
  const env = {
    targetOf: (ref: Parameters<typeof checked.targets.get>[0]) => checked.targets.get(ref)!,
    runRule,
    outcomeOf: (i: number) => ast.rules[i].outcome,
    lowering,
    referencedIn: (list: ConditionList) => referencedRules(list, checked.targets),
    ...(coverSlot === undefined ? {} : { coverSlot }),
  };
  for (const rule of ast.rules) fns.push(compileList(rule.conditions, env));
  return runRule;
}

/** A policy ready to evaluate any number of times. Immutable and safe to share within a thread. */
export class CompiledPolicy {
  /** Outcome names in text order. */
  readonly outcomes: readonly string[];
  /** Index of the golden rule. */
  readonly golden: number;
  private readonly evaluators: PolicyEvaluators;
  /** Every condition of the policy, rule by rule, depth first in text order: the coverage counters' order. */
  readonly conditions: readonly Condition[];
  /** The closures that count each condition's outcomes, made on the first coverage run that has no generated evaluator. */
  private readonly coverageRules: () => PolicyEvaluators['runRule'];

  /** @internal Use `compile(text)`. */
  constructor(checked: CheckedPolicy, selectorOf: SelectorOf) {
    const ast = checked.ast;
    const meta = ast.rules.map((r) => ({ outcome: r.outcome, label: r.label, selector: selectorOf(r) }));
    const lowering = new Lowering();
    const runRule = compileRules(checked, meta, lowering);
    const generated = generateEvaluator(checked, lowering);
    // Generated on the first traced evaluation, and only where the no-trace one could be (same
    // conditions: code generation allowed, nesting within the cap), so compile costs no more.
    let traced: TracedEvaluator | null | undefined = generated === null ? null : undefined;
    // Likewise the coverage evaluator, on the first coverage run.
    let covered: CoveredEvaluator | null | undefined = generated === null ? null : undefined;
    let reasons: ReasonsProgram | undefined;
    // Likewise the reasons evaluator, on the first run with reasons.
    let generatedReasons: ReasonsEvaluator | null | undefined = generated === null ? null : undefined;
    this.golden = checked.golden;
    this.outcomes = ast.rules.map((r) => r.outcome);
    this.evaluators = {
      outcomes: this.outcomes,
      golden: checked.golden,
      meta,
      needsToday: ast.rules.some((r) => usesToday(r.conditions)),
      generated,
      traced: () => (traced === undefined ? (traced = generateTracedEvaluator(checked, lowering, meta)) : traced),
      runRule,
      covered: () =>
        covered === undefined ? (covered = generateCoveredEvaluator(checked, new Lowering(), (c) => slots.get(c)!)) : covered,
      reasons: () => (reasons ??= compileReasons(checked, lowering)),
      generatedReasons: () =>
        generatedReasons === undefined ? (generatedReasons = generateReasonsEvaluator(checked, lowering)) : generatedReasons,
    };
    const conditions: Condition[] = [];
    const visit = (list: ConditionList): void => {
      for (const c of list.items) {
        conditions.push(c);
        if (c.kind === 'group' || c.kind === 'quantifier') visit(c.body);
      }
    };
    for (const rule of ast.rules) visit(rule.conditions);
    this.conditions = conditions;
    const slots = new Map(conditions.map((c, i) => [c, i * 3]));
    let covering: PolicyEvaluators['runRule'] | undefined;
    this.coverageRules = () => (covering ??= compileRules(checked, meta, new Lowering(), (c) => slots.get(c)!));
  }

  /**
   * Evaluates like {@link evaluate} without a trace, adding each condition's outcomes to `counts`
   * (three per condition of {@link conditions}, in order: true, false, stopped by missing data).
   */
  evaluateCovered(data: unknown, counts: Uint32Array, options?: Omit<EvaluateOptions, 'trace' | 'traceTree'>): EvaluationResult {
    return evaluateCovered(this.evaluators, data, options, { runRule: this.coverageRules, counts });
  }

  /**
   * Evaluates the policy against `data`. Never throws for any data: missing selectors and
   * properties, and an exceeded step budget, come back as `error` + `errorCode` with `result: false`.
   * With a shared `StepBudget` in `options.stepBudget`, its `used` grows by the steps taken.
   */
  evaluate(data: unknown, options?: EvaluateOptions): EvaluationResult {
    return evaluatePolicy(this.evaluators, data, options);
  }
}
