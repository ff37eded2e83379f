/**
 * @arbiter/rule-lang: the policy rule language. Pure: no I/O.
 *
 * compile(text) → CompiledPolicy → evaluate(data); plus evaluate/validate/explain/listOperators
 * in the shapes of docs/LANGUAGE.md §11–§12.
 */

import type { EvaluateOptions, EvaluationResult, ExplanationResult, Reason, Reasons, ValidationResult } from './api-types.js';
import { check, compile, selectorResolver } from './compile/compile.js';
import type { Condition } from './ast/types.js';
import { isRuleParseError, type RuleParseError } from './errors/rule-parse-error.js';
import { explainRules } from './explain/explain.js';
import { readPathsOf } from './analyze/read-paths.js';

export { compile };
export { CompiledPolicy } from './compile/policy.js';
export { DEFAULT_STEP_BUDGET, DEFAULT_TRACED_STEP_BUDGET, StepBudget } from './evaluate/budget.js';
export { RuleParseError, isRuleParseError, type Problem } from './errors/rule-parse-error.js';
export { listOperators } from './operators/catalogue.js';
export {
  PolicyCoverage,
  type CoverageCount,
  type CoverageItem,
  type CoverageKind,
  type CoverageSummary,
  type PolicyCoverageReport,
} from './evaluate/policy-coverage.js';
export { MAX_NESTING } from './parse/parse.js';
export { Work } from './check/work.js';
export { POLICY_CHECK_WORK, policyChecks, type PolicyCheck, type PolicyCheckKind, type PolicyChecks } from './check/policy-checks.js';
export { keyCandidates, keyFamily } from './compile/names.js';
/** A value as reasons' sentences and traces print it (strings quoted, long values cut with `…`). */
export { json as valueText } from './trace/text.js';
export { schemaRegExp, type SchemaRegExp } from './values/patterns.js';
export { ELEMENT } from './analyze/read-paths.js';
export {
  checkCell,
  checkColumnPath,
  isAnyCell,
  parseCell,
  parseColumnPath,
  type CellProblem,
  type ParsedCell,
} from './cells/parse-cell.js';
export { dayFromDateText } from './values/dates.js';
export {
  CellTableError,
  compileCellTable,
  type CellRun,
  type CellRunError,
  type CellRunOptions,
  type CellScan,
  type CellTableProblem,
  type CellTrace,
  type CompiledCellTable,
} from './cells/cell-table.js';
export type {
  EngineErrorCode,
  EvaluateOptions,
  EvaluationResult,
  ExplainedCondition,
  ExplainedRule,
  ExplanationResult,
  OperatorInfo,
  Reason,
  ReasonKind,
  Reasons,
  StepBudgetLike,
  StructuredTrace,
  TraceCondition,
  TraceRule,
  ValidationResult,
} from './api-types.js';

/** Compiles and evaluates in one go; a parse error is folded into the result (`errorCode: 'parse_error'`). */
export function evaluate(text: string, data: unknown, options?: EvaluateOptions): EvaluationResult {
  let policy;
  try {
    policy = compile(text);
  } catch (err) {
    if (!isRuleParseError(err)) throw err;
    const traced = options?.trace || options?.traceTree;
    const failed: EvaluationResult = {
      result: false,
      outcomes: {},
      trace: traced ? [err.message] : [],
      error: err.message,
      errorCode: 'parse_error',
    };
    if (options?.reasons === true) failed.reasons = parseErrorReasons(err);
    return failed;
  }
  return policy.evaluate(data, options);
}

/** The reasons of a policy that does not parse: one `error` entry at the problem's place. */
function parseErrorReasons(err: RuleParseError): Reasons {
  const entry: Reason = {
    kind: 'error',
    rule: '',
    text: '',
    holds: false,
    error: err.message,
    line: err.line ?? 1,
    column: err.column ?? 1,
  };
  return { result: false, sentence: err.message, because: [entry] };
}

/** Syntax and static checks only (docs/LANGUAGE.md §12.1 validate_rule). */
export function validate(text: string): ValidationResult {
  try {
    check(text);
    return { valid: true, error: null };
  } catch (err) {
    if (!isRuleParseError(err)) throw err;
    return { valid: false, error: err.message };
  }
}

/** The structure of a policy (docs/LANGUAGE.md §12.2 explain_rule). */
export function explain(text: string): ExplanationResult {
  try {
    const checked = check(text);
    const targetOf = (c: Condition) => (c.kind === 'labelRef' || c.kind === 'ruleRef' ? checked.targets.get(c) : undefined);
    const rules = explainRules(checked.ast, selectorResolver(checked.ast, targetOf), targetOf);
    return { rule_count: rules.length, rules, error: null };
  } catch (err) {
    if (!isRuleParseError(err)) throw err;
    return { rule_count: 0, rules: [], error: err.message };
  }
}

/**
 * The data paths a policy reads, root first, as written; `ELEMENT` (`[]`) marks an array element
 * inside any/all. Throws {@link RuleParseError} when the policy does not parse or check.
 */
export function readPaths(text: string): string[][] {
  return readPathsOf(check(text).ast);
}
