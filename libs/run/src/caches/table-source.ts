import type { FlowTableNode } from '@arbiter/contracts';
import { ruleHash } from './hash.js';

/**
 * A table node of a flow as it travels to where it runs: `text` is the JSON of `{nodeId, node}`,
 * `hash` its sha256, the {@link TableCache} key (checked on a miss, as a stored rule's is).
 */
export interface TableSource {
  kind: 'table';
  hash: string;
  text: string;
}

/** Sources by node object: a definition parsed once (the resolver's entry cache) is hashed once per table node. */
const sources = new WeakMap<FlowTableNode, Map<string, TableSource>>();

/** The source of table node `nodeId` (its id is part of it: messages name the node). */
export function tableSource(nodeId: string, node: FlowTableNode): TableSource {
  let byId = sources.get(node);
  if (byId === undefined) {
    byId = new Map();
    sources.set(node, byId);
  }
  let source = byId.get(nodeId);
  if (source === undefined) {
    const text = JSON.stringify({ nodeId, node });
    source = { kind: 'table', hash: ruleHash(text), text };
    byId.set(nodeId, source);
  }
  return source;
}
