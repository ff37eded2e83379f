/** Typed AST of a policy. Every node has a span; no ANTLR types past this layer. */

import type { CanonicalOperator } from '../operators/catalogue.js';
import type { Operand, Path, Span } from './operands.js';

export type { Literal, Operand, Path, PathStep, PeriodUnit, Span, StepKind } from './operands.js';

/** The operator of a comparison: its canonical (positive) name and whether it was negated. */
export interface OperatorUse {
  name: CanonicalOperator;
  negated: boolean;
  /** The words as written, lower-cased and single-spaced (`does not contain`, `>=`). */
  written: string;
  span: Span;
}

export type LogicalOp = 'and' | 'or';

/** Conditions joined by and/or: `ops[i]` joins `items[i]` and `items[i + 1]`. */
export interface ConditionList {
  items: Condition[];
  ops: LogicalOp[];
}

export interface ComparisonCondition {
  kind: 'comparison';
  /** `length of` / `number of` measures; null for a plain comparison. */
  measure: 'length' | 'number' | null;
  left: Path;
  op: OperatorUse;
  right: Operand | null;
  optional: boolean;
  span: Span;
}

export interface QuantifierCondition {
  kind: 'quantifier';
  quantifier: 'any' | 'all';
  path: Path;
  body: ConditionList;
  optional: boolean;
  span: Span;
}

export interface LabelReference {
  kind: 'labelRef';
  label: string;
  span: Span;
}

export interface RuleReference {
  kind: 'ruleRef';
  /** The selector as written (descriptive only). */
  selector: string;
  /** The reference phrase as written. */
  phrase: string;
  span: Span;
}

export interface GroupCondition {
  kind: 'group';
  body: ConditionList;
  span: Span;
}

export type Condition = ComparisonCondition | QuantifierCondition | LabelReference | RuleReference | GroupCondition;

export interface Rule {
  form: 'verbose' | 'shorthand';
  label: string | null;
  /** The subject selector as written, without asterisks; null for shorthand rules. */
  subject: string | null;
  /** The outcome verb as written, dropped from the outcome name (LANGUAGE.md §3.4); null when none was. */
  verb: string | null;
  /** Outcome name (LANGUAGE.md §3.4). */
  outcome: string;
  /** Lower-cased outcome name used to match references. */
  outcomeKey: string;
  conditions: ConditionList;
  span: Span;
  outcomeSpan: Span;
}

export interface PolicyAst {
  rules: Rule[];
  /** The policy text the spans point into (reasons quote it). */
  source: string;
}
