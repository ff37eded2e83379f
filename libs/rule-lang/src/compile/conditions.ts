/**
 * Conditions → closures. Every condition of every list is evaluated (no short-circuit,
 * LANGUAGE.md §5.4); `and` binds tighter than `or`. Trace events are recorded only when
 * `ctx.trace` is set, so the hot path builds no strings.
 *
 * Steps of the budget (evaluate/budget.ts) are counted at the points the generated evaluators count them.
 *
 * These closures serve trace mode, and the no-trace mode only where the generated evaluator
 * (codegen.ts, same semantics) is unavailable.
 */

import type { TraceCondition } from '../api-types.js';
import type {
  ComparisonCondition,
  Condition,
  ConditionList,
  LabelReference,
  LogicalOp,
  QuantifierCondition,
  RuleReference,
} from '../ast/types.js';
import { measureName } from '../trace/text.js';
import { overBudget, sizeCost } from '../evaluate/budget.js';
import { MISSING, type CondFn, type EvalContext } from '../evaluate/context.js';
import { EvalFailure } from '../evaluate/failure.js';
import { leftMode, operandMode, operandValue, type Lowering } from './lowering.js';
import { compilePath, type CompiledPath } from './paths.js';
import { measureOf } from '../operators/measure.js';

/** What the condition compiler needs from the policy being compiled. */
export interface CompileEnv {
  /** Target rule index of a reference (resolved by the checker). */
  targetOf(ref: LabelReference | RuleReference): number;
  /** Evaluates rule `index` once (later calls reuse its value). */
  runRule: (index: number, ctx: EvalContext) => boolean;
  outcomeOf(index: number): string;
  /** Path plans and tests, shared with the generated evaluator. */
  lowering: Lowering;
  /** The rules referenced inside `list`, in the order written (check.ts referencedRules). */
  referencedIn(list: ConditionList): number[];
  /** Coverage closures only: the first of a condition's three counters (true, false, stopped by missing data) in `ctx.coverage`. */
  coverSlot?: (c: Condition) => number;
}

function record(ctx: EvalContext, entry: TraceCondition): void {
  ctx.trace!.list.push(entry);
}

function failureMessage(err: unknown): string | undefined {
  return err instanceof EvalFailure ? err.message : undefined;
}

/** Compiles a condition list joined by and/or. */
export function compileList(list: ConditionList, env: CompileEnv): CondFn {
  const fns = list.items.map((c, i) => compileCondition(c, i === 0 ? null : list.ops[i - 1], env));
  if (fns.length === 1) return fns[0];
  // Runs of `and` are merged first, then OR-ed (§5.4).
  const runs: CondFn[][] = [[fns[0]]];
  list.ops.forEach((op, i) => {
    if (op === 'or') runs.push([fns[i + 1]]);
    else runs[runs.length - 1].push(fns[i + 1]);
  });
  if (runs.length === 1) {
    const all = runs[0];
    if (all.length === 2) {
      const [a, b] = all as [CondFn, CondFn];
      return (ctx) => {
        const x = a(ctx);
        const y = b(ctx);
        return x && y;
      };
    }
    return (ctx) => {
      let result = true;
      for (let i = 0; i < all.length; i++) if (!all[i](ctx)) result = false;
      return result;
    };
  }
  return (ctx) => {
    let any = false;
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r];
      let all = true;
      for (let i = 0; i < run.length; i++) if (!run[i](ctx)) all = false;
      if (all) any = true;
    }
    return any;
  };
}

function compileCondition(c: Condition, logicalOp: LogicalOp | null, env: CompileEnv): CondFn {
  const fn = compileBare(c, logicalOp, env);
  return env.coverSlot === undefined ? fn : counted(fn, env.coverSlot(c));
}

/** `fn`, counting each outcome in `ctx.coverage` from `slot`: true, false, or stopped by missing data. */
function counted(fn: CondFn, slot: number): CondFn {
  return (ctx) => {
    let result: boolean;
    try {
      result = fn(ctx);
    } catch (err) {
      if (err instanceof EvalFailure && err.code !== 'budget_exceeded') ctx.coverage![slot + 2]++;
      throw err;
    }
    ctx.coverage![slot + (result ? 0 : 1)]++;
    return result;
  };
}

