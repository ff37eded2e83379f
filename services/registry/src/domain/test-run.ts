import { isDeepStrictEqual } from 'node:util';
import type { CoverageReport, FlowPolicyNode, TestRunReport, TestRunResult } from '@arbiter/contracts';
import { FlowCoverage, runFlow, targetResolver, type ResolvedPolicy } from '@arbiter/flow';
import { compile, isRuleParseError, PolicyCoverage, type CompiledPolicy, type PolicyCoverageReport } from '@arbiter/rule-lang';
import type { FlowContent, NodeTarget } from './flow-checks.js';
import { schemaProblems, testSchemaProblem, type PolicyContent } from './policy-checks.js';

/** A policy's coverage report in the wire shape (the counts it counts, its uncovered parts). */
function policyCoverageOf(report: PolicyCoverageReport): CoverageReport {
  return {
    summary: { ...report.summary },
    uncovered: report.uncovered.map(({ kind, text, line, column, seen }) => ({ kind, text, line, column, seen: { ...seen } })),
  };
}

/** The report of a record whose saved tests cannot run at all (its rule does not parse): every test failed with `error`, nothing covered. */
function notRunnable(tests: readonly { name: string; expect: unknown }[], error: string): TestRunReport {
  return {
    passed: 0,
    failed: tests.length,
    results: tests.map((t) => ({ name: t.name, ok: false, expected: t.expect, actual: null, error })),
    coverage: { summary: { percent: 0 }, uncovered: [] },
  };
}

function tally(results: TestRunResult[], coverage: CoverageReport): TestRunReport {
  const passed = results.filter((r) => r.ok).length;
  return { passed, failed: results.length - passed, results, coverage };
}

/**
 * Runs a policy's saved tests, each within `stepBudget` steps, counting their coverage
 * (docs/api.md#saved-tests-and-coverage): each test's result against its expectation (a test whose
 * data breaks the schema, or whose run stops with an error, fails with that error), and what the
 * tests covered of the rule. A rule that does not parse fails every test with its parse error.
 */
export function policyTestRun(content: PolicyContent, stepBudget: number): TestRunReport {
  let policy: CompiledPolicy;
  try {
    policy = compile(content.rule);
  } catch (err) {
    if (!isRuleParseError(err)) throw err;
    return notRunnable(content.tests, err.message);
  }
  const coverage = new PolicyCoverage(policy, content.rule);
  const { compiled } = schemaProblems(content.schema);
  const results = content.tests.map((test, i): TestRunResult => {
    const schemaProblem = testSchemaProblem(compiled, test, i);
    if (schemaProblem) return { name: test.name, ok: false, expected: test.expect, actual: null, error: schemaProblem.message };
    const out = coverage.run(test.data, { stepBudget });
    if (out.error !== undefined) return { name: test.name, ok: false, expected: test.expect, actual: out.result, error: out.error };
    return { name: test.name, ok: out.result === test.expect, expected: test.expect, actual: out.result };
  });
  return tally(results, policyCoverageOf(coverage.report()));
}

/**
 * Runs a flow's saved tests against the policy records its nodes resolved to (`targets`, by node
 * id; a node that did not resolve stops each run that reaches it with the lookup's message),
 * counting the decision-table rows matched and the edges taken.
 */
export async function flowTestRun(content: FlowContent, targets: Map<string, NodeTarget>, stepBudget: number): Promise<TestRunReport> {
  const { compiled } = schemaProblems(content.schema);
  const resolved = targetResolver();
  const resolve = (_node: FlowPolicyNode, nodeId: string): Promise<ResolvedPolicy> => {
    const target = targets.get(nodeId);
    if (target === undefined || !target.ok) {
      const message = target?.message ?? `node \`${nodeId}\` names no policy`;
      const code = target?.code ?? 'unknown_policy';
      return Promise.resolve({
        policyId: '',
        version: null,
        run: () => ({ result: false, outcomes: {}, trace: [], error: message, errorCode: code }),
      });
    }
    return Promise.resolve(resolved(target));
  };
  const coverage = new FlowCoverage(content.definition);
  const results: TestRunResult[] = [];
  for (const [i, test] of content.tests.entries()) {
    const schemaProblem = testSchemaProblem(compiled, test, i);
    if (schemaProblem) {
      results.push({ name: test.name, ok: false, expected: test.expect, actual: null, error: schemaProblem.message });
      continue;
    }
    const out = await runFlow(content.definition, test.data, resolve, stepBudget, { trace: false });
    coverage.record(out);
    results.push(
      out.error !== undefined
        ? { name: test.name, ok: false, expected: test.expect, actual: out.result, error: out.error }
        : { name: test.name, ok: isDeepStrictEqual(out.result, test.expect), expected: test.expect, actual: out.result },
    );
  }
  return tally(results, coverage.report());
}
