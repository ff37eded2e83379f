/**
 * The traced evaluator of a policy as ONE generated JavaScript function: it writes the trace
 * lines (LANGUAGE.md §10.2) as it evaluates, byte for byte those renderTrace (trace/render.ts)
 * makes of the structured trace the closures record, without building that tree.
 *
 * Evaluation is that of codegen.ts (the same conditions in the same order, the same lookups,
 * tests and EvalFailure objects; see its header). On top of it:
 * - every constant piece of a line (indentation, keyword, path as written or as followed when
 *   that is fixed, operator wording, literal operands, rule header and `=>` line) is worded at
 *   compile time with trace/text.ts and emitted as a string literal; at run time only values
 *   (text.ts `json`), element indices, counts and results are concatenated;
 * - a rule that references others writes its lines into its own buffer `b` and appends its block
 *   to `out` when it finishes, so a rule evaluated lazily in the middle of it comes before it
 *   (`trace.rules` order); a rule without references writes straight to `out`;
 * - a line that precedes what decides it (a group's line, an any/all summary, an element's `[i]`
 *   line) takes a slot in `b`, filled in once known;
 * - on an EvalFailure the lines are those the closures record in their `finally` blocks: the
 *   failing comparison or lookup `: <message>`; each any/all in progress `: <message>` followed by
 *   its elements so far, the current one `-> false`; each group in progress `-> false`; each rule
 *   in progress without its `=>` line, innermost first. The caller adds `error: <message>`.
 *
 * Generated on the first traced evaluation (policy.ts), so compiling costs no more than before;
 * null (closures) under the same conditions as codegen.ts.
 */

import type {
  ComparisonCondition,
  Condition,
  ConditionList,
  GroupCondition,
  LabelReference,
  LogicalOp,
  QuantifierCondition,
  RuleReference,
} from '../ast/types.js';
import { referencedRules, type CheckedPolicy } from '../check/check.js';
import {
  arrow,
  elementLine,
  json,
  measureName,
  measurePrefix,
  operatorText,
  padOf,
  plainString,
  quantifierSummary,
  ruleHeader,
  valueOperandText,
} from '../trace/text.js';
import { overBudget, sizeCost } from '../evaluate/budget.js';
import { generateFramed, type EvaluatorParts } from './codegen-frame.js';
import { emitLookup, type LookupTrace } from './codegen-lookup.js';
import { combine, literal, referenceValue, rootOf, ruleState, sizeCharge, STEP, TextExpr, type Source } from './codegen-source.js';
import { MISSING } from '../evaluate/context.js';
import type { RuleMeta, TracedEvaluator } from '../evaluate/evaluate.js';
import { EvalFailure } from '../evaluate/failure.js';
import { leftMode, operandMode, operandValue, type Lowering } from './lowering.js';
import type { PathPlan } from './paths.js';
import { measureOf } from '../operators/measure.js';

/** The current element of the innermost any/all: its variable and the code of its JSON path. */
interface Scope {
  its: string;
  path: TextExpr;
}

const T = (s: string): TextExpr => TextExpr.text(s);

/** `prefix` followed by ` -> <v>`: one literal per boolean when `prefix` is constant. */
function withArrow(prefix: TextExpr, v: string): TextExpr {
  const k = prefix.constant;
  if (k !== null) {
    return TextExpr.code(
      `${v} === true ? ${literal(`${k} -> true`)} : ${v} === false ? ${literal(`${k} -> false`)} : ${literal(k)} + arrow(${v})`,
      true,
    );
  }
  return prefix.plus(TextExpr.code(`${v} === true ? " -> true" : ${v} === false ? " -> false" : arrow(${v})`, true));
}

/** Code of `${prefix}${v}` (as a template prints it): one literal per boolean. */
function withValue(prefix: string, v: string): string {
  return `${v} === true ? ${literal(`${prefix}true`)} : ${v} === false ? ${literal(`${prefix}false`)} : ${literal(prefix)} + String(${v})`;
}

/** The JSON text of a run-time value. */
const jsonOf = (v: string): TextExpr => TextExpr.code(`json(${v})`, true);

/** Most strings of an operand worded ahead (a longer `is in` list is checked at run time). */
const KNOWN_STRINGS = 8;

