import type { ErrorReason, FlowChecksReply, FlowDefinition, FlowPolicyNode, FlowTest } from '@arbiter/contracts';
import { checkTable, runFlow, targetResolver, type ResolvedPolicy } from '@arbiter/flow';
import { DEFAULT_STEP_BUDGET } from '@arbiter/rule-lang';
import { schemaProblems, testFailure, testSchemaProblem } from './policy-checks.js';

/** What publishing a flow checks. */
export interface FlowContent {
  definition: FlowDefinition;
  schema: Record<string, unknown> | null;
  tests: FlowTest[];
}

/** The policy record a flow node runs, or why it cannot be found. */
export type NodeTarget =
  { ok: true; policyId: string; version: number | null; rule: string } | { ok: false; code: string; message: string };

/** Looks up the live policy record of a node (same org, base not deleted); supplied by the caller. */
export type NodeLookup = (node: FlowPolicyNode, nodeId: string) => Promise<NodeTarget>;

/** A flow node's policy as found by the lookup. */
export type FoundTarget = Extract<NodeTarget, { ok: true }>;

/**
 * The reasons found without running anything: the definition is a valid DAG (`structure`: what
 * `validateDefinition` found, checked in a worker by the caller), every policy node resolves to a live policy of the org and its pinned version exists
 * (`unknown_policy`, `unknown_version`), the schema is valid. Also the node targets, by node id,
 * that {@link flowTestProblems} runs the saved tests with.
 */
export async function flowNodeProblems(
  content: FlowContent,
  structure: readonly ErrorReason[],
  lookup: NodeLookup,
): Promise<{ problems: ErrorReason[]; targets: Map<string, FoundTarget> }> {
  const problems: ErrorReason[] = [...structure];
  const targets = new Map<string, FoundTarget>();
  for (const [nodeId, node] of Object.entries(content.definition.nodes)) {
    if (node.type !== 'policy') continue;
    const target = await lookup(node, nodeId);
    if (target.ok) targets.set(nodeId, target);
    else problems.push({ code: target.code, message: target.message, path: `nodes.${nodeId}` });
  }
  problems.push(...schemaProblems(content.schema).problems);
  return { problems, targets };
}

/** Every saved test that does not give its expected result (`test_failed`), run against `targets`. */
export async function flowTestProblems(
  content: FlowContent,
  targets: Map<string, FoundTarget>,
  stepBudget: number = DEFAULT_STEP_BUDGET,
): Promise<ErrorReason[]> {
  const problems: ErrorReason[] = [];
  const { compiled } = schemaProblems(content.schema);
  const resolved = targetResolver();
  const resolve = (_node: FlowPolicyNode, nodeId: string): Promise<ResolvedPolicy> => Promise.resolve(resolved(targets.get(nodeId)!));
  for (const [i, test] of content.tests.entries()) {
    const schemaProblem = testSchemaProblem(compiled, test, i);
    if (schemaProblem) {
      problems.push(schemaProblem);
      continue;
    }
    const out = await runFlow(content.definition, test.data, resolve, stepBudget, { trace: false });
    const failure = testFailure(test.name, test.expect, out);
    if (failure) problems.push({ code: 'test_failed', message: failure, path: `tests.${i}` });
  }
  return problems;
}

/**
 * The static-check errors of the flow's decision tables (rules that overlap under `unique`, or under
 * `any` with different outputs), each with an input that shows it; warnings (gaps, rules never
 * chosen, rules that never match) do not block and are not reasons.
 */
export function tableCheckProblems(definition: FlowDefinition): ErrorReason[] {
  const problems: ErrorReason[] = [];
  for (const [nodeId, node] of Object.entries(definition.nodes)) {
    if (node.type !== 'table') continue;
    for (const check of checkTable(nodeId, node).checks) {
      if (check.severity !== 'error') continue;
      problems.push({
        code: check.check === 'overlap' ? 'table_overlap' : 'table_conflict',
        message: `${check.message}, e.g. ${JSON.stringify(check.example)}`,
        path: check.path,
      });
    }
  }
  return problems;
}

/**
 * Every static-check finding of the flow's decision tables, errors and warnings, in node order
 * (the answers of flow saves carry them; docs/tables.md#static-checks-publish). A table that does
 * not compile has none here: saving refuses it first.
 */
export function tableStaticChecks(definition: FlowDefinition): FlowChecksReply {
  const out: FlowChecksReply = { checks: [], checksComplete: true };
  for (const [nodeId, node] of Object.entries(definition.nodes)) {
    if (node.type !== 'table') continue;
    let found;
    try {
      found = checkTable(nodeId, node);
    } catch {
      continue;
    }
    if (!found.complete) out.checksComplete = false;
    for (const c of found.checks) {
      out.checks.push({
        check: c.check,
        severity: c.severity,
        message: c.message,
        path: c.path,
        rules: c.rules,
        ...(c.example !== undefined && { example: c.example }),
      });
    }
  }
  return out;
}
