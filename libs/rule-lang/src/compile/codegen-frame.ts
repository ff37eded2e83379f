/**
 * The frame every generated evaluator (codegen.ts, codegen-trace.ts, codegen-reasons.ts) shares:
 * the factory's source laid out around what each generator writes, and the way back to the
 * closures where code cannot or should not be generated.
 *
 * The factory's source, in order: the budget and the rule states (factory scope, see
 * codegen-source.ts), the generator's own declarations and functions, then `evaluate`, which takes
 * the budget, resets the rule states, runs the generator's body (leaving `result`), returns the
 * result with the outcomes, and gives the budget back however it ended.
 */

import type { Rule } from '../ast/types.js';
import {
  BUDGET_END,
  BUDGET_START,
  BUDGET_STATE,
  declareStates,
  instantiate,
  outcomesObject,
  resetStates,
  Source,
  tooDeep,
} from './codegen-source.js';

/** What a generator writes into the frame, each part as lines of generated code. */
export interface EvaluatorParts {
  /** Factory-scope declarations besides the budget and the rule states. */
  readonly declarations?: readonly string[];
  /** The functions `evaluate` calls, in the order they are written. */
  readonly functions: readonly (readonly string[])[];
  /** The parameter list of `evaluate`. */
  readonly params: string;
  /** Lines of `evaluate` before it takes the budget. */
  readonly before?: readonly string[];
  /** Lines that evaluate the golden rule into `const result`, once the budget is taken and the states reset. */
  readonly body: readonly string[];
  /** The returned object's properties after `result` and `outcomes`. */
  readonly returns: string;
  /** Lines of `evaluate` after it gave the budget back (closing what `before` opened). */
  readonly after?: readonly string[];
}

/**
 * Generates an evaluator of `rules`: `write` generates its parts and returns them (every line
 * collected with `src.apart`; `src` also holds what they capture), the frame lays them out, and
 * the factory runs with `globals`. Null where the rules nest deeper than code is generated for, or
 * generation fails. Never throws.
 */
export function generateFramed<T>(
  rules: readonly Rule[],
  write: (src: Source) => EvaluatorParts,
  globals: Readonly<Record<string, unknown>>,
): T | null {
  if (tooDeep(rules)) return null;
  try {
    const src = new Source();
    const parts = write(src);
    src.line(BUDGET_STATE);
    src.line(declareStates(rules.length));
    for (const line of parts.declarations ?? []) src.line(line);
    for (const lines of parts.functions) for (const line of lines) src.line(line);
    src.line(`return function evaluate(${parts.params}) {`);
    for (const line of parts.before ?? []) src.line(line);
    src.line(BUDGET_START);
    src.line(resetStates(rules.length));
    for (const line of parts.body) src.line(line);
    src.line(`return { result, outcomes: ${outcomesObject(rules.map((r) => r.outcome))}, ${parts.returns} };`);
    src.line(BUDGET_END);
    for (const line of parts.after ?? []) src.line(line);
    src.line('};');
    return instantiate<T>(src, globals);
  } catch {
    // EvalError under a CSP, or anything unexpected: the closures remain correct.
    return null;
  }
}
