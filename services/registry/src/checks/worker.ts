import { flowTestProblems } from '../domain/flow-checks.js';
import { policyPublishProblems } from '../domain/policy-checks.js';
import type { CheckResult, CheckTask } from './tasks.js';

/** Piscina task: compiles the rules and runs the saved tests of a publish, off the main thread. */
export default async function runCheck(task: CheckTask): Promise<CheckResult> {
  switch (task.kind) {
    case 'policy':
      return policyPublishProblems(task.content, task.stepBudget);
    case 'flowTests':
      return flowTestProblems(task.content, new Map(task.targets), task.stepBudget);
  }
}
