import { useMemo } from 'react';
import dagre from '@dagrejs/dagre';
import type { FlowDefinition } from '@arbiter/contracts';

type Point = { x: number; y: number };

const NODE_W = 170;
const NODE_H = 50;
/** Characters of a node's second line that fit its box at the graph's font size. */
const FITS = 24;

/** What a node does, as its second line: a policy node names its policy (by `names`, else a short base id). */
export function nodeDetail(node: FlowDefinition['nodes'][string], names: ReadonlyMap<string, string>): string {
  if (node.type === 'return') return `return ${JSON.stringify(node.value)}`;
  if (node.type === 'custom') return `“${String(node.outcome)}”`;
  if (node.type === 'table') {
    const rules = Array.isArray(node.rules) ? node.rules.length : 0;
    return `table ${String(node.hitPolicy)} ·${rules}`;
  }
  const baseId = String(node.baseId);
  const pinned = node.version ? ` v${node.version}` : '';
  return `${names.get(baseId) ?? `policy ${baseId.slice(0, 8)}…`}${pinned}`;
}

const fit = (text: string) => (text.length > FITS ? `${text.slice(0, FITS - 1)}…` : text);

/** The labelled edges of a node: a policy's true/false; a table's `next`, its routes (by value) and `default`. */
function branches(n: FlowDefinition['nodes'][string]): [string, unknown][] {
  if (n.type === 'table') {
    const out: [string, unknown][] = [];
    if (n.next !== undefined) out.push(['next', n.next]);
    const routes = n.routes && typeof n.routes === 'object' ? (n.routes as Record<string, unknown>) : {};
    for (const [value, to] of Object.entries(routes)) out.push([value, to]);
    if (n.default !== undefined) out.push(['default', n.default]);
    return out;
  }
  if (n.type === 'policy') {
    return [
      ['true', n.onTrue],
      ['false', n.onFalse],
    ];
  }
  return [];
}

/**
 * A flow drawn as a DAG (dagre layout, SVG): each node's id, and what it does (a policy node's
 * policy by name from `names`, a table's hit policy and rule count); the nodes and edges of `path`
 * are highlighted.
 */
export function FlowGraph({
  definition,
  path = [],
  names = new Map(),
}: {
  definition: FlowDefinition;
  path?: string[];
  names?: ReadonlyMap<string, string>;
}) {
  const layout = useMemo(() => {
    const g = new dagre.graphlib.Graph({ multigraph: true });
    g.setGraph({ rankdir: 'TB', nodesep: 30, ranksep: 50, marginx: 10, marginy: 10 });
    g.setDefaultEdgeLabel(() => ({}));
    const ids = Object.keys(definition.nodes);
    for (const id of ids) g.setNode(id, { width: NODE_W, height: NODE_H });
    const edges: { from: string; to: string; label: string }[] = [];
    for (const id of ids) {
      const n = definition.nodes[id];
      if (!n) continue;
      for (const [label, to] of branches(n)) {
        if (typeof to === 'string' && Object.hasOwn(definition.nodes, to)) {
          edges.push({ from: id, to, label });
          g.setEdge(id, to, { label }, label);
        }
      }
    }
    dagre.layout(g);
    const graph = g.graph() as { width?: number; height?: number };
    const at = (id: string) => g.node(id) as { x: number; y: number };
    const route = (e: { from: string; to: string; label: string }) =>
      (g.edge({ v: e.from, w: e.to, name: e.label }) as { points?: Point[] }).points ?? [];
    return {
      width: (graph.width ?? 200) + 20,
      height: (graph.height ?? 100) + 20,
      nodes: ids.map((id) => ({ id, x: at(id).x, y: at(id).y })),
      edges: edges.map((e) => ({ ...e, points: route(e) })),
    };
  }, [definition]);

  const onPath = new Set(path);
  const pathEdges = new Set(path.slice(1).map((to, i) => `${path[i]}→${to}`));
  return (
    <svg
      className="flow-graph"
      role="img"
      aria-label={`Flow graph with ${layout.nodes.length} nodes${path.length ? `; path ${path.join(' → ')}` : ''}`}
      viewBox={`0 0 ${layout.width} ${layout.height}`}
      width={layout.width}
      height={layout.height}
      data-testid="flow-graph"
    >
      <defs>
        <marker
          id="arrow"
          viewBox="0 0 10 10"
          refX="9"
          refY="5"
          markerWidth="9"
          markerHeight="9"
          markerUnits="userSpaceOnUse"
          orient="auto-start-reverse"
        >
          <path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor" />
        </marker>
      </defs>
      {layout.edges.map((e) => {
        const d = e.points.map((p, i) => `${i ? 'L' : 'M'} ${p.x} ${p.y}`).join(' ');
        const mid = e.points[Math.floor(e.points.length / 2)];
        const hot = pathEdges.has(`${e.from}→${e.to}`);
        return (
          <g key={`${e.from}-${e.label}`} className={hot ? 'edge on-path' : 'edge'}>
            <path d={d} fill="none" markerEnd="url(#arrow)" />
            {mid && (
              <text x={mid.x + 4} y={mid.y - 4}>
                {e.label}
              </text>
            )}
          </g>
        );
      })}
      {layout.nodes.map((n) => {
        const node = definition.nodes[n.id];
        if (!node) return null;
        return (
          <g
            key={n.id}
            className={`node ${node.type}${onPath.has(n.id) ? ' on-path' : ''}${n.id === definition.start ? ' start' : ''}`}
            transform={`translate(${n.x - NODE_W / 2}, ${n.y - NODE_H / 2})`}
            data-node={n.id}
            data-on-path={onPath.has(n.id) ? 'true' : 'false'}
          >
            <title>{`${n.id}: ${nodeDetail(node, names)}`}</title>
            <rect width={NODE_W} height={NODE_H} rx={8} />
            <text x={NODE_W / 2} y={19} textAnchor="middle" className="node-id">
              {fit(n.id)}
            </text>
            <text x={NODE_W / 2} y={38} textAnchor="middle" data-testid="node-detail">
              {fit(nodeDetail(node, names))}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