/** The distinct strings (dates included) of a comparison's literal or list operand, when there are few. */
function operandStrings(c: ComparisonCondition): string[] {
  if (c.right?.kind !== 'literal' && c.right?.kind !== 'list') return [];
  const value = operandValue(c.right);
  const strings = [...new Set((Array.isArray(value) ? value : [value]).filter((x): x is string => typeof x === 'string'))];
  return strings.length <= KNOWN_STRINGS ? strings : [];
}

/** Whether `list` references another rule (at any depth). */
function hasReference(list: ConditionList): boolean {
  return list.items.some(
    (c) => c.kind === 'labelRef' || c.kind === 'ruleRef' || ((c.kind === 'group' || c.kind === 'quantifier') && hasReference(c.body)),
  );
}

class TracedGenerator {
  constructor(
    private readonly src: Source,
    private readonly checked: CheckedPolicy,
    private readonly lowering: Lowering,
  ) {}

  /** Emits `b.push(<line>)`. */
  private push(line: TextExpr): void {
    this.src.line(`b.push(${line.code});`);
  }

  /** A traced lookup of `plan`; a strict failure writes `<head><path as written>: <message>` first. */
  private lookup(plan: PathPlan, scope: Scope | null, v: string, failureLine: (message: string) => TextExpr): TextExpr {
    const trace: LookupTrace = {
      rootPath: plan.fromIts ? scope!.path : T('$'),
      strictFailure: (step, failure) => `{ b.push(${failureLine(step.failure.message).code}); throw ${failure}; }`,
    };
    return emitLookup(this.src, plan, rootOf(plan, scope?.its ?? null), v, trace)!;
  }

  /** Emits the conditions of `list` (lines at `depth`) in order; returns an expression of their combined value. */
  list(list: ConditionList, scope: Scope | null, depth: number): string {
    const vars = list.items.map((c, i) => this.condition(c, i === 0 ? null : list.ops[i - 1], scope, depth));
    return combine(vars, list.ops);
  }

  private condition(c: Condition, op: LogicalOp | null, scope: Scope | null, depth: number): string {
    const lead = `${padOf(depth)}${op ?? 'if'} `;
    switch (c.kind) {
      case 'comparison':
        return this.comparison(c, lead, scope);
      case 'quantifier':
        return this.quantifier(c, lead, scope, depth);
      case 'group':
        return this.group(c, lead, scope, depth);
      case 'labelRef':
      case 'ruleRef':
        return this.reference(c, lead);
    }
  }

  private reference(ref: LabelReference | RuleReference, lead: string): string {
    const target = this.checked.targets.get(ref);
    if (target === undefined) throw new Error('INVARIANT: references are resolved by the checker');
    const v = `c${this.src.fresh()}`;
    this.src.line(`const ${v} = ${referenceValue(target, `r${target}(d, today, out)`)};`);
    const text = ref.kind === 'labelRef' ? `label $${ref.label}` : `rule "${this.checked.ast.rules[target].outcome}"`;
    this.push(withArrow(T(lead + text), v));
    return v;
  }

  private group(c: GroupCondition, lead: string, scope: Scope | null, depth: number): string {
    const src = this.src;
    const k = src.fresh();
    const slot = `g${k}`;
    const v = `c${k}`;
    // The slot holds what an EvalFailure inside leaves: the group's result is still false.
    src.line(`const ${slot} = b.length;`);
    this.push(T(`${lead}group -> false`));
    const body = this.list(c.body, scope, depth + 1);
    src.line(`const ${v} = ${body};`);
    src.line(`if (${v} !== false) b[${slot}] = ${withArrow(T(`${lead}group`), v).code};`);
    return v;
  }

