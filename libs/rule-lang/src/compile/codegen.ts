/**
 * The no-trace evaluator of a policy as ONE generated JavaScript function.
 *
 * Why: the closure evaluator (conditions.ts) calls closures made from a handful of function
 * literals. V8 keeps type feedback per function literal, so every comparison of every policy
 * shares one set of inline caches: they go megamorphic and nothing gets inlined. Generated code
 * gives every rule, path step and condition its own site: each rule becomes straight-line
 * statements (inline where it is referenced, or a function `r<i>`; see {@link Generator}), so
 * property reads are monomorphic and the operator tests (captured closures, one per site) can be
 * inlined.
 *
 * Semantics are those of conditions.ts + policy.ts + evaluate/evaluate.ts, statement for
 * statement:
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
 * shares with the traced evaluator (codegen-trace.ts), and codegen-frame.ts the layout of the
 * factory's source that every generated evaluator shares.
 *
 * Coverage (evaluate/policy-coverage.ts): {@link generateEvaluator} given the counters' slots writes a
 * second evaluator, the same statements with each condition in a `try` that adds its outcome to the
 * counters exactly as the coverage closures do (`counted` in conditions.ts): true or false once it
 * finished (after its budget step, so a run stopped by the budget counts nothing for it), and
 * "stopped by missing data" for an EvalFailure other than budget_exceeded passing out of it, once
 * for every enclosing condition it passes (rule functions called from a reference or after an
 * any/all are inside that condition's `try`). Slots are numbers the generator computed, never text.
 *
 * Where code generation from strings is disabled (CSP-like hosts), or the policy is nested too
 * deeply to generate safely, {@link generateEvaluator} returns null and evaluation stays on the
 * closures.
 */

import type { ComparisonCondition, Condition, ConditionList, LabelReference, QuantifierCondition, RuleReference } from '../ast/types.js';
import { referencedRules, type CheckedPolicy } from '../check/check.js';
import { overBudget, sizeCost } from '../evaluate/budget.js';
import { MISSING } from '../evaluate/context.js';
import type { CoveredEvaluator, GeneratedEvaluator } from '../evaluate/evaluate.js';
import { EvalFailure } from '../evaluate/failure.js';
import { measureOf } from '../operators/measure.js';
import { generateFramed, type EvaluatorParts } from './codegen-frame.js';
import { emitLookup } from './codegen-lookup.js';
import {
  combine,
  depthOf,
  literal,
  MAX_DEPTH,
  referenceValue,
  rootOf,
  ruleState,
  sizeCharge,
  STEP,
  type Source,
} from './codegen-source.js';
import { leftMode, operandMode, type Lowering } from './lowering.js';

/**
 * Conditions one generated function takes in before a referenced rule is called instead of
 * written inline (see {@link Generator}): V8 optimises a function as a whole, and gives up on
 * very large ones.
 */
const INLINE_CONDITIONS = 48;

/**
 * Writes the evaluator's source. A rule referenced exactly once is written inline where it is
 * referenced (still guarded by its state, so it runs at most once, exactly where the call would
 * have run it), while the function it lands in stays within {@link INLINE_CONDITIONS} and the
 * nesting cap; every other rule is a function `r<i>`, written once, when first called. Calls
 * between rules were most of what an evaluation cost beyond its comparisons: V8 does not inline
 * that much, and across a call it keeps neither the budget nor the rule states in registers.
 */
class Generator {
  /** References to each rule in the whole policy. */
  private readonly references: number[];
  /** Rules written as functions, and those still to write. */
  private readonly functions = new Set<number>();
  private readonly pending: number[] = [];
  /** Rules referenced inside some any/all. */
  private readonly inQuantifier = new Set<number>();
  /** Conditions written so far in the current function, and the nesting (groups, any/all, inlined rules) at this point. */
  private conditions = 0;
  private depth = 0;
  /** Nesting allowed for inlining: every condition's `try` doubles the blocks of a coverage evaluator. */
  private readonly maxDepth: number;

  constructor(
    private readonly src: Source,
    private readonly checked: CheckedPolicy,
    private readonly lowering: Lowering,
    /** Coverage evaluator only: the first of a condition's three counters in `cov`. */
    private readonly slotOf?: (c: Condition) => number,
  ) {
    this.maxDepth = slotOf === undefined ? MAX_DEPTH : COVERED_MAX_DEPTH;
    this.references = checked.ast.rules.map(() => 0);
    for (const target of checked.targets.values()) this.references[target]++;
    // A rule referenced inside an any/all may also be called after it (see `quantifier`): a function.
    const visit = (list: ConditionList): void => {
      for (const c of list.items) {
        if (c.kind === 'quantifier') for (const t of referencedRules(c.body, checked.targets)) this.inQuantifier.add(t);
        if (c.kind === 'group' || c.kind === 'quantifier') visit(c.body);
      }
    };
    for (const rule of checked.ast.rules) visit(rule.conditions);
  }

  /** Writes the conditions of rule `index` as the body of a new function; returns their combined value. */
  body(index: number): string {
    this.conditions = 0;
    this.depth = 0;
    return this.list(this.checked.ast.rules[index].conditions, null);
  }

  /** The next rule to write as a function, or undefined when all are written. */
  nextFunction(): number | undefined {
    return this.pending.shift();
  }

  /** Emits the conditions of `list` in order; returns an expression of their combined value (as compileList). */
  list(list: ConditionList, its: string | null): string {
    return combine(
      list.items.map((c) => this.condition(c, its)),
      list.ops,
    );
  }

