import type { ErrorReason, FlowChecksReply, FlowDefinition, PolicyChecksReply, TestRunReport } from '@arbiter/contracts';
import type { FlowContent, FoundTarget, NodeTarget } from '../domain/flow-checks.js';
import type { PolicyContent } from '../domain/policy-checks.js';

/**
 * A check run in a worker thread: compiling a schema being saved, and the parts of a publish that
 * compile rules and run saved tests, each saved test within `stepBudget` steps (LANGUAGE.md §8.1).
 */
export type CheckTask =
  | { kind: 'schema'; schema: Record<string, unknown> }
  | DefinitionsTask
  | { kind: 'policy'; content: PolicyContent; stepBudget: number }
  | { kind: 'staticChecks'; rule: string }
  | { kind: 'tableChecks'; definition: FlowDefinition }
  | { kind: 'flowTests'; content: FlowContent; targets: [nodeId: string, target: FoundTarget][]; stepBudget: number }
  | TestRunTask;

/** The saved tests of a policy or flow run with coverage (`POST /policy/{baseId}/tests/run` and the `minCoverage` gate). */
export type TestRunTask =
  | { kind: 'policyTestRun'; content: PolicyContent; stepBudget: number }
  | { kind: 'flowTestRun'; content: FlowContent; targets: [nodeId: string, target: NodeTarget][]; stepBudget: number };

/**
 * The structural checks of flow definitions (`validateDefinition`), which compile their decision
 * tables: a big table takes long, so it never runs on the thread that serves everyone.
 */
export interface DefinitionsTask {
  kind: 'definitions';
  definitions: FlowDefinition[];
}

/**
 * What a check task answers: its reasons; for `definitions`, each definition's problems in order;
 * for a test run, its report; for `staticChecks` and `tableChecks`, the findings.
 */
export type CheckResult = ErrorReason[] | ErrorReason[][] | TestRunReport | PolicyChecksReply | FlowChecksReply;
