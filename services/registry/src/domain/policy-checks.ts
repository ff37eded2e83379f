import { isDeepStrictEqual } from 'node:util';
import type { ErrorReason, PolicyChecksReply, PolicyTest } from '@arbiter/contracts';
import { compile, DEFAULT_STEP_BUDGET, isRuleParseError, policyChecks, readPaths, type CompiledPolicy } from '@arbiter/rule-lang';
import { compileSchema, schemaMismatch, type CompiledSchema } from './json-schema.js';
import { formatPath, missingSchemaPaths } from './schema-paths.js';

/** What publishing a policy checks. */
export interface PolicyContent {
  rule: string;
  schema: Record<string, unknown> | null;
  tests: PolicyTest[];
}

/**
 * The static checks of a policy text (warnings; the rule language's `policyChecks`). A text that
 * does not parse has none: its parse error is what `/validate` and publishing report.
 */
export function staticChecks(rule: string): PolicyChecksReply {
  try {
    const { checks, complete } = policyChecks(rule);
    return { checks, checksComplete: complete };
  } catch (err) {
    if (isRuleParseError(err)) return { checks: [], checksComplete: true };
    throw err;
  }
}

/** The schema's own problem, if any (`invalid_schema`), and the compiled schema otherwise. */
export function schemaProblems(schema: Record<string, unknown> | null): { compiled: CompiledSchema | null; problems: ErrorReason[] } {
  if (schema === null) return { compiled: null, problems: [] };
  const compiled = compileSchema(schema);
  return { compiled, problems: compiled.ok ? [] : [{ code: 'invalid_schema', message: compiled.message, path: 'schema' }] };
}

/** A result as a failing test shows it: a boolean or outcome as is, a table's output object or list as JSON. */
function shown(v: unknown): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

/**
 * Why a saved test's outcome is wrong, or null when it passed. A flow ending at a decision table
 * gives an output object (or list): it must equal the expected one deeply (object keys in any order).
 */
export function testFailure(name: string, expected: unknown, got: { result: unknown; error?: string }): string | null {
  if (got.error !== undefined) return `test \`${name}\`: ${got.error}`;
  if (!isDeepStrictEqual(got.result, expected)) return `test \`${name}\`: expected \`${shown(expected)}\`, got \`${shown(got.result)}\``;
  return null;
}

/** Reason of a saved test whose data breaks the schema, or null. */
export function testSchemaProblem(
  compiled: CompiledSchema | null,
  test: { name: string; data: unknown },
  index: number,
): ErrorReason | null {
  if (!compiled?.ok) return null;
  const mismatch = schemaMismatch(compiled.validate, test.data);
  return mismatch === null
    ? null
    : { code: 'test_failed', message: `test \`${test.name}\`: data does not match the schema: ${mismatch}`, path: `tests.${index}` };
}

/**
 * Every reason a policy cannot be published (docs/api.md#policies-and-flows), empty when it can: the rule parses and
 * checks with exactly one golden rule (`parse_error`); the schema, when present, is valid
 * (`invalid_schema`) and holds every path the rule reads (`schema_path_missing`); every saved test
 * passes (`test_failed`, including test data that breaks the schema, and a test that needs more
 * than `stepBudget` steps: `budget_exceeded` in a run). Tests are not run when the rule does not parse.
 */
export function policyPublishProblems(content: PolicyContent, stepBudget: number = DEFAULT_STEP_BUDGET): ErrorReason[] {
  const problems: ErrorReason[] = [];
  let policy: CompiledPolicy | null = null;
  try {
    policy = compile(content.rule);
  } catch (err) {
    if (!isRuleParseError(err)) throw err;
    problems.push({ code: 'parse_error', message: err.message, path: 'rule' });
  }
  const { compiled, problems: schemaIssues } = schemaProblems(content.schema);
  problems.push(...schemaIssues);
  if (policy && compiled?.ok && content.schema) {
    for (const { path, missingAt } of missingSchemaPaths(content.schema, readPaths(content.rule))) {
      const at = formatPath(path.slice(0, missingAt + 1));
      problems.push({
        code: 'schema_path_missing',
        message: `the rule reads \`${formatPath(path)}\` but the schema has no \`${at}\``,
        path: 'rule',
      });
    }
  }
  if (policy) {
    content.tests.forEach((test, i) => {
      const schemaProblem = testSchemaProblem(compiled, test, i);
      if (schemaProblem) {
        problems.push(schemaProblem);
        return;
      }
      const failure = testFailure(test.name, test.expect, policy.evaluate(test.data, { stepBudget }));
      if (failure) problems.push({ code: 'test_failed', message: failure, path: `tests.${i}` });
    });
  }
  return problems;
}
