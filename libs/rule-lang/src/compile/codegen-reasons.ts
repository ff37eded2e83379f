/**
 * The reasons evaluator of a policy (LANGUAGE.md §10.4) as generated JavaScript: the reasons
 * closures (reasons/compile-reasons.ts) give the answer; this gives the same answer, byte for
 * byte, at a fraction of the cost.
 *
 * How: the evaluation is the no-trace evaluator's (codegen.ts: the same statements, lookups, tests
 * and budget steps, every rule a function `r<i>`), and each condition only records its outcome in
 * variables of the factory's scope (evaluations never nest): a comparison its state and the value
 * it tested, a path with several candidate keys which ones it used (two bits a step, as
 * reasons/reason-paths.ts counts them), an any/all its state, its length and the element that
 * decided. Nothing is written while the conditions run. Once the golden rule has its value, the
 * entries are built from those records by generated builders (`L<n>`: one per condition list,
 * `R<i>`: a rule's entries, built once, when first asked for), object literals whose constant
 * parts (outcome, text, line, column, the words of the sentence) were cut from the policy text
 * when the code was generated; each builder also returns its part of the sentence. Only the
 * entries the answer keeps are ever built (an `or` that holds builds its holding run only).
 *
 * The records that may hold data (values tested, entries, words) are cleared when a run ends, however
 * it ends: a compiled policy is kept for many runs, and no run's data may outlive it.
 *
 * An any/all's body runs once per element and its records are overwritten by the next: the
 * entries of the element that decided are built when it decides (`qe<n>`, `qp<n>`), as the
 * closures keep them. Its paths start from the element's data path, written from the indices of
 * the enclosing any/alls (`x<n>`) when an entry is built.
 *
 * An evaluation stopped by missing data or the step budget throws its EvalFailure, and the caller
 * (evaluate/evaluate.ts) runs the closures instead: their failure entry wraps the references and
 * elements that led to it, a rare case not worth generating. Where code generation is unavailable
 * or the policy nests too deeply (as for the other generated evaluators), there is no generated
 * reasons evaluator and the closures serve.
 *
 * Safety: as codegen-source.ts: policy text and keys enter the source only as `literal`s; tests,
 * failures and path writers are captured values.
 */

import type {
  ComparisonCondition,
  Condition,
  ConditionList,
  LabelReference,
  QuantifierCondition,
  RuleReference,
  Span,
} from '../ast/types.js';
import { referencedRules, type CheckedPolicy } from '../check/check.js';
import { overBudget, sizeCost } from '../evaluate/budget.js';
import { MISSING } from '../evaluate/context.js';
import type { ReasonsEvaluator } from '../evaluate/evaluate.js';
import { EvalFailure } from '../evaluate/failure.js';
import { measureOf } from '../operators/measure.js';
import { oppositePhrase } from '../operators/index.js';
import { plainWords, sourceReader } from '../reasons/compile-reasons.js';
import { fixedVariant, reasonPathText, variantBits } from '../reasons/reason-paths.js';
import { json, plainString } from '../trace/text.js';
import { generateFramed, type EvaluatorParts } from './codegen-frame.js';
import { combine, literal, referenceValue, rootOf, ruleState, sizeCharge, STEP, type Source } from './codegen-source.js';
import { leftMode, operandMode, type Lowering } from './lowering.js';
import type { PathPlan } from './paths.js';

/** The innermost any/all around a condition: its element's variable, and the code of the element's data path. */
interface Scope {
  its: string;
  path: string;
}

/**
 * A condition as written: the expression of its value (evaluation code), the expression of that
 * value in a builder (from the records), and the builder statements that push its entries to
 * `out` and leave its words in `p`.
 */
interface Site {
  value: string;
  holds: string;
  emit: string;
}

/** `n element(s)`, as the sentence counts them. */
function elements(n: number): string {
  return n === 1 ? '1 element' : `${n} elements`;
}

class ReasonsGenerator {
  /** Factory-scope variables: the records, reset by nothing (each is written before it is read). */
  readonly records: string[] = [];
  /** The records that may hold data (values, entries, words): cleared when a run ends, so that no data outlives its run. */
  readonly held: string[] = [];
  /** Builder functions, written apart. */
  readonly builders: string[][] = [];
  private readonly text: (span: Span) => string;
  /** The outcome of the rule being written. */
  private rule = '';

