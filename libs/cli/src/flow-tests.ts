/**
 * `rules test` of a flow: a pulled `flow.json` (or a bare definition) run against cases, its policy
 * nodes resolved from the pulled directory's policies, with the coverage of table rows and edges
 * the server's saved-test run reports (docs/api.md#saved-tests-and-coverage). No I/O here.
 */

import { isDeepStrictEqual } from 'node:util';
import { FlowDefinition, FlowResult, RUN_DEFAULTS, type CoverageReport, type FlowPolicyNode } from '@arbiter/contracts';
import { FlowCoverage, runFlow, targetResolver, type PolicyTarget, type ResolvedPolicy } from '@arbiter/flow';
import { BundleFileError, filesToBundle, type FileTree } from './bundle-files.js';
import { parseCaseList, usageFailure } from './commands.js';
import { CliUsageError, describeJson, isJsonObject, parseJson, type CommandOutput } from './output.js';
import { testOutput } from './test-summary.js';

/** Inputs of {@link runFlowTests}. */
export interface FlowTestInput {
  /** The flow file's text: a pulled `flow.json` (a base with its records) or a bare definition `{start, nodes}`. */
  flow: string;
  flowName: string;
  /** The cases' text; absent: the saved tests of the record tested (a pulled `flow.json` only). */
  cases?: string;
  casesName?: string;
  /** A pulled `flow.json`: the version to test; absent: the draft, else the latest version. */
  version?: number;
  /** The pulled directory's files, for the policy nodes (absent: a run reaching a policy node fails with `unknown_policy`). */
  bundle?: FileTree;
  now?: Date;
  stepBudget?: number;
  coverage?: boolean;
  minCoverage?: number;
  json?: boolean;
}

interface FlowCase {
  name: string;
  data: Record<string, unknown>;
  expect: FlowResult;
  now?: Date;
}

interface TestedRecord {
  definition: FlowDefinition;
  tests: unknown[];
  label: string;
}

/** The record `rules test` runs from the flow file. */
function testedRecord(json: unknown, input: FlowTestInput): TestedRecord {
  const name = input.flowName;
  if (isJsonObject(json) && 'nodes' in json && 'start' in json && !('records' in json)) {
    if (input.version !== undefined) throw new CliUsageError(`${name}: --version needs a pulled flow.json, not a bare definition`);
    return { definition: definitionOf(json, name), tests: [], label: 'the definition' };
  }
  if (!isJsonObject(json) || !Array.isArray(json.records))
    throw new CliUsageError(
      `${name}: expected a pulled flow.json ({baseId, records}) or a flow definition ({start, nodes}), got ${describeJson(json)}`,
    );
  const records = json.records.filter(isJsonObject);
  let record: Record<string, unknown> | undefined;
  if (input.version !== undefined) {
    record = records.find((r) => r.version === input.version);
    if (record === undefined) throw new CliUsageError(`${name}: the flow has no version ${input.version}`, { showUsage: false });
  } else {
    record = records.find((r) => r.status === 'draft') ?? latestVersion(records);
    if (record === undefined) throw new CliUsageError(`${name}: the flow has no records`, { showUsage: false });
  }
  const label = typeof record.version === 'number' ? `version ${record.version}` : 'the draft';
  return {
    definition: definitionOf(record.definition, `${name} (${label})`),
    tests: Array.isArray(record.tests) ? record.tests : [],
    label,
  };
}

function latestVersion(records: Record<string, unknown>[]): Record<string, unknown> | undefined {
  let best: Record<string, unknown> | undefined;
  for (const r of records) if (typeof r.version === 'number' && (best === undefined || r.version > (best.version as number))) best = r;
  return best;
}

/** `raw` as a flow definition, else a {@link CliUsageError} naming `where` and the first problem's place. */
export function definitionOf(raw: unknown, where: string): FlowDefinition {
  const parsed = FlowDefinition.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue.path.length > 0 ? ` at \`${issue.path.join('.')}\`` : '';
    throw new CliUsageError(`${where}: not a valid flow definition${at}: ${issue.message}`, { showUsage: false });
  }
  return parsed.data;
}

/** A flow's cases: `[{name, data, expect, now?}]`, `expect` the flow's result (compared deeply). */
function parseFlowCases(json: unknown, where: string): FlowCase[] {
  return parseCaseList(json, where, (expect, named) => {
    const expected = FlowResult.safeParse(expect);
    if (!expected.success)
      throw new CliUsageError(
        `${named}: \`expect\` must be the flow's result (a boolean, a string, or a table's output), got ${describeJson(expect)}`,
      );
    return expected.data;
  });
}

type NodeTarget = PolicyTarget | { code: string; message: string };

