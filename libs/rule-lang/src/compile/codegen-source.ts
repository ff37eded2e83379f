/**
 * What the generated evaluators (codegen.ts: no trace; codegen-trace.ts: trace lines;
 * codegen-reasons.ts: reasons) share: the source being written and its captured values, the one
 * way text enters it (`literal`), the nesting cap, the and/or combination of a list, the outcomes
 * object, and turning the source into a function (laid out by codegen-frame.ts).
 *
 * Safety: no text from the policy or the data reaches a generated source except as
 * `JSON.stringify`'d string literals. Everything else (tests, failures, MISSING, helpers) is passed
 * in as captured variables whose names the generator makes up (`t0`, `f3`, …).
 */

import type { ConditionList, LogicalOp, Rule } from '../ast/types.js';
import type { PathPlan } from './paths.js';

/**
 * The step budget in generated code (evaluate/budget.ts): `left` (steps left) and `limit` live in
 * the factory's scope, set by `evaluate(…, lim, shared)` from the limit and the shared budget (null:
 * the evaluation's own budget of `lim` steps), and written back into a shared budget when it ends.
 * Generated evaluations are synchronous and never nest, so one pair per generated policy is enough.
 */
export const BUDGET_STATE = 'let left = 0, limit = 0;';
/** First statement of `evaluate(…, lim, shared)`: takes the budget; the body that follows is in a `try`. */
export const BUDGET_START = 'limit = lim; left = shared === null ? lim : lim - shared.used; try {';
/** Closes the `try` of {@link BUDGET_START}: the steps taken go back into a shared budget, however it ended. */
export const BUDGET_END = '} finally { if (shared !== null) shared.used = limit - (left > 0 ? left : 0); }';
/** One step (a comparison or an any/all element finished); past the budget, the error. */
export const STEP = 'if (--left < 0) throw overBudget(limit);';
/**
 * Charges the size of a comparison's operands (`right` is `undefined` for a literal). Numbers and
 * booleans cost nothing and are the usual operands: they are told apart here, so that the common
 * comparison calls nothing (V8 inlines only so much into one function; the tests come first).
 */
export function sizeCharge(left: string, right: string): string {
  const cost = (v: string) => `(typeof ${v} === 'object' || typeof ${v} === 'string' ? sizeCost(${v}) : 0)`;
  return right === 'undefined' ? `left -= ${cost(left)};` : `left -= ${cost(left)} + ${cost(right)};`;
}

/** A JS string literal for `s`. INVARIANT: the only way policy or data text enters the source. */
export function literal(s: string): string {
  return JSON.stringify(s);
}

/** Source being generated, plus the values it captures. */
export class Source {
  lines: string[] = [];
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

  /** Runs `emit`, collecting the lines it writes apart from the others (a function written in the middle of another); returns them. */
  apart(emit: () => void): string[] {
    const outer = this.lines;
    this.lines = [];
    try {
      emit();
      return this.lines;
    } finally {
      this.lines = outer;
    }
  }
}

/**
 * Nesting (groups and any/all) beyond which no code is generated. V8 parses and compiles nested
 * blocks recursively, lazily at the first call; a cap keeps that far from the stack limit, so the
 * generated function can never fail where the closures would not.
 */
export const MAX_DEPTH = 64;

/** Nesting of groups and any/all in `list`. */
export function depthOf(list: ConditionList): number {
  let max = 0;
  for (const c of list.items) {
    if (c.kind === 'group' || c.kind === 'quantifier') max = Math.max(max, 1 + depthOf(c.body));
  }
  return max;
}

/**
 * The variable a lookup of `plan` starts from: the data `d`, or `its`, the current element of
 * the innermost any/all.
 */
export function rootOf(plan: PathPlan, its: string | null): string {
  if (!plan.fromIts) return 'd';
  // INVARIANT: the checker accepts `its` only inside any/all, where `its` is bound.
  if (its === null) throw new Error('INVARIANT: `its` outside any/all');
  return its;
}

/** True when some rule nests deeper than code is generated for. */
export function tooDeep(rules: readonly Rule[]): boolean {
  return rules.some((r) => depthOf(r.conditions) > MAX_DEPTH);
}

/**
 * The combined value of a list whose conditions are in `vars` (already evaluated, in order), with
 * the value shapes of compileList: one condition gives its value, two joined by `and` give
 * `x && y`, anything else a boolean; runs of `and` are merged first, then OR-ed (§5.4).
 */