  private comparison(c: ComparisonCondition, lead: string, scope: Scope | null): string {
    const src = this.src;
    const k = src.fresh();
    const v = `c${k}`;
    const l = `l${k}`;
    const r = `r${k}`;
    const block = `C${k}`;
    const mode = leftMode(c);
    const left = this.lowering.plan(c.left, mode);
    const test = src.capture('t', this.lowering.test(c));
    const head = T(lead + measurePrefix(measureName(c.measure)));
    src.line(`let ${v};`);
    src.line(`${block}: {`);
    // A failed lookup shows the path as written; a found one, the path followed.
    const subject = head.plus(this.lookup(left, scope, l, (message) => head.plus(`${left.written}: ${message}`)));
    const skip = (actual: TextExpr): string =>
      `{ ${v} = true; b.push(${subject.plus(': ').plus(actual).plus(' (if present) -> skipped, true').code}); break ${block}; }`;
    if (c.optional) src.line(`if (${l} === MISSING || ${l} === null) ${skip(T('missing'))}`);
    let right = 'undefined';
    let operand = T(valueOperandText(c.op.name, operandValue(c.right)));
    if (c.right?.kind === 'path') {
      const plan = this.lowering.plan(c.right.path, operandMode(c.optional));
      const rightPath = this.lookup(plan, scope, r, (message) => subject.plus(`: ${message}`));
      if (c.optional) src.line(`if (${r} === MISSING || ${r} === null) ${skip(jsonOf(l))}`);
      right = r;
      operand = T(' ').plus(rightPath).plus(' (= ').plus(jsonOf(r)).plus(')');
    }
    if (c.measure) src.line(`${l} = measureOf(${literal(c.measure)}, ${l});`);
    src.line(sizeCharge(l, right));
    // Only `is empty` (mode 'empty') reaches the test with an absent property; it sees undefined, the trace null.
    const arg = mode === 'strict' ? l : `(${l} === MISSING ? undefined : ${l})`;
    const actual = mode === 'strict' ? l : `${l} === MISSING ? null : ${l}`;
    src.line(`${v} = ${c.op.negated ? '!' : ''}${test}(${arg}, ${right}, today);`);
    // `<subject> = <value>: <operator><operand> -> <result>`, the value text written by `value`.
    const opText = `: ${operatorText(c.op.name, c.op.written, c.op.negated)}`;
    const lineWith = (value: TextExpr): TextExpr => withArrow(subject.plus(' = ').plus(value).plus(opText).plus(operand), v);
    const line = lineWith(jsonOf(actual));
    if (c.measure) this.push(line);
    else {
      // A value that is one of the operand's strings has its text worded here, with json; a
      // plain string goes between quotes that are part of the literals (INVARIANT of text.ts
      // plainString): json's text either way, without the run-time work. json writes the rest.
      const quoted = lineWith(T('"').plus(TextExpr.code(l, true)).plus('"'));
      const known = operandStrings(c)
        .map((k) => `${l} === ${literal(k)} ? ${lineWith(T(json(k))).code} : `)
        .join('');
      src.line(`b.push(${known}typeof ${l} === 'string' && plainString(${l}) ? ${quoted.code} : ${line.code});`);
    }
    src.line('}');
    // Counted once its line is written: an exceeded budget shows up in the enclosing any/all, as a referenced rule's failure does.
    src.line(STEP);
    return v;
  }

