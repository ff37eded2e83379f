import type { ErrorReason, FlowDefinition, FlowPolicyNode } from '@arbiter/contracts';

/** What a policy node of a flow under review names, as looked up in the org. */
export type ReviewedTarget =
  /** An exact record: a version, or a draft. */
  | { kind: 'record'; status: 'draft' | 'published' }
  /** A base: its latest version, or null when it was never published. */
  | { kind: 'base'; latestVersion: number | null }
  /** Unknown or deleted: the publish checks report it. */
  | { kind: 'missing' };

/** Looks up what a node names (same org, live base); supplied by the caller. */
export type ReviewedLookup = (node: FlowPolicyNode, nodeId: string) => Promise<ReviewedTarget>;

/**
 * In a governed org a flow version runs reviewed text only: every policy node
 * must run a published version. A node naming a draft record, or a base that was never published,
 * is a problem (`unreviewed_policy`). A node naming a base without `version` is pinned to that
 * base's latest version (`pins`, by node id), recorded with the flow version so it keeps running
 * what it was reviewed with; a node with `version` or naming a version record is pinned already.
 */
export async function reviewedPins(
  definition: FlowDefinition,
  lookup: ReviewedLookup,
): Promise<{ problems: ErrorReason[]; pins: Record<string, number> }> {
  const problems: ErrorReason[] = [];
  const pins: Record<string, number> = {};
  for (const [nodeId, node] of Object.entries(definition.nodes)) {
    if (node.type !== 'policy' || node.version !== undefined) continue;
    const target = await lookup(node, nodeId);
    const path = `definition.nodes.${nodeId}`;
    if (target.kind === 'record' && target.status === 'draft') {
      problems.push({
        code: 'unreviewed_policy',
        message: `node \`${nodeId}\` runs policy \`${node.policyId}\`, a draft that was never reviewed: name a published version`,
        path: `${path}.policyId`,
      });
    } else if (target.kind === 'base') {
      if (target.latestVersion === null) {
        problems.push({
          code: 'unreviewed_policy',
          message: `node \`${nodeId}\` runs policy base \`${node.baseId}\`, which has no published version: publish it through review first`,
          path: `${path}.baseId`,
        });
      } else {
        pins[nodeId] = target.latestVersion;
      }
    }
  }
  return { problems, pins };
}

/** The definition a flow version runs: its base-naming nodes with their pinned versions filled in. */
export function pinnedDefinition(definition: FlowDefinition, pins: Record<string, number> | null): FlowDefinition {
  if (pins === null || Object.keys(pins).length === 0) return definition;
  // Object.fromEntries defines own properties, so a node named like a prototype member stays a node.
  const nodes: FlowDefinition['nodes'] = Object.fromEntries(
    Object.entries(definition.nodes).map(([nodeId, node]) => {
      const version = Object.hasOwn(pins, nodeId) ? pins[nodeId] : undefined;
      return [
        nodeId,
        node.type === 'policy' && node.baseId !== undefined && node.version === undefined && version !== undefined
          ? { ...node, version }
          : node,
      ];
    }),
  );
  return { start: definition.start, nodes };
}