  private condition(c: Condition, its: string | null): string {
    this.conditions++;
    if (this.slotOf === undefined) return this.bare(c, its);
    // As `counted` (conditions.ts): the outcome once the condition finished, or the missing data passing out of it.
    const slot = this.slotOf(c);
    const v = `k${this.src.fresh()}`;
    this.src.line(`let ${v};`);
    this.src.line('try {');
    const value = this.bare(c, its);
    this.src.line(`${v} = ${value};`);
    this.src.line(`} catch (x) { if (x instanceof EvalFailure && x.code !== 'budget_exceeded') cov[${slot + 2}]++; throw x; }`);
    this.src.line(`cov[${v} ? ${slot} : ${slot + 1}]++;`);
    return v;
  }

  private bare(c: Condition, its: string | null): string {
    switch (c.kind) {
      case 'comparison':
        return this.comparison(c, its);
      case 'quantifier':
        return this.quantifier(c, its);
      case 'group': {
        this.depth++;
        const body = this.list(c.body, its);
        this.depth--;
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
    const conditions = this.checked.ast.rules[target].conditions;
    const inline =
      this.references[target] === 1 &&
      !this.inQuantifier.has(target) &&
      this.conditions + conditions.items.length <= INLINE_CONDITIONS &&
      this.depth + 1 + depthOf(conditions) <= this.maxDepth;
    if (!inline) {
      this.callable(target);
      this.src.line(`const ${v} = ${referenceValue(target, `r${target}(d, today)`)};`);
      return v;
    }
    // The call's body in place: the rule's own paths start from the data, never from an `its`.
    const state = ruleState(target);
    this.src.line(`let ${v};`);
    this.src.line(`if (${state} !== 0) ${v} = ${state} === 2;`);
    this.src.line('else {');
    this.depth++;
    const value = this.list(conditions, null);
    this.depth--;
    this.src.line(`${v} = ${value};`);
    this.src.line(`${state} = ${v} ? 2 : 1;`);
    this.src.line('}');
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
    this.depth++;
    const body = this.list(c.body, el);
    this.depth--;
    src.line(`if (${body}) ${matched}++;`);
    src.line(STEP);
    src.line('}');
    src.line(`${v} = ${c.quantifier === 'any' ? `${matched} > 0` : `${matched} === ${arr}.length`};`);
    src.line('}');
    // The rules its body references, evaluated even when no element ran them (§8 step 4).
    for (const target of referencedRules(c.body, this.checked.targets)) {
      this.callable(target);
      src.line(`if (${ruleState(target)} === 0) r${target}(d, today);`);
    }
    return v;
  }

  /** Makes sure rule `target` is written as a function `r<target>`. */
  private callable(target: number): void {
    if (!this.functions.has(target)) {
      this.functions.add(target);
      this.pending.push(target);
    }
  }
}

/** The nesting cap of a coverage evaluator: each condition adds a `try` block around its own. */
const COVERED_MAX_DEPTH = MAX_DEPTH / 2;

/**
 * Generates the evaluator of `checked`, or returns null where code generation is unavailable
 * (CSP) or unsafe (nesting deeper than the cap of codegen-source.ts). Never throws.
 */
export function generateEvaluator(checked: CheckedPolicy, lowering: Lowering): GeneratedEvaluator | null {
  return generate(checked, lowering);
}

/**
 * Generates the coverage evaluator of `checked` (the no-trace evaluator that also counts each
 * condition's outcomes into its last argument, from the slot `slotOf` gives it), or returns null
 * as {@link generateEvaluator} does; its nesting cap is half of that one's. Never throws.
 */
export function generateCoveredEvaluator(
  checked: CheckedPolicy,
  lowering: Lowering,
  slotOf: (c: Condition) => number,
): CoveredEvaluator | null {
  if (checked.ast.rules.some((r) => depthOf(r.conditions) > COVERED_MAX_DEPTH)) return null;
  return generate(checked, lowering, slotOf);
}

function generate<T extends GeneratedEvaluator | CoveredEvaluator>(
  checked: CheckedPolicy,
  lowering: Lowering,
  slotOf?: (c: Condition) => number,
): T | null {
  const write = (src: Source): EvaluatorParts => {
    const gen = new Generator(src, checked, lowering, slotOf);
    const golden = checked.golden;
    const body = src.apart(() => {
      src.line(`const result = ${gen.body(golden)};`);
      src.line(`${ruleState(golden)} = result ? 2 : 1;`);
    });
    // Functions for the rules called rather than inlined; writing one may call for more.
    const functions: string[][] = [];
    let index: number | undefined;
    while ((index = gen.nextFunction()) !== undefined) {
      const i = index;
      functions.push(
        src.apart(() => {
          src.line(`function r${i}(d, today) {`);
          src.line('let w;');
          src.line(`const v = ${gen.body(i)};`);
          src.line(`${ruleState(i)} = v ? 2 : 1;`);
          src.line('return v;');
          src.line('}');
        }),
      );
    }
    return slotOf === undefined
      ? { functions, params: 'd, today, lim, shared', before: ['let w;'], body, returns: 'trace: []' }
      : {
          // The counters of the coverage evaluator's current run (factory scope, as the budget: runs never nest).
          declarations: ['let cov = null;'],
          functions,
          params: 'd, today, lim, shared, counts',
          before: ['cov = counts;', 'let w;'],
          body,
          returns: 'trace: []',
        };
  };
  return generateFramed<T>(checked.ast.rules, write, { MISSING, measureOf, overBudget, sizeCost, EvalFailure });
}
