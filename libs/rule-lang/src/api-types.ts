/** Public result and option shapes of @arbiter/rule-lang. Imports nothing: every stage may use it. */

/** Machine-readable engine error codes (LANGUAGE.md §9.1). */
export type EngineErrorCode = 'parse_error' | 'missing_selector' | 'missing_property' | 'budget_exceeded';

/** What an evaluation needs of a shared step budget (`StepBudget`): a plain `{limit, used}` object will do. */
export interface StepBudgetLike {
  readonly limit: number;
  used: number;
}

/** Options of `CompiledPolicy.evaluate`. */
export interface EvaluateOptions {
  /**
   * Build the human-readable trace `trace` (LANGUAGE.md §10.2), and only that. Off by default:
   * the hot path builds no strings.
   */
  trace?: boolean;
  /**
   * Also build the structured trace `traceTree` (LANGUAGE.md §10.3); implies `trace`. Off by
   * default: it takes a slower evaluation path that records every step as an object.
   */
  traceTree?: boolean;
  /** The clock: "today" is this instant's UTC calendar day. Defaults to the current time. */
  now?: Date | number;
  /**
   * The step budget (LANGUAGE.md §8.1): a number of steps (default `DEFAULT_STEP_BUDGET`, 1,000,000, or
   * `DEFAULT_TRACED_STEP_BUDGET`, 10,000, with a trace),
   * or a budget shared with other evaluations (a `StepBudget`, or any `{limit, used}`), whose
   * `used` this evaluation advances.
   * Past it the evaluation stops with `errorCode: 'budget_exceeded'`.
   */
  stepBudget?: number | StepBudgetLike;
  /**
   * Also say why the result came out (`reasons`, LANGUAGE.md §10.4): the conditions that decided
   * it, in the rule's own words. Off by default; without it the result is exactly as before.
   */
  reasons?: boolean;
}

/** What one evaluation returns. */
export interface EvaluationResult {
  /** The golden rule's value; false on any error. */
  result: boolean;
  /** Every rule's outcome name mapped to its value; empty on error. */
  outcomes: Record<string, boolean>;
  /** Human-readable steps (LANGUAGE.md §10.2); empty unless `trace` or `traceTree` was asked for. */
  trace: string[];
  /** Structured trace (LANGUAGE.md §10.3); present only when `traceTree` was asked for. */
  traceTree?: StructuredTrace;
  /** Error message, present only on a parse error, missing selector or property, or an exceeded step budget. */
  error?: string;
  errorCode?: EngineErrorCode;
  /** Why the result came out (LANGUAGE.md §10.4); present only when `reasons` was asked for. */
  reasons?: Reasons;
}

/** What kind of thing a reason is (LANGUAGE.md §10.4). */
export type ReasonKind = 'condition' | 'rule' | 'any' | 'all' | 'missing' | 'error' | 'table';

/**
 * One reason: a condition (or reference, quantifier, missing value, error, table row) that decided
 * a result, with its source text exactly as written (LANGUAGE.md §10.4).
 */
export interface Reason {
  kind: ReasonKind;
  /** The outcome name of the rule the text belongs to (a table node: the node's id). */
  rule: string;
  /** The source text exactly as written. */
  text: string;
  /** Whether the text held. */
  holds: boolean;
  /** The data path read (as found in the data: `driver.age`, `order.items[2].price`). */
  path?: string;
  /** The value found at `path` (after `length of` / `number of`: the measure). */
  value?: unknown;
  /** any/all: the index of the array element that decided. */
  element?: number;
  /** any that fails, all that holds, a table with no matching row: how many elements (rows) there were. */
  count?: number;
  /** missing/error: the engine's message. */
  error?: string;
  /** table: the 1-based number of the row. */
  row?: number;
  line: number;
  column: number;
  /** The reasons under a reference, a quantifier's element, or a table row's cells. */
  because?: Reason[];
}

/** Why a result came out (LANGUAGE.md §10.4). */
export interface Reasons {
  result: boolean;
  /** One sentence in the rule's own words: `<outcome> is <result> because …`. */
  sentence: string;
  because: Reason[];
  /** Present (true) when entries were left out to keep the reasons within their size cap. */
  truncated?: true;
}

/** LANGUAGE.md §10.3. */
export interface StructuredTrace {
  golden: string | null;
  rules: TraceRule[];
  error: string | null;
}

export interface TraceRule {
  outcome: string;
  label: string | null;
  selector: string;
  result: boolean;
  conditions: TraceCondition[];
  error?: string;
}

export type TraceCondition =
  | {
      type: 'comparison';
      logical_op: 'and' | 'or' | null;
      path: string;
      actual: unknown;
      measure?: 'length of' | 'number of';
      operator: string;
      /** The operator as written, e.g. `does not contain`. */
      written: string;
      negated: boolean;
      value: unknown;
      optional: boolean;
      skipped: boolean;
      result: boolean;
      error?: string;
    }
  | {
      type: 'rule_reference' | 'label_reference';
      logical_op: 'and' | 'or' | null;
      outcome: string;
      label?: string;
      result: boolean;
    }
  | {
      type: 'quantifier';
      logical_op: 'and' | 'or' | null;
      quantifier: 'any' | 'all';
      path: string;
      count: number;
      matched: number;
      optional: boolean;
      skipped: boolean;
      elements: { index: number; result: boolean; conditions: TraceCondition[] }[];
      result: boolean;
      error?: string;
    }
  | {
      type: 'group';
      logical_op: 'and' | 'or' | null;
      conditions: TraceCondition[];
      result: boolean;
    };

/** `validate` result (docs/LANGUAGE.md §12.1 validate_rule). */
export interface ValidationResult {
  valid: boolean;
  error: string | null;
}

/** One condition of an `explain` result (LANGUAGE.md §12.2). */
export interface ExplainedCondition {
  type: 'comparison' | 'rule_reference' | 'label_reference' | 'quantifier' | 'group';
  selector: string;
  property: string;
  operator: string;
  value: string;
  logical_op: 'and' | 'or' | null;
  optional: boolean;
  negated: boolean;
  conditions?: ExplainedCondition[];
}

/** One rule of an `explain` result. */
export interface ExplainedRule {
  label: string | null;
  selector: string;
  /** The outcome verb as written (`gets`, `qualifies for`), dropped from `outcome`; null when none was. */
  verb: string | null;
  outcome: string;
  conditions: ExplainedCondition[];
}

/** `explain` result (docs/LANGUAGE.md §12.2 explain_rule). */
export interface ExplanationResult {
  rule_count: number;
  rules: ExplainedRule[];
  error: string | null;
}

/** One entry of `listOperators()` (docs/LANGUAGE.md §12.3 list_operators). */
export interface OperatorInfo {
  operator: string;
  forms: string[];
}
