/**
 * The no-trace evaluator of a policy as ONE generated JavaScript function.
 *
 * Why: the closure evaluator (conditions.ts) calls closures made from a handful of function
 * literals. V8 keeps type feedback per function literal, so every comparison of every policy
 * shares one set of inline caches: they go megamorphic and nothing gets inlined. Generated code
 * gives every rule, path step and condition its own site: each rule becomes a function `r<i>`
 * whose conditions are straight-line statements, so property reads are monomorphic and the
 * operator tests (captured closures, one per site) can be inlined.
 *
 * Semantics are those of conditions.ts + policy.ts (and evaluate/evaluate.ts), statement for statement:
 * - every condition of every list is evaluated, in text order (no short-circuit, §5.4); the
 *   and/or combination happens afterwards on the stored results, with the same value shapes;
 * - a referenced rule is evaluated lazily, depth-first, at most once (`rs<i>`: 0 not yet,
 *   1 false, 2 true); missing data throws the very EvalFailure objects the closures throw;
 * - the step budget (evaluate/budget.ts) is counted at the same points as the closures count it.
 *
 * Safety: no text from the policy or the data reaches the generated source except as
 * `JSON.stringify`'d string literals (JSON keys, outcome names, measure kinds). Everything else
 * (tests, failures, MISSING, measureOf) is passed in as captured variables whose names the
 * generator makes up (`t0`, `f3`, …). codegen-source.ts and codegen-lookup.ts hold what this
 * shares with the traced evaluator (codegen-trace.ts).
 *
 * Where code generation from strings is disabled (CSP-like hosts), or the policy is nested too
 * deeply to generate safely, {@link generateEvaluator} returns null and evaluation stays on the
 * closures.
 */

import type { ComparisonCondition, Condition, ConditionList, LabelReference, QuantifierCondition, RuleReference } from '../ast/types.js';
import type { CheckedPolicy } from '../check/check.js';
import { overBudget, sizeCost } from '../evaluate/budget.js';
import { emitLookup } from './codegen-lookup.js';
import {
  BUDGET_END,
  BUDGET_START,
  BUDGET_STATE,
  combine,
  declareStates,
  instantiate,
  literal,
  outcomesObject,
  referenceValue,
  resetStates,
  rootOf,
  ruleState,
  sizeCharge,
  Source,
  STEP,
  tooDeep,
} from './codegen-source.js';
import { MISSING } from '../evaluate/context.js';
import type { GeneratedEvaluator } from '../evaluate/evaluate.js';
import { leftMode, operandMode, type Lowering } from './lowering.js';
import { measureOf } from '../operators/measure.js';

class Generator {
  constructor(
    private readonly src: Source,
    private readonly checked: CheckedPolicy,
    private readonly lowering: Lowering,
  ) {}

  /** Emits the conditions of `list` in order; returns an expression of their combined value (as compileList). */
  list(list: ConditionList, its: string | null): string {
    return combine(
      list.items.map((c) => this.condition(c, its)),
      list.ops,
    );
  }

  private condition(c: Condition, its: string | null): string {
    switch (c.kind) {
      case 'comparison':
        return this.comparison(c, its);
      case 'quantifier':
        return this.quantifier(c, its);
      case 'group': {
        const body = this.list(c.body, its);
        const v = `c${this.src.fresh()}`;
        this.src.line(`const ${v} = ${body};`);
        return v;
      }
      case 'labelRef':
      case 'ruleRef':
        return this.reference(c);
    }
  }

  private reference(ref: LabelReference | RuleReference): string {
    const target = this.checked.targets.get(ref);
    if (target === undefined) throw new Error('INVARIANT: references are resolved by the checker');
    const v = `c${this.src.fresh()}`;
    this.src.line(`const ${v} = ${referenceValue(target, `r${target}(d, today)`)};`);
    return v;
  }

