import type { ErrorReason, FlowDefinition, FlowPolicyNode, FlowTest, PolicyTest } from '@arbiter/contracts';
import type { Knex } from 'knex';
import type { PublishChecks } from './checks/check-pool.js';
import { flowNodeProblems, type NodeTarget } from './domain/flow-checks.js';
import { pinnedDefinition, reviewedPins, type ReviewedTarget } from './domain/flow-review.js';
import type { KindSpec } from './records-service.js';
import { findBase, findRecordWithBase, findVersion, getRecord, liveReferences } from './repositories/records.js';

/** Policies: any rule text may be saved, with a schema ajv compiles; publishing runs the policy checks (in a worker, with a deadline). */
export function policyKind(checks: PublishChecks): KindSpec {
  return {
    kind: 'policy',
    saveProblems: () => Promise.resolve([]),
    schemaProblems: (schema) => checks.schema(schema),
    referenceProblems: () => Promise.resolve([]),
    publishProblems: (content) => checks.policy({ rule: content.rule ?? '', schema: content.schema, tests: content.tests as PolicyTest[] }),
    testRun: (content) => checks.policyTestRun({ rule: content.rule ?? '', schema: content.schema, tests: content.tests as PolicyTest[] }),
    staticChecks: (rule) => checks.staticChecks(rule),
  };
}

/**
 * Flows: the definition must be a valid DAG whose policy nodes name live policies of the org to be
 * saved (the DAG checked in a worker: it compiles the decision tables); publishing also resolves
 * the nodes (here, in the publishing transaction) and then runs the saved tests (in a worker, with
 * a deadline). A publish through review also needs every node to run a published version, and pins them.
 */
export function flowKind(checks: PublishChecks): KindSpec {
  return {
    kind: 'flow',
    saveProblems: async (content) => (content.definition ? (await checks.definitions([content.definition]))[0] : []),
    tableChecks: (definition) => checks.tableChecks(definition),
    schemaProblems: (schema) => checks.schema(schema),
    referenceProblems: (content, db, orgId) =>
      content.definition ? nodeReferenceProblems(db, orgId, content.definition) : Promise.resolve([]),
    publishProblems: async (content, trx, orgId) => {
      const flow = { definition: content.definition!, schema: content.schema, tests: content.tests as FlowTest[] };
      const [structure] = await checks.definitions([flow.definition]);
      const { problems, targets } = await flowNodeProblems(flow, structure, (node, nodeId) => lookupNode(trx, orgId, node, nodeId));
      return problems.length > 0 ? problems : checks.flowTests(flow, targets);
    },
    reviewedProblems: (content, db, orgId) => reviewedPins(content.definition!, (node) => reviewedTarget(db, orgId, node)),
    testRun: async (content, db, orgId) => {
      // A version published through review runs the policy versions it pinned, as its runs do.
      const definition = pinnedDefinition(content.definition!, content.pinnedVersions ?? null);
      const flow = { definition, schema: content.schema, tests: content.tests as FlowTest[] };
      const targets = new Map<string, NodeTarget>();
      for (const [nodeId, node] of Object.entries(definition.nodes)) {
        if (node.type === 'policy') targets.set(nodeId, await lookupNode(db, orgId, node, nodeId));
      }
      return checks.flowTestRun(flow, targets);
    },
  };
}

/** What a flow node names, for the reviewed-text check (the publish checks report what is missing). */
async function reviewedTarget(db: Knex | Knex.Transaction, orgId: string, node: FlowPolicyNode): Promise<ReviewedTarget> {
  if (node.policyId !== undefined) {
    const found = await findRecordWithBase(db, node.policyId, orgId, 'policy');
    return !found || found.base.deletedAt !== null ? { kind: 'missing' } : { kind: 'record', status: found.record.status };
  }
  const base = await findBase(db, node.baseId!, orgId, 'policy');
  return !base || base.deletedAt !== null ? { kind: 'missing' } : { kind: 'base', latestVersion: base.latestVersion };
}

/** The live policy record a flow node runs, looked up in the publishing transaction. */
async function lookupNode(trx: Knex | Knex.Transaction, orgId: string, node: FlowPolicyNode, nodeId: string): Promise<NodeTarget> {
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

/**
 * The policy nodes of a definition that name a missing, deleted or other-org policy, or a pinned
 * version that does not exist: 400 at save, with the node's field as path.
 */
async function nodeReferenceProblems(db: Knex, orgId: string, definition: FlowDefinition): Promise<ErrorReason[]> {
  const nodes = Object.entries(definition.nodes).flatMap(([id, node]) => (node.type === 'policy' ? [[id, node] as const] : []));
  if (nodes.length === 0) return [];
  const found = await liveReferences(db, orgId, 'policy', {
    recordIds: nodes.flatMap(([, n]) => (n.policyId === undefined ? [] : [n.policyId])),
    baseIds: nodes.flatMap(([, n]) => (n.baseId === undefined ? [] : [n.baseId])),
    versions: nodes.flatMap(([, n]) =>
      n.baseId === undefined || n.version === undefined ? [] : [[n.baseId, n.version] as [string, number]],
    ),
  });
  const problems: ErrorReason[] = [];
  for (const [id, node] of nodes) {
    const path = `definition.nodes.${id}`;
    if (node.policyId !== undefined) {
      if (!found.recordIds.has(node.policyId)) {
        problems.push({
          code: 'unknown_policy',
          message: `node \`${id}\`: policy \`${node.policyId}\` does not exist`,
          path: `${path}.policyId`,
        });
      }
    } else if (!found.baseIds.has(node.baseId!)) {
      problems.push({
        code: 'unknown_policy',
        message: `node \`${id}\`: policy base \`${node.baseId}\` does not exist`,
        path: `${path}.baseId`,
      });
    } else if (node.version !== undefined && !found.versions.has(`${node.baseId}:${node.version}`)) {
      problems.push({
        code: 'unknown_version',
        message: `node \`${id}\`: policy base \`${node.baseId}\` has no version ${node.version}`,
        path: `${path}.version`,
      });
    }
  }
  return problems;
}