  constructor(
    private readonly src: Source,
    private readonly checked: CheckedPolicy,
    private readonly lowering: Lowering,
  ) {
    this.text = sourceReader(checked.ast.source);
  }

  /** Writes rule `index` as `function r<i>(d, today)` (evaluation) and `function R<i>()` (its entries, once). */
  writeRule(index: number): string[] {
    const rule = this.checked.ast.rules[index];
    this.rule = rule.outcome;
    return this.src.apart(() => {
      this.src.line(`function r${index}(d, today) {`);
      this.src.line('let w;');
      const { value, builder } = this.list(rule.conditions, null);
      this.src.line(`const v = ${value};`);
      this.src.line(`${ruleState(index)} = v ? 2 : 1;`);
      this.src.line('return v;');
      this.src.line('}');
      this.src.line(
        `function R${index}() { if (E${index} === null) { E${index} = []; H${index} = ${builder}(E${index}); } return E${index}; }`,
      );
    });
  }

  private record(name: string, init: string): string {
    this.records.push(`${name} = ${init}`);
    if (init === 'undefined' || init === 'null' || init === '""') this.held.push(`${name} = ${init};`);
    return name;
  }

  /** Emits the conditions of `list` in order; returns their combined value and the name of the list's builder. */
  list(list: ConditionList, scope: Scope | null): { value: string; builder: string } {
    const sites = list.items.map((c) => this.condition(c, scope));
    return {
      value: combine(
        sites.map((s) => s.value),
        list.ops,
      ),
      builder: this.listBuilder(sites, list.ops),
    };
  }

  /**
   * `L<n>(out)`: the entries of a list, as compileList (compile-reasons.ts) keeps them: an `and`
   * that holds, every operand; else the first run of `and`s that holds; none holding, every operand
   * that fails. Returns their words joined by ` and `.
   */
  private listBuilder(sites: readonly Site[], ops: readonly string[]): string {
    const name = `L${this.src.fresh()}`;
    const lines = this.src.apart(() => {
      const src = this.src;
      src.line(`function ${name}(out) {`);
      src.line('let p;');
      if (sites.length === 1) {
        src.line(sites[0].emit);
        src.line('return p;');
        src.line('}');
        return;
      }
      src.line('let s = "";');
      src.line(`const ${sites.map((s, i) => `h${i} = ${s.holds}`).join(', ')};`);
      const keep = (i: number): string => `${sites[i].emit} s = s === "" ? p : s + " and " + p;`;
      const runs: number[][] = [[0]];
      ops.forEach((op, i) => {
        if (op === 'or') runs.push([i + 1]);
        else runs[runs.length - 1].push(i + 1);
      });
      runs.forEach((run, r) => {
        src.line(`${r === 0 ? '' : 'else '}if (${run.map((i) => `h${i}`).join(' && ')}) {`);
        for (const i of run) src.line(keep(i));
        src.line('}');
      });
      src.line('else {');
      sites.forEach((_, i) => src.line(`if (!h${i}) { ${keep(i)} }`));
      src.line('}');
      src.line('return s;');
      src.line('}');
    });
    this.builders.push(lines);
    return name;
  }

  private condition(c: Condition, scope: Scope | null): Site {
    switch (c.kind) {
      case 'comparison':
        return this.comparison(c, scope);
      case 'quantifier':
        return this.quantifier(c, scope);
      case 'group': {
        const k = this.src.fresh();
        const g = this.record(`g${k}`, 'false');
        const { value, builder } = this.list(c.body, scope);
        const v = `c${k}`;
        this.src.line(`const ${v} = ${value};`);
        this.src.line(`${g} = ${v};`);
        return { value: v, holds: g, emit: `p = ${builder}(out);` };
      }
      case 'labelRef':
      case 'ruleRef':
        return this.reference(c);
    }
  }

