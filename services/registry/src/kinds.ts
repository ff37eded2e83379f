import type { FlowPolicyNode, FlowTest, PolicyTest } from '@arbiter/contracts';
import { validateDefinition } from '@arbiter/flow';
import type { Knex } from 'knex';
import type { PublishChecks } from './checks/check-pool.js';
import { flowNodeProblems, type NodeTarget } from './domain/flow-checks.js';
import type { KindSpec } from './records-service.js';
import { findBase, findRecordWithBase, findVersion, getRecord } from './repositories/records.js';

/** Policies: any rule text may be saved; publishing runs the policy checks (in a worker, with a deadline). */
export function policyKind(checks: PublishChecks): KindSpec {
  return {
    kind: 'policy',
    saveProblems: () => [],
    publishProblems: (content) => checks.policy({ rule: content.rule ?? '', schema: content.schema, tests: content.tests as PolicyTest[] }),
  };
}

/**
 * Flows: the definition must be a valid DAG to be saved; publishing also resolves the nodes (here,
 * in the publishing transaction) and then runs the saved tests (in a worker, with a deadline).
 */
export function flowKind(checks: PublishChecks): KindSpec {
  return {
    kind: 'flow',
    saveProblems: (content) => (content.definition ? validateDefinition(content.definition) : []),
    publishProblems: async (content, trx, orgId) => {
      const flow = { definition: content.definition!, schema: content.schema, tests: content.tests as FlowTest[] };
      const { problems, targets } = await flowNodeProblems(flow, (node, nodeId) => lookupNode(trx, orgId, node, nodeId));
      return problems.length > 0 ? problems : checks.flowTests(flow, targets);
    },
  };
}

/** The live policy record a flow node runs, looked up in the publishing transaction. */
async function lookupNode(trx: Knex.Transaction, orgId: string, node: FlowPolicyNode, nodeId: string): Promise<NodeTarget> {
  if (node.policyId !== undefined) {
    const found = await findRecordWithBase(trx, node.policyId, orgId, 'policy');
    if (!found || found.base.deletedAt !== null) {
      return { ok: false, code: 'unknown_policy', message: `node \`${nodeId}\`: policy \`${node.policyId}\` does not exist` };
    }
    return { ok: true, policyId: found.record.id, version: found.record.version, rule: found.record.rule ?? '' };
  }
  const base = await findBase(trx, node.baseId!, orgId, 'policy');
  if (!base || base.deletedAt !== null) {
    return { ok: false, code: 'unknown_policy', message: `node \`${nodeId}\`: policy base \`${node.baseId}\` does not exist` };
  }
  const record = node.version !== undefined ? await findVersion(trx, base.id, node.version) : await getRecord(trx, base.currentRecordId);
  if (!record) {
    return { ok: false, code: 'unknown_version', message: `node \`${nodeId}\`: policy base \`${base.id}\` has no version ${node.version}` };
  }
  return { ok: true, policyId: record.id, version: record.version, rule: record.rule ?? '' };
}