function compileBare(c: Condition, logicalOp: LogicalOp | null, env: CompileEnv): CondFn {
  switch (c.kind) {
    case 'comparison':
      return compileComparison(c, logicalOp, env);
    case 'quantifier':
      return compileQuantifier(c, logicalOp, env);
    case 'group':
      return compileGroup(c.body, logicalOp, env);
    case 'labelRef':
    case 'ruleRef':
      return compileReference(c, logicalOp, env);
  }
}

function compileReference(ref: LabelReference | RuleReference, logicalOp: LogicalOp | null, env: CompileEnv): CondFn {
  const target = env.targetOf(ref);
  const runRule = env.runRule;
  const outcome = env.outcomeOf(target);
  return (ctx) => {
    const s = ctx.states[target];
    const result = s !== 0 ? s === 2 : runRule(target, ctx);
    if (ctx.trace) {
      record(
        ctx,
        ref.kind === 'labelRef'
          ? { type: 'label_reference', logical_op: logicalOp, outcome, label: ref.label, result }
          : { type: 'rule_reference', logical_op: logicalOp, outcome, result },
      );
    }
    return result;
  };
}

function compileGroup(body: ConditionList, logicalOp: LogicalOp | null, env: CompileEnv): CondFn {
  const inner = compileList(body, env);
  return (ctx) => {
    if (!ctx.trace) return inner(ctx);
    const outer = ctx.trace.list;
    const conditions: TraceCondition[] = [];
    ctx.trace.list = conditions;
    let result = false;
    try {
      result = inner(ctx);
    } finally {
      ctx.trace.list = outer;
      outer.push({ type: 'group', logical_op: logicalOp, conditions, result });
    }
    return result;
  };
}

function compileComparison(c: ComparisonCondition, logicalOp: LogicalOp | null, env: CompileEnv): CondFn {
  const left = compilePath(env.lowering.plan(c.left, leftMode(c)));
  const rightPath: CompiledPath | null =
    c.right?.kind === 'path' ? compilePath(env.lowering.plan(c.right.path, operandMode(c.optional))) : null;
  const test = env.lowering.test(c);
  const negated = c.op.negated;
  const optional = c.optional;
  const measure = c.measure;
  const getLeft = left.get;
  const getRight = rightPath?.get;

  // The closure returned: the trace check lives here rather than in a wrapper (one call less per condition).
  const fast: CondFn = (ctx) => {
    if (ctx.trace) return traced(ctx);
    let l = getLeft(ctx);
    if (optional && (l === MISSING || l === null)) return true;
    let r: unknown;
    if (getRight) {
      r = getRight(ctx);
      if (optional && (r === MISSING || r === null)) return true;
    }
    if (measure) l = measureOf(measure, l);
    ctx.left -= getRight ? sizeCost(l) + sizeCost(r) : sizeCost(l);
    // An absent property reaches here only for `is empty` (§7.3.7); tests take it as undefined.
    const positive = test(l === MISSING ? undefined : l, r, ctx.today);
    return negated ? !positive : positive;
  };

  const value = operandValue(c.right);
  const measureText = measureName(measure);
  const operator = c.op.name;
  const written = c.op.written;
  const traced: CondFn = (ctx) => {
    // Two literals rather than a spread (which made the entry ~5× dearer); `measure` keeps its place.
    const entry: Extract<TraceCondition, { type: 'comparison' }> =
      measureText !== null
        ? {
            type: 'comparison',
            logical_op: logicalOp,
            path: left.written,
            actual: null,
            measure: measureText,
            operator,
            written,
            negated,
            value,
            optional,
            skipped: false,
            result: false,
          }
        : {
            type: 'comparison',
            logical_op: logicalOp,
            path: left.written,
            actual: null,
            operator,
            written,
            negated,
            value,
            optional,
            skipped: false,
            result: false,
          };
    try {
      const l = left.getTraced(ctx);
      entry.path = l.jsonPath;
      entry.actual = l.value === MISSING ? null : l.value;
      let r: unknown;
      if (rightPath) {
        const rt = rightPath.getTraced(ctx);
        r = rt.value;
        entry.value = { path: rt.jsonPath, actual: r === MISSING ? null : r };
      }
      if (optional && (l.value === MISSING || l.value === null || (rightPath && (r === MISSING || r === null)))) {
        entry.skipped = true;
        entry.result = true;
        return true;
      }
      let lv = l.value;
      if (measure) {
        lv = measureOf(measure, lv);
        entry.actual = Number.isNaN(lv) ? null : lv;
      }
      ctx.left -= rightPath ? sizeCost(lv) + sizeCost(r) : sizeCost(lv);
      const positive = test(lv === MISSING ? undefined : lv, r, ctx.today);
      entry.result = negated ? !positive : positive;
      return entry.result;
    } catch (err) {
      const message = failureMessage(err);
      if (message !== undefined) entry.error = message;
      throw err;
    } finally {
      record(ctx, entry);
    }
  };

  // One step once the comparison finished (its trace entry recorded), as the generated evaluators count it.
  return (ctx) => {
    const v = fast(ctx);
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- an EvalFailure, caught by the evaluator: no stack
    if (--ctx.left < 0) throw overBudget(ctx.limit);
    return v;
  };
}