  private comparison(c: ComparisonCondition, its: string | null): string {
    const src = this.src;
    const k = src.fresh();
    const v = `c${k}`;
    const l = `l${k}`;
    const r = `r${k}`;
    const block = `C${k}`;
    const mode = leftMode(c);
    const left = this.lowering.plan(c.left, mode);
    const test = src.capture('t', this.lowering.test(c));
    src.line(`let ${v};`);
    src.line(`${block}: {`);
    emitLookup(src, left, rootOf(left, its), l);
    if (c.optional) src.line(`if (${l} === MISSING || ${l} === null) { ${v} = true; break ${block}; }`);
    let right = 'undefined';
    if (c.right?.kind === 'path') {
      const plan = this.lowering.plan(c.right.path, operandMode(c.optional));
      emitLookup(src, plan, rootOf(plan, its), r);
      if (c.optional) src.line(`if (${r} === MISSING || ${r} === null) { ${v} = true; break ${block}; }`);
      right = r;
    }
    if (c.measure) src.line(`${l} = measureOf(${literal(c.measure)}, ${l});`);
    src.line(sizeCharge(l, right));
    // Only `is empty` (mode 'empty') reaches the test with an absent property; it sees undefined.
    const arg = mode === 'strict' ? l : `(${l} === MISSING ? undefined : ${l})`;
    src.line(`${v} = ${c.op.negated ? '!' : ''}${test}(${arg}, ${right}, today);`);
    src.line('}');
    src.line(STEP);
    return v;
  }

  private quantifier(c: QuantifierCondition, its: string | null): string {
    const src = this.src;
    const k = src.fresh();
    const v = `c${k}`;
    const arr = `a${k}`;
    const i = `i${k}`;
    const el = `e${k}`;
    const matched = `m${k}`;
    const block = `Q${k}`;
    const plan = this.lowering.plan(c.path, operandMode(c.optional));
    src.line(`let ${v};`);
    src.line(`${block}: {`);
    emitLookup(src, plan, rootOf(plan, its), arr);
    if (c.optional) src.line(`if (${arr} === MISSING || ${arr} === null) { ${v} = true; break ${block}; }`);
    src.line(`if (!Array.isArray(${arr})) { ${v} = false; break ${block}; }`);
    src.line(`let ${matched} = 0;`);
    src.line(`for (let ${i} = 0; ${i} < ${arr}.length; ${i}++) {`);
    src.line(`const ${el} = ${arr}[${i}];`);
    const body = this.list(c.body, el);
    src.line(`if (${body}) ${matched}++;`);
    src.line(STEP);
    src.line('}');
    src.line(`${v} = ${c.quantifier === 'any' ? `${matched} > 0` : `${matched} === ${arr}.length`};`);
    src.line('}');
    return v;
  }
}

/**
 * Generates the evaluator of `checked`, or returns null where code generation is unavailable
 * (CSP) or unsafe (nesting deeper than the cap of codegen-source.ts). Never throws.
 */
export function generateEvaluator(checked: CheckedPolicy, lowering: Lowering): GeneratedEvaluator | null {
  const rules = checked.ast.rules;
  if (tooDeep(rules)) return null;
  try {
    const src = new Source();
    const gen = new Generator(src, checked, lowering);
    src.line(BUDGET_STATE);
    src.line(declareStates(rules.length));
    rules.forEach((rule, index) => {
      src.line(`function r${index}(d, today) {`);
      src.line('let w;');
      const value = gen.list(rule.conditions, null);
      src.line(`const v = ${value};`);
      src.line(`${ruleState(index)} = v ? 2 : 1;`);
      src.line('return v;');
      src.line('}');
    });
    src.line('return function evaluate(d, today, lim, shared) {');
    src.line(BUDGET_START);
    src.line(resetStates(rules.length));
    src.line(`const result = r${checked.golden}(d, today);`);
    src.line(`return { result, outcomes: ${outcomesObject(rules.map((r) => r.outcome))}, trace: [] };`);
    src.line(BUDGET_END);
    src.line('};');
    return instantiate<GeneratedEvaluator>(src, { MISSING, measureOf, overBudget, sizeCost });
  } catch {
    // EvalError under a CSP, or anything unexpected: the closures remain correct.
    return null;
  }
}