  private reference(ref: LabelReference | RuleReference): Site {
    const target = this.checked.targets.get(ref);
    if (target === undefined) throw new Error('INVARIANT: references are resolved by the checker');
    const v = `c${this.src.fresh()}`;
    this.src.line(`const ${v} = ${referenceValue(target, `r${target}(d, today)`)};`);
    const state = ruleState(target);
    const outcome = this.checked.ast.rules[target].outcome;
    const { line, column } = ref.span;
    const head = `{ kind: "rule", rule: ${literal(this.rule)}, text: ${literal(this.text(ref.span))}, holds: ${state} === 2, line: ${line}, column: ${column}, because: b }`;
    const emit =
      `{ const b = R${target}(); out.push(${head}); ` +
      `p = b.length === 0 ? (${state} === 2 ? ${literal(`${outcome} is true`)} : ${literal(`${outcome} is false`)}) : ` +
      `(${state} === 2 ? ${literal(`${outcome} is true (because `)} : ${literal(`${outcome} is false (because `)}) + H${target} + ")"; }`;
    return { value: v, holds: `${state} === 2`, emit };
  }

  /**
   * The code of the data path of the last lookup of `plan` (its variant in `u`, null when always
   * 0), in a builder, as reasonPath's `path` gives it.
   */
  private pathCode(plan: PathPlan, scope: Scope | null, u: string | null): string {
    const text = reasonPathText(plan);
    if (u === null) {
      return plan.fromIts ? `${scope!.path} + ${literal(text(0, ''))}` : literal(text(0, ''));
    }
    // The first candidates, the usual variant, as constant text.
    const writer = this.src.capture('pt', text);
    return plan.fromIts
      ? `(${u} === 0 ? ${scope!.path} + ${literal(text(0, ''))} : ${writer}(${u}, ${scope!.path}))`
      : `(${u} === 0 ? ${literal(text(0, ''))} : ${writer}(${u}, ""))`;
  }

  /**
   * Emits the lookup of `plan` from `root` into a new `let v` (the value, MISSING, or a throw of
   * the step's EvalFailure), as emitLookup (codegen-lookup.ts) does, recording in `u` (unless
   * null) the candidate each step used, or -1 when a lenient step found nothing.
   */
  private lookup(plan: PathPlan, root: string, v: string, u: string | null): void {
    const src = this.src;
    src.line(`let ${v} = ${root};`);
    const steps = plan.steps;
    if (steps.length === 0) return;
    if (u !== null) src.line(`${u} = 0;`);
    const block = `P_${v}`;
    src.line(`${block}: {`);
    steps.forEach((step, index) => {
      const failure = step.lenient ? null : src.capture('f', step.failure);
      const fail = failure === null ? `{ ${v} = MISSING;${u === null ? '' : ` ${u} = -1;`} break ${block}; }` : `throw ${failure};`;
      const keys = step.keys.map(literal);
      const bits = (j: number): string => {
        const b = variantBits(steps.length, index, j);
        return u === null || b === 0 ? '' : ` ${u} |= ${b};`;
      };
      if (step.checked) {
        src.line(`if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v})) ${fail}`);
        src.line(`${keys.map((k, j) => `if (Object.hasOwn(${v}, ${k})) { ${v} = ${v}[${k}];${bits(j)} }`).join(' else ')} else ${fail}`);
        src.line(`if (${v} === undefined) ${fail}`);
      } else {
        src.line(`if (typeof ${v} !== 'object' || ${v} === null) ${fail}`);
        const tries = keys.map((k, j) => `if ((w = ${v}[${k}]) !== undefined) {${bits(j)} }`).join(' else ');
        src.line(`${tries} else ${fail}`);
        src.line(`${v} = w;`);
      }
    });
    src.line('}');
  }

  private comparison(c: ComparisonCondition, scope: Scope | null): Site {
    const src = this.src;
    const k = src.fresh();
    const v = `c${k}`;
    const l = `l${k}`;
    const r = `y${k}`;
    const block = `C${k}`;
    const o = this.record(`o${k}`, '0');
    const value = this.record(`v${k}`, 'undefined');
    const mode = leftMode(c);
    const left = this.lowering.plan(c.left, mode);
    const u = fixedVariant(left) ? null : this.record(`u${k}`, '0');
    const test = src.capture('t', this.lowering.test(c));
    src.line(`let ${v};`);
    src.line(`${block}: {`);
    this.lookup(left, rootOf(left, scope?.its ?? null), l, u);
    if (c.optional) src.line(`if (${l} === MISSING || ${l} === null) { ${v} = true; ${o} = 3; break ${block}; }`);
    let right = 'undefined';
    if (c.right?.kind === 'path') {
      const plan = this.lowering.plan(c.right.path, operandMode(c.optional));
      this.lookup(plan, rootOf(plan, scope?.its ?? null), r, null);
      if (c.optional) src.line(`if (${r} === MISSING || ${r} === null) { ${v} = true; ${o} = 3; break ${block}; }`);
      right = r;
    }
    if (c.measure) src.line(`${l} = measureOf(${literal(c.measure)}, ${l});`);
    src.line(sizeCharge(l, right));
    const arg = mode === 'strict' ? l : `(${l} === MISSING ? undefined : ${l})`;
    src.line(`${v} = ${c.op.negated ? '!' : ''}${test}(${arg}, ${right}, today);`);
    src.line(`${o} = ${v} ? 2 : 1; ${value} = ${l};`);
    src.line('}');
    src.line(STEP);

    // The entry and its words (compileComparison and sentence.ts), the constant parts cut now.
    const text = this.text(c.span);
    const { line, column } = c.span;
    const subject = plainWords(this.text({ ...c.span, length: c.op.span.offset - c.span.offset }));
    const asWritten = plainWords(this.text(c.op.span));
    const opposite = oppositePhrase(c.op.name, c.op.written, c.op.negated);
    const operand = c.right === null ? '' : ` ${plainWords(this.text(c.right.span))}`;
    const path = this.pathCode(left, scope, u);
    const head = `kind: "condition", rule: ${literal(this.rule)}, text: ${literal(text)}`;
    const at = `line: ${line}, column: ${column}`;
    const emit =
      `if (${o} === 3) { out.push({ ${head}, holds: true, path: ${path}, ${at} }); p = ${literal(`${subject} is absent, and the condition is optional`)}; } ` +
      `else { const x = ${value} === MISSING || (typeof ${value} === 'number' && ${value} !== ${value}) ? null : ${value}; const h = ${o} === 2; ` +
      `out.push({ ${head}, holds: h, path: ${path}, value: x, ${at} }); ` +
      // A plain string goes between quotes that are part of the literals, a finite number as `+`
      // writes it: json's text either way (trace/text.ts), without the call. json writes the rest.
      `p = typeof x === 'string' && plainString(x) ? ${literal(`${subject} ("`)} + x + (h ? ${literal(`") ${asWritten}${operand}`)} : ${literal(`") ${opposite}${operand}`)}) : ` +
      `${literal(`${subject} (`)} + (typeof x === 'number' && x - x === 0 ? x : json(x)) + (h ? ${literal(`) ${asWritten}${operand}`)} : ${literal(`) ${opposite}${operand}`)}); }`;
    return { value: v, holds: `${o} !== 1`, emit };
  }

  private quantifier(c: QuantifierCondition, scope: Scope | null): Site {
    const src = this.src;
    const k = src.fresh();
    const v = `c${k}`;
    const arr = `a${k}`;
    const i = `i${k}`;
    const el = `e${k}`;
    const matched = `m${k}`;
    const block = `Q${k}`;
    const body = `b${k}`;
    const isAny = c.quantifier === 'any';
    // State: 1 false, 2 true (a list), 3 absent and optional, 4 not a list.
    const o = this.record(`o${k}`, '0');
    const value = this.record(`v${k}`, 'undefined');
    const count = this.record(`n${k}`, '0');
    const index = this.record(`x${k}`, '0');
    const decided = this.record(`d${k}`, '-1');
    const decidedBy = this.record(`qe${k}`, 'null');
    const decidedWords = this.record(`qp${k}`, '""');
    const plan = this.lowering.plan(c.path, operandMode(c.optional));
    const u = fixedVariant(plan) ? null : this.record(`u${k}`, '0');
    const path = this.pathCode(plan, scope, u);
    src.line(`let ${v};`);
    src.line(`${block}: {`);
    this.lookup(plan, rootOf(plan, scope?.its ?? null), arr, u);
    if (c.optional) src.line(`if (${arr} === MISSING || ${arr} === null) { ${v} = true; ${o} = 3; break ${block}; }`);
    src.line(`if (!Array.isArray(${arr})) { ${v} = false; ${o} = 4; ${value} = ${arr}; break ${block}; }`);
    src.line(`let ${matched} = 0;`);
    src.line(`${decided} = -1;`);
    src.line(`for (let ${i} = 0; ${i} < ${arr}.length; ${i}++) {`);
    src.line(`${index} = ${i};`);
    src.line(`const ${el} = ${arr}[${i}];`);
    // The element's data path, as the closures' `${at}[${i}]`, written only when an entry is built.
    const inner = this.list(c.body, { its: el, path: `${path} + "[" + ${index} + "]"` });
    src.line(`const ${body} = ${inner.value};`);
    src.line(`if (${body}) ${matched}++;`);
    src.line(
      `if (${decided} < 0 && ${body} === ${isAny}) { ${decided} = ${i}; ${decidedBy} = []; ${decidedWords} = ${inner.builder}(${decidedBy}); }`,
    );
    src.line(STEP);
    src.line('}');
    src.line(`${v} = ${isAny ? `${matched} > 0` : `${matched} === ${arr}.length`};`);
    src.line(`${o} = ${v} ? 2 : 1; ${count} = ${arr}.length;`);
    src.line('}');
    // The rules its body references, evaluated even when no element ran them (§8 step 4).
    for (const target of referencedRules(c.body, this.checked.targets)) src.line(`if (${ruleState(target)} === 0) r${target}(d, today);`);

    const kind = c.quantifier;
    const array = plainWords(this.text(c.path.span));
    const head = `kind: ${literal(kind)}, rule: ${literal(this.rule)}, text: ${literal(this.text(c.span))}`;
    const at = `line: ${c.span.line}, column: ${c.span.column}`;
    const emit =
      `if (${o} === 3) { out.push({ ${head}, holds: true, path: ${path}, ${at} }); p = ${literal(`${array} is absent, and the condition is optional`)}; } ` +
      `else if (${o} === 4) { out.push({ ${head}, holds: false, path: ${path}, value: ${value}, ${at} }); p = ${literal(`${array} (`)} + json(${value}) + ") is not a list"; } ` +
      `else if (${decided} >= 0) { const h = ${o} === 2; out.push({ ${head}, holds: h, path: ${path}, element: ${decided}, ${at}, because: ${decidedBy} }); ` +
      `p = "element " + ${decided} + ${literal(` of ${array} `)} + (${isAny ? '"satisfies"' : 'h ? "satisfies" : "does not satisfy"'}) + " it" + (${decidedBy}.length === 0 ? "" : " (" + ${decidedWords} + ")"); } ` +
      `else { const h = ${o} === 2; out.push({ ${head}, holds: h, path: ${path}, count: ${count}, ${at} }); ` +
      `p = h ? "all " + elements(${count}) + ${literal(` of ${array} satisfy it`)} : "none of the " + elements(${count}) + ${literal(` of ${array} satisfies it`)}; }`;
    return { value: v, holds: `(${o} === 2 || ${o} === 3)`, emit };
  }
}

/**
 * Generates the reasons evaluator of `checked`, or returns null where code generation is
 * unavailable (CSP) or unsafe (nesting deeper than the cap of codegen-source.ts). Never throws.
 */
export function generateReasonsEvaluator(checked: CheckedPolicy, lowering: Lowering): ReasonsEvaluator | null {
  const rules = checked.ast.rules;
  const write = (src: Source): EvaluatorParts => {
    const gen = new ReasonsGenerator(src, checked, lowering);
    const functions = rules.map((_, i) => gen.writeRule(i));
    const golden = checked.golden;
    const outcome = rules[golden].outcome;
    // The entries and words of each rule, once built, and the records: `var`, so that the
    // functions reading them need no check for use before initialisation (a `let` would).
    const declarations = [`var ${rules.map((_, i) => `E${i} = null, H${i} = ""`).join(', ')};`];
    if (gen.records.length > 0) declarations.push(`var ${gen.records.join(', ')};`);
    const head = `(result ? ${literal(`${outcome} is true`)} : ${literal(`${outcome} is false`)})`;
    return {
      declarations,
      functions: [...functions, ...gen.builders],
      params: 'd, today, lim, shared',
      before: ['try {'],
      body: [
        rules.map((_, i) => `E${i} = null;`).join(' '),
        `const result = r${golden}(d, today);`,
        `const because = R${golden}();`,
        `const sentence = because.length === 0 ? ${head} : ${head} + " because " + H${golden};`,
      ],
      returns: 'trace: [], reasons: { result, sentence, because }',
      after: [`} finally { ${rules.map((_, i) => `E${i} = null; H${i} = "";`).join(' ')} ${gen.held.join(' ')} }`],
    };
  };
  return generateFramed<ReasonsEvaluator>(rules, write, {
    MISSING,
    measureOf,
    overBudget,
    sizeCost,
    EvalFailure,
    json,
    plainString,
    elements,
  });
}