/** Finds each policy node's record in the pulled directory as a run by base id would: the pinned version, else the latest version, else the draft. */
function nodeLookup(bundle: FileTree | undefined): (node: FlowPolicyNode) => NodeTarget {
  const policies = bundle === undefined ? [] : (filesToBundle(bundle, new Date(0)).policies as unknown[]).filter(isJsonObject);
  return (node) => {
    const none = (message: string, code = 'unknown_policy'): NodeTarget => ({ code, message });
    if (bundle === undefined) return none('no pulled directory to find policies in (use --bundle DIR)');
    const records = (base: Record<string, unknown>) => (Array.isArray(base.records) ? base.records.filter(isJsonObject) : []);
    let record: Record<string, unknown> | undefined;
    if (node.policyId !== undefined) {
      record = policies.flatMap(records).find((r) => r.recordId === node.policyId);
      if (record === undefined) return none(`policy record \`${node.policyId}\` is not in the pulled directory`);
    } else {
      const base = policies.find((b) => b.baseId === node.baseId);
      if (base === undefined) return none(`policy \`${node.baseId}\` is not in the pulled directory`);
      const list = records(base);
      if (node.version !== undefined) {
        record = list.find((r) => r.version === node.version);
        if (record === undefined) return none(`policy \`${node.baseId}\` has no version ${node.version}`, 'unknown_version');
      } else record = latestVersion(list) ?? list.find((r) => r.status === 'draft');
      if (record === undefined) return none(`policy \`${node.baseId}\` has no records`);
    }
    return {
      policyId: typeof record.recordId === 'string' ? record.recordId : '',
      version: typeof record.version === 'number' ? record.version : null,
      rule: typeof record.rule === 'string' ? record.rule : '',
    };
  };
}

/** `coverage: rows 9/10, edges 4/4, 92.8 %`, then one indented line per uncovered row or edge. */
export function flowCoverageLines(report: CoverageReport): string[] {
  const { rows, edges, percent } = report.summary;
  const parts = [rows && `rows ${rows.covered}/${rows.total}`, edges && `edges ${edges.covered}/${edges.total}`].filter(Boolean);
  return [
    `coverage: ${[...parts, `${percent} %`].join(', ')}`,
    ...report.uncovered.map((item) =>
      item.kind === 'row' ? `  node ${item.nodeId}, row ${item.row}: ${item.text} (never matched)` : `  edge ${item.text} (never taken)`,
    ),
  ];
}

/**
 * `rules test FLOW.json`: runs the cases (or the record's saved tests) through the flow. One line
 * per case, then `N passed, M failed`, and with `coverage` the rows and edges left uncovered. Exit 0
 * when all pass (and coverage reaches `minCoverage`), 1 otherwise, 2 for unreadable input.
 */
export async function runFlowTests(input: FlowTestInput): Promise<CommandOutput> {
  let record: TestedRecord;
  let cases: FlowCase[];
  let lookup: (node: FlowPolicyNode) => NodeTarget;
  try {
    record = testedRecord(parseJson(input.flow, input.flowName), input);
    cases =
      input.cases === undefined
        ? parseFlowCases(record.tests, `${input.flowName} (${record.label}'s saved tests)`)
        : parseFlowCases(parseJson(input.cases, input.casesName ?? 'cases'), input.casesName ?? 'cases');
    lookup = nodeLookup(input.bundle);
  } catch (err) {
    if (err instanceof BundleFileError) return usageFailure('test', new CliUsageError(`the pulled directory: ${err.message}`));
    return usageFailure('test', err);
  }
  const resolved = targetResolver();
  const coverage = input.coverage === true ? new FlowCoverage(record.definition) : null;
  const stepBudget = input.stepBudget ?? RUN_DEFAULTS.stepBudget;
  const out: string[] = [];
  const results: Array<{ name: string; passed: boolean; expected: FlowResult; got: unknown; error?: string }> = [];
  for (const c of cases) {
    const now = c.now ?? input.now;
    const resolve = (node: FlowPolicyNode): Promise<ResolvedPolicy> => {
      const target = lookup(node);
      if ('code' in target) {
        const failed = { result: false, outcomes: {}, trace: [], error: target.message, errorCode: target.code };
        return Promise.resolve({ policyId: '', version: null, run: () => failed });
      }
      return Promise.resolve(resolved(target, now));
    };
    const run = await runFlow(record.definition, c.data, resolve, stepBudget, { trace: false, ...(now !== undefined && { now }) });
    coverage?.record(run);
    const passed = run.error === undefined && isDeepStrictEqual(run.result, c.expect);
    results.push({ name: c.name, passed, expected: c.expect, got: run.result, ...(run.error !== undefined && { error: run.error }) });
    if (passed) out.push(`✓ ${c.name}`);
    else
      out.push(
        `✗ ${c.name}: expected ${JSON.stringify(c.expect)}, got ${run.error === undefined ? JSON.stringify(run.result) : `error ${run.errorCode ?? ''}: ${run.error}`}`,
      );
  }
  return testOutput({
    lines: out,
    cases: results,
    coverage: coverage?.report(),
    coverageLines: flowCoverageLines,
    minCoverage: input.minCoverage,
    json: input.json,
    head: { tested: record.label },
  });
}
