import type { ErrorReason } from '@arbiter/contracts';
import type { FlowContent, FoundTarget } from '../domain/flow-checks.js';
import type { PolicyContent } from '../domain/policy-checks.js';

/**
 * A check run in a worker thread: compiling a schema being saved, and the parts of a publish that
 * compile rules and run saved tests, each saved test within `stepBudget` steps (LANGUAGE.md §8.1).
 */
export type CheckTask =
  | { kind: 'schema'; schema: Record<string, unknown> }
  | { kind: 'policy'; content: PolicyContent; stepBudget: number }
  | { kind: 'flowTests'; content: FlowContent; targets: [nodeId: string, target: FoundTarget][]; stepBudget: number };

/** What a check task answers. */
export type CheckResult = ErrorReason[];
