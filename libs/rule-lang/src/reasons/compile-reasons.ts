/**
 * Conditions → closures that also say why (LANGUAGE.md §10.4). Built on the first evaluation that
 * asks for reasons, from the same path plans and tests as the other evaluators (compile/lowering.ts),
 * so the results are the same; the steps are counted as conditions.ts counts them. Each closure
 * returns the condition's value and appends the entries that decided it to `out`.
 *
 * Which entries decide: an `and` that fails keeps its false operands, one that holds all of them;
 * an `or` that holds keeps its first operand that holds, one that fails all of them; a reference
 * keeps the referenced rule's own entries under a `rule` entry; an any/all keeps the element that
 * decided (or one entry for all the elements).
 */

import type { Reason, ReasonKind } from '../api-types.js';
import type {
  ComparisonCondition,
  Condition,
  ConditionList,
  LabelReference,
  QuantifierCondition,
  RuleReference,
  Span,
} from '../ast/types.js';
import type { CheckedPolicy } from '../check/check.js';
import { referencedRules } from '../check/check.js';
import { overBudget, sizeCost } from '../evaluate/budget.js';
import { MISSING } from '../evaluate/context.js';
import type { ReasonsContext, ReasonsProgram } from '../evaluate/evaluate.js';
import { EvalFailure } from '../evaluate/failure.js';
import { leftMode, operandMode, type Lowering } from '../compile/lowering.js';
import { measureOf } from '../operators/measure.js';
import { oppositePhrase } from '../operators/index.js';
import { reasonPath } from './reason-paths.js';
import { phraseOf, positionKey, type Phrasing } from './sentence.js';

/** A condition list's closure: its value; the entries that decided it go to `out`. */
type ReasonFn = (ctx: ReasonsContext, out: Reason[]) => boolean;

/** The source text of a span (spans count code points). */
export function sourceReader(source: string): (span: Span) => string {
  const points = Array.from(source);
  return (span) => points.slice(span.offset, span.offset + span.length).join('');
}

/** The path named by a missing-data message (`Missing property: driver.age` → `driver.age`). */
function pathOfFailure(err: EvalFailure): string | undefined {
  if (err.code === 'budget_exceeded') return undefined;
  const at = err.message.indexOf(': ');
  return at < 0 ? undefined : err.message.slice(at + 2);
}

interface Env {
  checked: CheckedPolicy;
  lowering: Lowering;
  text: (span: Span) => string;
  phrasing: Map<number, Phrasing>;
  runRule: (index: number, ctx: ReasonsContext) => boolean;
  /** The outcome of the rule being compiled. */
  rule: string;
}

/** Compiles the reasons closures of every rule of `checked`. */
export function compileReasons(checked: CheckedPolicy, lowering: Lowering): ReasonsProgram {
  const ast = checked.ast;
  const fns: ReasonFn[] = [];
  const runRule = (index: number, ctx: ReasonsContext): boolean => {
    const because: Reason[] = [];
    const value = fns[index](ctx, because);
    ctx.states[index] = value ? 2 : 1;
    ctx.because[index] = because;
    return value;
  };
  const env: Env = { checked, lowering, text: sourceReader(ast.source), phrasing: new Map(), runRule, rule: '' };
  for (const rule of ast.rules) {
    env.rule = rule.outcome;
    fns.push(compileList(rule.conditions, env));
  }
  return {
    runRule,
    sentence: (result, because) => phraseOf(ast.rules[checked.golden].outcome, result, because, env.phrasing),
  };
}

/** Records a failure (missing data, exhausted budget) as the entry where it happened, once. */
function failedAt(ctx: ReasonsContext, err: unknown, kind: ReasonKind, rule: string, text: string, span: Span): void {
  if (!(err instanceof EvalFailure) || ctx.failure !== null) return;
  const path = pathOfFailure(err);
  ctx.failure =
    path === undefined
      ? { kind: 'error', rule, text, holds: false, error: err.message, line: span.line, column: span.column }
      : { kind, rule, text, holds: false, path, error: err.message, line: span.line, column: span.column };
}

