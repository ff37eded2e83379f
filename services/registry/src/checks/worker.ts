import { validateDefinition } from '@arbiter/flow';
import { flowTestProblems, tableCheckProblems, tableStaticChecks } from '../domain/flow-checks.js';
import { policyPublishProblems, schemaProblems, staticChecks } from '../domain/policy-checks.js';
import { flowTestRun, policyTestRun } from '../domain/test-run.js';
import type { CheckResult, CheckTask } from './tasks.js';

/** Piscina task: compiles a schema, flow definitions' tables, or the rules and saved tests of a publish or a test run, off the main thread. */
export default async function runCheck(task: CheckTask): Promise<CheckResult> {
  switch (task.kind) {
    case 'schema':
      return schemaProblems(task.schema).problems;
    case 'definitions':
      return task.definitions.map((definition) => validateDefinition(definition));
    case 'policy':
      return policyPublishProblems(task.content, task.stepBudget);
    case 'staticChecks':
      return staticChecks(task.rule);
    case 'tableChecks':
      return tableStaticChecks(task.definition);
    case 'flowTests': {
      // The tables' static-check errors block a publish like failing tests; their warnings never do.
      const tables = tableCheckProblems(task.content.definition);
      return [...tables, ...(await flowTestProblems(task.content, new Map(task.targets), task.stepBudget))];
    }
    case 'policyTestRun':
      return policyTestRun(task.content, task.stepBudget);
    case 'flowTestRun':
      return flowTestRun(task.content, new Map(task.targets), task.stepBudget);
  }
}
