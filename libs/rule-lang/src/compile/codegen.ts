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
 * Semantics are those of conditions.ts + policy.ts, statement for statement:
 * - every condition of every list is evaluated, in text order (no short-circuit, §5.4); the
 *   and/or combination happens afterwards on the stored results, with the same value shapes;
 * - a referenced rule is evaluated lazily, depth-first, at most once (`st[i]`: 0 not yet,
 *   1 false, 2 true); missing data throws the very EvalFailure objects the closures throw.
 *
 * Safety: no text from the policy or the data reaches the generated source except as
 * `JSON.stringify`'d string literals (JSON keys, outcome names, measure kinds). Everything else
 * (tests, failures, MISSING, measureOf) is passed in as captured variables whose names the
 * generator makes up (`t0`, `f3`, …).
 *
 * Where code generation from strings is disabled (CSP-like hosts), or the policy is nested too
 * deeply to generate safely, {@link generateEvaluator} returns null and evaluation stays on the
 * closures.
 */

import type { EvaluationResult } from '../api-types.js';
import type { ComparisonCondition, Condition, ConditionList, LabelReference, QuantifierCondition, RuleReference } from '../ast/types.js';
import type { CheckedPolicy } from '../check/check.js';
import { MISSING } from './context.js';
import { leftMode, operandMode, type Lowering } from './lowering.js';
import type { PathPlan } from './paths.js';
import { measureOf } from './tests.js';

/** The generated evaluator: data and today's day number (NaN when unused) → the success result; throws EvalFailure. */
export type GeneratedEvaluator = (data: unknown, today: number) => EvaluationResult;

/**
 * Nesting (groups and any/all) beyond which no code is generated. V8 parses and compiles nested
 * blocks recursively, lazily at the first call; a cap keeps that far from the stack limit, so the
 * generated function can never fail where the closures would not.
 */
const MAX_DEPTH = 64;

function depthOf(list: ConditionList): number {
  let max = 0;
  for (const c of list.items) {
    if (c.kind === 'group' || c.kind === 'quantifier') max = Math.max(max, 1 + depthOf(c.body));
  }
  return max;
}

/** Source being generated, plus the values it captures. */
class Source {
  readonly lines: string[] = [];
  readonly names: string[] = [];
  readonly values: unknown[] = [];
  private counter = 0;

  /** Passes `value` into the generated code; returns the (generated) identifier it is known by. */
  capture(prefix: string, value: unknown): string {
    const name = `${prefix}${this.names.length}`;
    this.names.push(name);
    this.values.push(value);
    return name;
  }

  /** A fresh number for local identifiers. */
  fresh(): number {
    return this.counter++;
  }

  line(text: string): void {
    this.lines.push(text);
  }
}

/** A JS string literal for `s`. INVARIANT: the only way policy or data text enters the source. */
function literal(s: string): string {
  return JSON.stringify(s);
}

class Generator {
  constructor(
    private readonly src: Source,
    private readonly checked: CheckedPolicy,
    private readonly lowering: Lowering,
  ) {}

  /**
   * Emits the lookup of `plan` from `root` into a new `let v`: the value, MISSING (lenient steps)
   * or a throw of the step's EvalFailure. Same checks as stepGetter in paths.ts, step for step.
   */
  private lookup(plan: PathPlan, root: string, v: string): void {
    const src = this.src;
    src.line(`let ${v} = ${root};`);
    if (plan.steps.length === 0) return;
    const block = `P_${v}`;
    src.line(`${block}: {`);
    for (const step of plan.steps) {
      const fail = step.lenient ? `{ ${v} = MISSING; break ${block}; }` : `throw ${src.capture('f', step.failure)};`;
      const keys = step.keys.map(literal);
      if (step.checked) {
        // Prototype-like or index-like key: own keys of non-array objects only.
        src.line(`if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v})) ${fail}`);
        src.line(`${keys.map((k) => `if (Object.hasOwn(${v}, ${k})) ${v} = ${v}[${k}];`).join(' else ')} else ${fail}`);
        src.line(`if (${v} === undefined) ${fail}`);
      } else {
        src.line(`if (typeof ${v} !== 'object' || ${v} === null) ${fail}`);
        src.line(`if (${keys.map((k) => `(w = ${v}[${k}]) === undefined`).join(' && ')}) ${fail}`);
        src.line(`${v} = w;`);
      }
    }
    src.line('}');
  }

  private rootOf(plan: PathPlan, its: string | null): string {
    if (!plan.fromIts) return 'd';
    // INVARIANT: the checker accepts `its` only inside any/all, where `its` is bound.
    if (its === null) throw new Error('INVARIANT: `its` outside any/all');
    return its;
  }

  /** Emits the conditions of `list` in order; returns an expression of their combined value (as compileList). */
  list(list: ConditionList, its: string | null): string {
    const vars = list.items.map((c) => this.condition(c, its));
    if (vars.length === 1) return vars[0]!;
    const runs: string[][] = [[vars[0]!]];
    list.ops.forEach((op, i) => {
      if (op === 'or') runs.push([vars[i + 1]!]);
      else runs[runs.length - 1]!.push(vars[i + 1]!);
    });
    if (runs.length === 1) {
      // compileList: two conditions give `x && y` (a value), more give a boolean.
      return runs[0]!.length === 2 ? `(${runs[0]!.join(' && ')})` : `!!(${runs[0]!.join(' && ')})`;
    }
    return `!!(${runs.map((r) => `(${r.join(' && ')})`).join(' || ')})`;
  }

