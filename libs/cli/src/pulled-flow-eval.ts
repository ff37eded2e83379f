/**
 * `rules eval --bundle DIR --base ID` of a flow: the flow record picked on its timeline, its policy
 * nodes found in the same pulled directory as the service finds them (a record or version the node
 * pins, else the version of the node's base in effect at the same instant), answered as
 * `POST /run/flow/{baseId}` answers (`@arbiter/run`'s node and table answers, each policy's schema
 * checked first). No I/O here.
 */

import type { FlowDefinition, FlowPolicyNode, FlowRunResponse } from '@arbiter/contracts';
import { runFlow, type ResolvedPolicy } from '@arbiter/flow';
import {
  answerTable,
  compileDataSchema,
  compileRule,
  missingPolicyNode,
  policyNode,
  type CompiledRule,
  type DataSchema,
  type ResolvedRun,
} from '@arbiter/run';
import { isJsonObject } from './output.js';
import { pickPulled } from './pulled-versions.js';

type PulledBase = Record<string, unknown>;
type PulledRecord = Record<string, unknown>;

const recordsOf = (base: PulledBase): PulledRecord[] => (Array.isArray(base.records) ? base.records.filter(isJsonObject) : []);

/** The pulled policy record a node runs at `at` (epoch ms), or the service's message for one it cannot find. */
function nodeRecord(policies: readonly PulledBase[], node: FlowPolicyNode, at: number): PulledRecord | string {
  if (node.policyId !== undefined) {
    return policies.flatMap(recordsOf).find((r) => r.recordId === node.policyId) ?? `policy \`${node.policyId}\` not found`;
  }
  const base = policies.find((b) => b.baseId === node.baseId);
  if (base === undefined) return `policy \`${node.baseId!}\` not found`;
  const records = recordsOf(base);
  if (node.version !== undefined) {
    return records.find((r) => r.version === node.version) ?? `policy \`${node.baseId!}\` has no version ${node.version}`;
  }
  const pick = pickPulled(records, at);
  if ('record' in pick) return pick.record;
  if ('before' in pick) {
    return `policy \`${node.baseId!}\` has no version in effect at ${new Date(at).toISOString()}: its first takes effect at ${new Date(pick.before).toISOString()}`;
  }
  return `policy \`${node.baseId!}\` not found`;
}

/**
 * Runs `definition` on `data` with `run` (its trace, clock, flags and step budget), each policy
 * node on the record of `policies` it names or, following a base, the one in effect at `at`.
 */
export function runPulledFlow(
  definition: FlowDefinition,
  policies: readonly PulledBase[],
  at: number,
  data: Record<string, unknown>,
  run: ResolvedRun,
): Promise<FlowRunResponse> {
  const compiled = new Map<string, { rule: CompiledRule; schema: DataSchema | null }>();
  const resolve = (node: FlowPolicyNode): ResolvedPolicy => {
    const found = nodeRecord(policies, node, at);
    if (typeof found === 'string') return missingPolicyNode(node.policyId ?? node.baseId!, node.version ?? null, found, run);
    const policyId = typeof found.recordId === 'string' ? found.recordId : '';
    let policy = compiled.get(policyId);
    if (policy === undefined) {
      policy = {
        rule: compileRule(typeof found.rule === 'string' ? found.rule : ''),
        schema: isJsonObject(found.schema) ? compileDataSchema(found.schema) : null,
      };
      compiled.set(policyId, policy);
    }
    const version = typeof found.version === 'number' ? found.version : null;
    return policyNode(policyId, version, policy.rule, run, policy.schema === null ? undefined : { schema: policy.schema });
  };
  return runFlow(definition, data, (node) => Promise.resolve(resolve(node)), run.stepBudget, {
    trace: run.trace,
    runTable: (nodeId, node, budget) => answerTable(nodeId, node, data, run, budget),
  });
}
