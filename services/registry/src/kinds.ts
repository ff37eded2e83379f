import type { FlowPolicyNode, FlowTest, PolicyTest } from '@arbiter/contracts';
import { validateDefinition } from '@arbiter/flow';
import type { Knex } from 'knex';
import { flowPublishProblems, type NodeTarget } from './domain/flow-checks.js';
import { policyPublishProblems } from './domain/policy-checks.js';
import type { KindSpec } from './records-service.js';
import { findBase, findRecordWithBase, findVersion, getRecord } from './repositories/records.js';

/** Policies: any rule text may be saved; publishing runs the policy checks. */
export const policyKind: KindSpec = {
  kind: 'policy',
  saveProblems: () => [],
  publishProblems: async (content) =>
    policyPublishProblems({ rule: content.rule ?? '', schema: content.schema, tests: content.tests as PolicyTest[] }),
};

/** Flows: the definition must be a valid DAG to be saved; publishing also resolves nodes and runs tests. */
export const flowKind: KindSpec = {
  kind: 'flow',
  saveProblems: (content) => (content.definition ? validateDefinition(content.definition) : []),
  publishProblems: async (content, trx, orgId) =>
    flowPublishProblems(
      { definition: content.definition!, schema: content.schema, tests: content.tests as FlowTest[] },
      (node, nodeId) => lookupNode(trx, orgId, node, nodeId),
    ),
};

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