  private quantifier(c: QuantifierCondition, lead: string, scope: Scope | null, depth: number): string {
    const src = this.src;
    const k = src.fresh();
    const v = `c${k}`;
    const arr = `a${k}`;
    const count = `n${k}`;
    const i = `i${k}`;
    const el = `e${k}`;
    const matched = `m${k}`;
    const slot = `s${k}`;
    const elSlot = `x${k}`;
    const elResult = `y${k}`;
    const block = `Q${k}`;
    const plan = this.lowering.plan(c.path, operandMode(c.optional));
    const head = T(`${lead}${c.quantifier} of `);
    src.line(`let ${v};`);
    src.line(`${block}: {`);
    const arrPath = this.lookup(plan, scope, arr, (message) => head.plus(`${plan.written}: ${message}`));
    const subject = head.plus(arrPath);
    if (c.optional) {
      src.line(
        `if (${arr} === MISSING || ${arr} === null) { ${v} = true; b.push(${subject.plus(': missing (if present) -> skipped, true').code}); break ${block}; }`,
      );
    }
    src.line(
      `if (!Array.isArray(${arr})) { ${v} = false; b.push(${subject.plus(' [0 elements]: 0 matched -> false').code}); break ${block}; }`,
    );
    src.line(`const ${count} = ${arr}.length;`);
    src.line(`const ${slot} = b.length;`);
    src.line('b.push("");');
    src.line(`let ${matched} = 0, ${i} = 0, ${elSlot} = -1;`);
    src.line('try {');
    src.line(`for (; ${i} < ${arr}.length; ${i}++) {`);
    src.line(`${elSlot} = b.length;`);
    src.line('b.push("");');
    src.line(`const ${el} = ${arr}[${i}];`);
    // Written out where used, so its constant parts merge with the text around them.
    const path = arrPath.plus('[').plus(TextExpr.code(i)).plus(']');
    const body = this.list(c.body, { its: el, path }, depth + 2);
    src.line(`const ${elResult} = ${body};`);
    src.line(`if (${elResult}) ${matched}++;`);
    src.line(`b[${elSlot}] = elementLine(${depth}, ${i}, ${elResult});`);
    // The element is complete: an exceeded budget now leaves its line as it is.
    src.line(`${elSlot} = -1;`);
    src.line(STEP);
    src.line('}');
    src.line('} catch (err) {');
    src.line(
      `if (err instanceof EvalFailure) { b[${slot}] = ${subject.plus(': ').plus(TextExpr.code(`err.message`, true)).code}; ` +
        `if (${elSlot} >= 0) b[${elSlot}] = elementLine(${depth}, ${i}, false); }`,
    );
    src.line('throw err;');
    src.line('}');
    src.line(`${v} = ${c.quantifier === 'any' ? `${matched} > 0` : `${matched} === ${arr}.length`};`);
    src.line(`b[${slot}] = ${subject.plus(TextExpr.code(`quantifierSummary(${count}, ${matched}, ${v})`, true)).code};`);
    src.line('}');
    // The rules its body references, evaluated even when no element ran them (§8 step 4): their blocks go to `out` first.
    for (const target of referencedRules(c.body, this.checked.targets)) {
      src.line(`if (${ruleState(target)} === 0) r${target}(d, today, out);`);
    }
    return v;
  }
}

/**
 * Generates the traced evaluator of `checked`, or returns null where code generation is
 * unavailable (CSP) or unsafe (nesting deeper than the cap of codegen-source.ts). Never throws.
 */
export function generateTracedEvaluator(checked: CheckedPolicy, lowering: Lowering, meta: readonly RuleMeta[]): TracedEvaluator | null {
  const rules = checked.ast.rules;
  const write = (src: Source): EvaluatorParts => {
    const gen = new TracedGenerator(src, checked, lowering);
    const goldenOutcome = meta[checked.golden].outcome;
    const functions = rules.map((rule, index) =>
      src.apart(() => {
        const m = meta[index];
        const header = literal(ruleHeader(m.outcome, m.label, m.selector, m.outcome === goldenOutcome));
        src.line(`function r${index}(d, today, out) {`);
        src.line('let w, v;');
        if (hasReference(rule.conditions)) {
          // Rules it evaluates write their blocks to `out` first: its own lines wait in `b`.
          const flush = `out.push(${header}); for (let j = 0; j < b.length; j++) out.push(b[j]);`;
          src.line('const b = [];');
          src.line('try {');
          src.line(`v = ${gen.list(rule.conditions, null, 1)};`);
          // A rule stopped by an EvalFailure still shows its lines so far, without its `=>` line.
          src.line(`} catch (err) { ${flush} throw err; }`);
          src.line(flush);
        } else {
          // No other rule can start before it finishes: its block goes straight to `out`.
          src.line('const b = out;');
          src.line(`b.push(${header});`);
          src.line(`v = ${gen.list(rule.conditions, null, 1)};`);
        }
        src.line(`${ruleState(index)} = v ? 2 : 1;`);
        src.line(`out.push(${withValue(`  => ${m.outcome} = `, 'v')});`);
        src.line('return v;');
        src.line('}');
      }),
    );
    const body = [`const result = r${checked.golden}(d, today, out);`, `out.push(${withValue('result: ', 'result')});`];
    return { functions, params: 'd, today, out, lim, shared', body, returns: 'trace: out' };
  };
  return generateFramed<TracedEvaluator>(rules, write, {
    MISSING,
    EvalFailure,
    measureOf,
    json,
    plainString,
    arrow,
    elementLine,
    quantifierSummary,
    overBudget,
    sizeCost,
  });
}