function compileQuantifier(c: QuantifierCondition, logicalOp: LogicalOp | null, env: CompileEnv): CondFn {
  const path = compilePath(env.lowering.plan(c.path, operandMode(c.optional)));
  const body = compileList(c.body, env);
  const isAny = c.quantifier === 'any';
  const optional = c.optional;
  const get = path.get;

  const fast: CondFn = (ctx) => {
    if (ctx.trace) return traced(ctx);
    const arr = get(ctx);
    if (optional && (arr === MISSING || arr === null)) return true;
    if (!Array.isArray(arr)) return false;
    const saved = ctx.its;
    let matched = 0;
    for (let i = 0; i < arr.length; i++) {
      ctx.its = arr[i];
      if (body(ctx)) matched++;
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- an EvalFailure, caught by the evaluator: no stack
      if (--ctx.left < 0) throw overBudget(ctx.limit);
    }
    ctx.its = saved;
    return isAny ? matched > 0 : matched === arr.length;
  };

  const traced: CondFn = (ctx) => {
    const trace = ctx.trace!;
    const outer = trace.list;
    const entry: Extract<TraceCondition, { type: 'quantifier' }> = {
      type: 'quantifier',
      logical_op: logicalOp,
      quantifier: c.quantifier,
      path: path.written,
      count: 0,
      matched: 0,
      optional,
      skipped: false,
      elements: [],
      result: false,
    };
    const savedIts = ctx.its;
    const savedPath = ctx.itsPath;
    try {
      const { value: arr, jsonPath } = path.getTraced(ctx);
      entry.path = jsonPath;
      if (optional && (arr === MISSING || arr === null)) {
        entry.skipped = true;
        entry.result = true;
        return true;
      }
      if (!Array.isArray(arr)) return false;
      entry.count = arr.length;
      for (let i = 0; i < arr.length; i++) {
        const conditions: TraceCondition[] = [];
        trace.list = conditions;
        ctx.its = arr[i];
        ctx.itsPath = `${jsonPath}[${i}]`;
        const element = { index: i, result: false, conditions };
        entry.elements.push(element);
        element.result = body(ctx);
        if (element.result) entry.matched++;
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- an EvalFailure, caught by the evaluator: no stack
        if (--ctx.left < 0) throw overBudget(ctx.limit);
      }
      entry.result = isAny ? entry.matched > 0 : entry.matched === arr.length;
      return entry.result;
    } catch (err) {
      const message = failureMessage(err);
      if (message !== undefined) entry.error = message;
      throw err;
    } finally {
      trace.list = outer;
      ctx.its = savedIts;
      ctx.itsPath = savedPath;
      outer.push(entry);
    }
  };

  // The rules its body references are evaluated even when no element ran them (§8 step 4).
  const pending = env.referencedIn(c.body);
  if (pending.length === 0) return fast;
  const runRule = env.runRule;
  return (ctx) => {
    const value = fast(ctx);
    for (let i = 0; i < pending.length; i++) if (ctx.states[pending[i]] === 0) runRule(pending[i], ctx);
    return value;
  };
}