  private condition(c: Condition, its: string | null): string {
    switch (c.kind) {
      case 'comparison': return this.comparison(c, its);
      case 'quantifier': return this.quantifier(c, its);
      case 'group': {
        const body = this.list(c.body, its);
        const v = `c${this.src.fresh()}`;
        this.src.line(`const ${v} = ${body};`);
        return v;
      }
      case 'labelRef':
      case 'ruleRef': return this.reference(c);
    }
  }

  private reference(ref: LabelReference | RuleReference): string {
    const target = this.checked.targets.get(ref);
    if (target === undefined) throw new Error('INVARIANT: references are resolved by the checker');
    const v = `c${this.src.fresh()}`;
    this.src.line(`const ${v} = st[${target}] !== 0 ? st[${target}] === 2 : r${target}(d, st, today);`);
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
    this.lookup(left, this.rootOf(left, its), l);
    if (c.optional) src.line(`if (${l} === MISSING || ${l} === null) { ${v} = true; break ${block}; }`);
    let right = 'undefined';
    if (c.right?.kind === 'path') {
      const plan = this.lowering.plan(c.right.path, operandMode(c.optional));
      this.lookup(plan, this.rootOf(plan, its), r);
      if (c.optional) src.line(`if (${r} === MISSING || ${r} === null) { ${v} = true; break ${block}; }`);
      right = r;
    }
    if (c.measure) src.line(`${l} = measureOf(${literal(c.measure)}, ${l});`);
    // Only `is empty` (mode 'empty') reaches the test with an absent property; it sees undefined.
    const arg = mode === 'strict' ? l : `(${l} === MISSING ? undefined : ${l})`;
    src.line(`${v} = ${c.op.negated ? '!' : ''}${test}(${arg}, ${right}, today);`);
    src.line('}');
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
    this.lookup(plan, this.rootOf(plan, its), arr);
    if (c.optional) src.line(`if (${arr} === MISSING || ${arr} === null) { ${v} = true; break ${block}; }`);
    src.line(`if (!Array.isArray(${arr})) { ${v} = false; break ${block}; }`);
    src.line(`let ${matched} = 0;`);
    src.line(`for (let ${i} = 0; ${i} < ${arr}.length; ${i}++) {`);
    src.line(`const ${el} = ${arr}[${i}];`);
    const body = this.list(c.body, el);
    src.line(`if (${body}) ${matched}++;`);
    src.line('}');
    src.line(`${v} = ${c.quantifier === 'any' ? `${matched} > 0` : `${matched} === ${arr}.length`};`);
    src.line('}');
    return v;
  }
}

/**
 * Generates the evaluator of `checked`, or returns null where code generation is unavailable
 * (CSP) or unsafe (nesting deeper than {@link MAX_DEPTH}). Never throws.
 */
export function generateEvaluator(checked: CheckedPolicy, lowering: Lowering): GeneratedEvaluator | null {
  const rules = checked.ast.rules;
  if (rules.some((r) => depthOf(r.conditions) > MAX_DEPTH)) return null;
  try {
    const src = new Source();
    const gen = new Generator(src, checked, lowering);
    rules.forEach((rule, index) => {
      src.line(`function r${index}(d, st, today) {`);
      src.line('let w;');
      const value = gen.list(rule.conditions, null);
      src.line(`const v = ${value};`);
      src.line(`st[${index}] = v ? 2 : 1;`);
      src.line('return v;');
      src.line('}');
    });
    // Outcomes: an object literal (one allocation, keys in text order) unless a name would set the
    // prototype in a literal; then assignments, as policy.ts does (where `__proto__` is a setter).
    const names = rules.map((r) => r.outcome);
    const outcomes = names.includes('__proto__')
      ? `(() => { const o = {}; ${names.map((n, i) => `o[${literal(n)}] = st[${i}] === 2;`).join(' ')} return o; })()`
      : `{ ${names.map((n, i) => `${literal(n)}: st[${i}] === 2`).join(', ')} }`;
    src.line('return function evaluate(d, today) {');
    src.line(`const st = [${names.map(() => '0').join(', ')}];`);
    src.line(`const result = r${checked.golden}(d, st, today);`);
    src.line(`return { result, outcomes: ${outcomes}, trace: [] };`);
    src.line('};');
    // Captured values arrive in one array (a policy may capture more values than a function may have parameters).
    const unpack = src.names.map((name, i) => `const ${name} = K[${i}];`).join('\n');
    const factory = new Function('MISSING', 'measureOf', 'K', `'use strict';\n${unpack}\n${src.lines.join('\n')}`) as (
      missing: typeof MISSING,
      measure: typeof measureOf,
      captured: readonly unknown[],
    ) => GeneratedEvaluator;
    return factory(MISSING, measureOf, src.values);
  } catch {
    // EvalError under a CSP, or anything unexpected: the closures remain correct.
    return null;
  }
}