/** Wraps the failure found under a reference or an element in the entry that led to it. */
function wrapFailure(ctx: ReasonsContext, entry: Reason): void {
  if (ctx.failure === null || ctx.failure === entry) return;
  entry.because = [ctx.failure];
  ctx.failure = entry;
}

function compileList(list: ConditionList, env: Env): ReasonFn {
  const fns = list.items.map((c) => compileCondition(c, env));
  if (fns.length === 1) return fns[0];
  const n = fns.length;
  // runOf[i]: the and-run (§5.4) item i belongs to; runs are OR-ed.
  const runOf = new Uint16Array(n);
  list.ops.forEach((op, i) => {
    runOf[i + 1] = runOf[i] + (op === 'or' ? 1 : 0);
  });
  const runs = runOf[n - 1] + 1;
  // Scratch space: a list is never evaluated inside itself (rules do not refer to themselves,
  // elements run one after the other), so one buffer per list serves every evaluation.
  const ends = new Int32Array(n);
  const values = new Uint8Array(n);
  const runHolds = new Uint8Array(runs);
  return (ctx, out) => {
    const base = out.length;
    for (let i = 0; i < n; i++) {
      values[i] = fns[i](ctx, out) ? 1 : 0;
      ends[i] = out.length;
    }
    runHolds.fill(1);
    for (let i = 0; i < n; i++) if (values[i] === 0) runHolds[runOf[i]] = 0;
    let holding = -1;
    for (let r = 0; r < runs; r++) {
      if (runHolds[r] === 1) {
        holding = r;
        break;
      }
    }
    // An and that holds: every operand, already in place.
    if (holding >= 0 && runs === 1) return true;
    // Keep the holding run's items, or, none holding, every false item; compacted in place.
    let w = base;
    for (let i = 0; i < n; i++) {
      const keep = holding >= 0 ? runOf[i] === holding : values[i] === 0;
      const start = i === 0 ? base : ends[i - 1];
      if (!keep) continue;
      for (let k = start; k < ends[i]; k++) out[w++] = out[k];
    }
    out.length = w;
    return holding >= 0;
  };
}

function compileCondition(c: Condition, env: Env): ReasonFn {
  switch (c.kind) {
    case 'comparison':
      return compileComparison(c, env);
    case 'quantifier':
      return compileQuantifier(c, env);
    case 'group':
      return compileList(c.body, env);
    case 'labelRef':
    case 'ruleRef':
      return compileReference(c, env);
  }
}

