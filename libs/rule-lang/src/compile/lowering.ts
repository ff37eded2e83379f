/**
 * What the closure compiler (conditions.ts) and the generated evaluator (codegen.ts) both need
 * from the AST, computed once per policy: path plans and operator tests. Sharing them keeps the
 * two evaluators on the very same key candidates, failures and test closures, and halves the
 * compile-time work.
 */

import type { ComparisonCondition, Operand, Path } from '../ast/types.js';
import { keyCandidates } from './names.js';
import { planPath, type LookupMode, type PathPlan } from './paths.js';
import { compileTest } from '../operators/index.js';
import { literalValue, type Test } from '../operators/semantics.js';

/** Lookup mode of a comparison's left path (LANGUAGE.md §7.3.7, §8.5). */
export function leftMode(c: ComparisonCondition): LookupMode {
  return c.optional ? 'lenient' : c.op.name === 'is empty' && !c.measure ? 'empty' : 'strict';
}

/** Lookup mode of a comparison's right path, or of a quantifier's array path. */
export function operandMode(optional: boolean): LookupMode {
  return optional ? 'lenient' : 'strict';
}

/**
 * A right operand as the trace shows it (LANGUAGE.md §10.3 `value`): literal as its JSON value,
 * list as an array, period as its text; null for a path operand (its value is looked up) or none.
 */
export function operandValue(op: Operand | null): unknown {
  if (!op) return null;
  switch (op.kind) {
    case 'literal':
      return literalValue(op.literal);
    case 'list':
      return op.items.map(literalValue);
    case 'period':
      return op.text;
    case 'path':
      return null;
  }
}

/** Per-policy memo of path plans and tests, keyed by AST node. */
export class Lowering {
  private readonly plans = new Map<Path, PathPlan>();
  private readonly tests = new Map<ComparisonCondition, Test>();
  private readonly names = new Map<string, readonly string[]>();
  private readonly candidates = (name: string): readonly string[] => {
    let keys = this.names.get(name);
    if (keys === undefined) {
      keys = keyCandidates(name);
      this.names.set(name, keys);
    }
    return keys;
  };

  /**
   * The plan of `path` looked up in `mode`.
   * INVARIANT: a Path node is always looked up in the same mode (it belongs to one operand).
   */
  plan(path: Path, mode: LookupMode): PathPlan {
    let plan = this.plans.get(path);
    if (plan === undefined) {
      plan = planPath(path, mode, this.candidates);
      this.plans.set(path, plan);
    }
    return plan;
  }

  /** The positive test of comparison `c` (its right operand folded in). */
  test(c: ComparisonCondition): Test {
    let test = this.tests.get(c);
    if (test === undefined) {
      test = compileTest(c.op.name, c.right);
      this.tests.set(c, test);
    }
    return test;
  }
}