export function combine(vars: readonly string[], ops: readonly LogicalOp[]): string {
  if (vars.length === 1) return vars[0];
  const runs: string[][] = [[vars[0]]];
  ops.forEach((op, i) => {
    if (op === 'or') runs.push([vars[i + 1]]);
    else runs[runs.length - 1].push(vars[i + 1]);
  });
  if (runs.length === 1) {
    return runs[0].length === 2 ? `(${runs[0].join(' && ')})` : `!!(${runs[0].join(' && ')})`;
  }
  return `!!(${runs.map((r) => `(${r.join(' && ')})`).join(' || ')})`;
}

/**
 * The rule states in generated code: `rs<i>` (0 not evaluated yet, 1 false, 2 true) in the
 * factory's scope, like the budget (evaluations never nest), so a call allocates no array for
 * them; every evaluation starts with {@link resetStates}.
 */
export function ruleState(index: number): string {
  return `rs${index}`;
}

/** Declares the rule states of `n` rules (factory scope). */
export function declareStates(n: number): string {
  return `let ${Array.from({ length: n }, (_, i) => `${ruleState(i)} = 0`).join(', ')};`;
}

/** Sets the rule states of `n` rules to "not evaluated yet". */
export function resetStates(n: number): string {
  return Array.from({ length: n }, (_, i) => `${ruleState(i)} = 0;`).join(' ');
}

/** Code of the value of rule `target` for a reference: its state, or its evaluation (`call`) the first time. */
export function referenceValue(target: number, call: string): string {
  const st = ruleState(target);
  return `${st} !== 0 ? ${st} === 2 : ${call}`;
}

/**
 * The outcomes object from the rule states: an object literal (one allocation, keys in text
 * order) unless a name would set the prototype in a literal; then assignments, as
 * evaluate/evaluate.ts does (where `__proto__` is a setter).
 */
export function outcomesObject(names: readonly string[]): string {
  return names.includes('__proto__')
    ? `(() => { const o = {}; ${names.map((n, i) => `o[${literal(n)}] = ${ruleState(i)} === 2;`).join(' ')} return o; })()`
    : `{ ${names.map((n, i) => `${literal(n)}: ${ruleState(i)} === 2`).join(', ')} }`;
}

/**
 * Runs the generated source as a strict-mode function body that receives `globals` by name and
 * the captured values (in one array `K`: a policy may capture more values than a function may
 * have parameters), and returns what the body returns. Throws EvalError where code generation
 * from strings is disabled.
 */
export function instantiate<T>(src: Source, globals: Readonly<Record<string, unknown>>): T {
  const unpack = src.names.map((name, i) => `const ${name} = K[${i}];`).join('\n');
  const names = Object.keys(globals);
  // Code generation is the point here: the source is built by the compiler, never from user text.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const factory = new Function(...names, 'K', `'use strict';\n${unpack}\n${src.lines.join('\n')}`) as (...args: unknown[]) => T;
  return factory(...names.map((n) => globals[n]), src.values);
}

type Part = { readonly text: string } | { readonly code: string; readonly isString: boolean };

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * A string expression of the generated code, built at generation time from constant text and
 * run-time parts; adjacent constant text is merged into one literal, so a line costs only as many
 * concatenations as it has run-time parts.
 */
export class TextExpr {
  private constructor(private readonly parts: readonly Part[]) {}

  static readonly empty = new TextExpr([]);

  /** Constant text. */
  static text(s: string): TextExpr {
    return s === '' ? TextExpr.empty : new TextExpr([{ text: s }]);
  }

  /**
   * A run-time value (generated code: an identifier or an expression), converted to a string by
   * `+`; `isString` when the value is known to be a string already.
   */
  static code(c: string, isString = false): TextExpr {
    return new TextExpr([{ code: c, isString }]);
  }

  /** This text followed by `next` (a string is constant text). */
  plus(next: string | TextExpr): TextExpr {
    const tail = typeof next === 'string' ? TextExpr.text(next).parts : next.parts;
    const parts = [...this.parts];
    for (const p of tail) {
      const last = parts[parts.length - 1];
      if ('text' in p && last !== undefined && 'text' in last) parts[parts.length - 1] = { text: last.text + p.text };
      else parts.push(p);
    }
    return new TextExpr(parts);
  }

  /** The text, when it is all constant. */
  get constant(): string | null {
    if (this.parts.length === 0) return '';
    const only = this.parts[0];
    return this.parts.length === 1 && 'text' in only ? only.text : null;
  }

  /** A JS expression of type string for this text. */
  get code(): string {
    if (this.parts.length === 0) return '""';
    const out = this.parts.map((p) => ('text' in p ? literal(p.text) : IDENTIFIER.test(p.code) ? p.code : `(${p.code})`));
    // `+` concatenates only once a string is involved: start from "" unless the first part is one.
    const first = this.parts[0];
    if (!('text' in first) && !first.isString) out.unshift('""');
    return out.length === 1 ? out[0] : out.join(' + ');
  }
}