/** Text with the selector and property markers dropped and the spaces collapsed: what a sentence quotes. */
export function plainWords(text: string): string {
  return text
    .replace(/\*\*|__/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function compileComparison(c: ComparisonCondition, env: Env): ReasonFn {
  const left = reasonPath(env.lowering.plan(c.left, leftMode(c)));
  const right = c.right?.kind === 'path' ? reasonPath(env.lowering.plan(c.right.path, operandMode(c.optional))) : null;
  const test = env.lowering.test(c);
  const { optional, measure } = c;
  const negated = c.op.negated;
  const rule = env.rule;
  const text = env.text(c.span);
  const { line, column } = c.span;
  // The words before the operator (the property phrase, a measure included), the operator as
  // written and its opposite, and the operand as written.
  const subject = plainWords(env.text({ ...c.span, length: c.op.span.offset - c.span.offset }));
  const asWritten = plainWords(env.text(c.op.span));
  const opposite = oppositePhrase(c.op.name, c.op.written, negated);
  const operand = c.right === null ? '' : ` ${plainWords(env.text(c.right.span))}`;
  env.phrasing.set(positionKey(line, column), {
    kind: 'condition',
    before: `${subject} (`,
    holds: `) ${asWritten}${operand}`,
    fails: `) ${opposite}${operand}`,
    absent: `${subject} is absent, and the condition is optional`,
  });

  return (ctx, out) => {
    try {
      let lv = left.get(ctx);
      const path = left.path(ctx);
      let r: unknown;
      if (right) r = right.get(ctx);
      if (optional && (lv === MISSING || lv === null || (right && (r === MISSING || r === null)))) {
        out.push({ kind: 'condition', rule, text, holds: true, path, line, column });
      } else {
        if (measure) lv = measureOf(measure, lv);
        ctx.left -= right ? sizeCost(lv) + sizeCost(r) : sizeCost(lv);
        const positive = test(lv === MISSING ? undefined : lv, r, ctx.today);
        const holds = negated ? !positive : positive;
        const value = lv === MISSING || (typeof lv === 'number' && Number.isNaN(lv)) ? null : lv;
        out.push({ kind: 'condition', rule, text, holds, path, value, line, column });
      }
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- an EvalFailure, caught by the evaluator: no stack
      if (--ctx.left < 0) throw overBudget(ctx.limit);
      return out[out.length - 1].holds;
    } catch (err) {
      failedAt(ctx, err, 'missing', rule, text, c.span);
      throw err;
    }
  };
}

function compileReference(ref: LabelReference | RuleReference, env: Env): ReasonFn {
  const target = env.checked.targets.get(ref)!;
  const runRule = env.runRule;
  const rule = env.rule;
  const text = env.text(ref.span);
  const { line, column } = ref.span;
  env.phrasing.set(positionKey(line, column), { kind: 'rule', target: env.checked.ast.rules[target].outcome });
  return (ctx, out) => {
    let holds: boolean;
    try {
      const s = ctx.states[target];
      holds = s !== 0 ? s === 2 : runRule(target, ctx);
    } catch (err) {
      wrapFailure(ctx, { kind: 'rule', rule, text, holds: false, line, column });
      throw err;
    }
    out.push({ kind: 'rule', rule, text, holds, line, column, because: ctx.because[target] ?? [] });
    return holds;
  };
}

function compileQuantifier(c: QuantifierCondition, env: Env): ReasonFn {
  const path = reasonPath(env.lowering.plan(c.path, operandMode(c.optional)));
  const body = compileList(c.body, env);
  const kind = c.quantifier;
  const isAny = kind === 'any';
  const optional = c.optional;
  const rule = env.rule;
  const text = env.text(c.span);
  const { line, column } = c.span;
  env.phrasing.set(positionKey(line, column), { kind, array: plainWords(env.text(c.path.span)) });
  const pending = referencedRules(c.body, env.checked.targets);
  const runRule = env.runRule;

  const run: ReasonFn = (ctx, out) => {
    const savedIts = ctx.its;
    const savedPath = ctx.itsPath;
    let element = -1;
    try {
      const arr = path.get(ctx);
      const at = path.path(ctx);
      if (optional && (arr === MISSING || arr === null)) {
        out.push({ kind, rule, text, holds: true, path: at, line, column });
        return true;
      }
      if (!Array.isArray(arr)) {
        out.push({ kind, rule, text, holds: false, path: at, value: arr, line, column });
        return false;
      }
      let matched = 0;
      let decided = -1;
      let decidedBy: Reason[] = [];
      for (let i = 0; i < arr.length; i++) {
        element = i;
        ctx.its = arr[i];
        ctx.itsPath = `${at}[${i}]`;
        const parts: Reason[] = [];
        const v = body(ctx, parts);
        if (v) matched++;
        if (decided < 0 && v === isAny) {
          decided = i;
          decidedBy = parts;
        }
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- an EvalFailure, caught by the evaluator: no stack
        if (--ctx.left < 0) throw overBudget(ctx.limit);
      }
      element = -1;
      const holds = isAny ? matched > 0 : matched === arr.length;
      out.push(
        decided >= 0
          ? { kind, rule, text, holds, path: at, element: decided, line, column, because: decidedBy }
          : { kind, rule, text, holds, path: at, count: arr.length, line, column },
      );
      return holds;
    } catch (err) {
      if (ctx.failure === null) failedAt(ctx, err, 'missing', rule, text, c.span);
      else
        wrapFailure(
          ctx,
          element >= 0 ? { kind, rule, text, holds: false, element, line, column } : { kind, rule, text, holds: false, line, column },
        );
      throw err;
    } finally {
      ctx.its = savedIts;
      ctx.itsPath = savedPath;
    }
  };
  if (pending.length === 0) return run;
  // The rules its body references are evaluated even when no element ran them (§8 step 4).
  return (ctx, out) => {
    const value = run(ctx, out);
    for (let i = 0; i < pending.length; i++) if (ctx.states[pending[i]] === 0) runRule(pending[i], ctx);
    return value;
  };
}
