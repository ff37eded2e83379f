/**
 * @arbiter/flow: flow definitions (DESIGN.md §5). Validation of the DAG and execution over a
 * policy resolver the caller provides. Pure: no I/O.
 */
export { parseDefinition, type ParsedDefinition } from './parse.js';
export { validateDefinition } from './validate.js';
export {
  DEFAULT_FLOW_STEP_BUDGET,
  runFlow,
  type FlowStepBudget,
  type PolicyResolver,
  type PolicyRunResult,
  type ResolvedPolicy,
} from './run.js';
export type { FlowProblem, FlowProblemCode } from './problems.js';
