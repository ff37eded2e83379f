/**
 * @arbiter/flow: flow definitions (docs/api.md#policies-and-flows). Validation of the DAG and execution over a
 * policy resolver the caller provides; decision-table nodes run here. Pure: no I/O.
 */
export { parseDefinition, type ParsedDefinition } from './parse.js';
export { validateDefinition } from './validate.js';
export {
  DEFAULT_FLOW_STEP_BUDGET,
  NO_ROUTE,
  runFlow,
  runTableNode,
  type FlowRunOptions,
  type FlowStepBudget,
  type PolicyResolver,
  type PolicyRunResult,
  type ResolvedPolicy,
  type TableRun,
  type TableRunner,
} from './run.js';
export type { FlowProblem, FlowProblemCode } from './problems.js';
export { FlowCoverage } from './coverage.js';
export { targetResolver, type PolicyTarget } from './policy-targets.js';
export { compileTable, routeOnOf, type CompiledTable, type TableCompilation } from './table/compile.js';
export { checkTable, TABLE_CHECK_WORK, type TableCheck, type TableCheckKind, type TableChecks } from './table/checks.js';
export { evaluateTable, TABLE_CONFLICT, TABLE_NOT_UNIQUE, type TableOutcome, type TableRunOptions } from './table/evaluate.js';
