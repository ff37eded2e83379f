import type { FlowDefinition, FlowNode } from '@arbiter/contracts';
import type { FlowProblem } from './problems.js';
import { compileTable } from './table/compile.js';

const BRANCHES = ['onTrue', 'onFalse'] as const;

/** True when `id` names a node of `def` (its own key: `hasOwnProperty`, `constructor` and the like are not nodes). */
function hasNode(def: FlowDefinition, id: string): boolean {
  return Object.hasOwn(def.nodes, id);
}

/** Every `[field path, target]` a node leads to, existing or not, in branch order. */
function edges(node: FlowNode): [string, string | undefined][] {
  if (node.type === 'policy') return BRANCHES.map((b) => [b, node[b]]);
  if (node.type !== 'table') return [];
  const out: [string, string | undefined][] = [];
  if (node.next !== undefined) out.push(['next', node.next]);
  for (const [value, target] of Object.entries(node.routes ?? {})) out.push([`routes.${value}`, target]);
  if (node.default !== undefined) out.push(['default', node.default]);
  return out;
}

/** The ids a node leads to that exist in the definition, in branch order. */
function successors(def: FlowDefinition, id: string): string[] {
  const node = hasNode(def, id) ? def.nodes[id] : undefined;
  if (node === undefined) return [];
  return edges(node)
    .map(([, next]) => next)
    .filter((next): next is string => next !== undefined && hasNode(def, next));
}

/**
 * Every structural problem of a definition (docs/api.md#policies-and-flows), in node order: the start exists, every
 * branch names an existing node, every policy node has both branches, every table node compiles
 * (cells parse, outputs exist, priority lists cover the values used, routes are well formed), no
 * cycles, every node is reachable from the start. Together these make every path end in a
 * `return`, `custom` or table node. An empty list means the definition is valid.
 */
export function validateDefinition(def: FlowDefinition): FlowProblem[] {
  const problems: FlowProblem[] = [];
  const ids = Object.keys(def.nodes);
  if (!hasNode(def, def.start)) {
    problems.push({ code: 'missing_start', message: `start node \`${def.start}\` does not exist`, path: 'start' });
  }
  for (const id of ids) {
    const node = def.nodes[id];
    if (node.type === 'table') {
      const compiled = compileTable(id, node);
      if (!compiled.ok) problems.push(...compiled.problems);
    }
    for (const [branch, next] of edges(node)) {
      const path = `nodes.${id}.${branch}`;
      if (next === undefined) {
        problems.push({ code: 'missing_branch', message: `policy node \`${id}\` has no \`${branch}\` branch`, path });
      } else if (!hasNode(def, next)) {
        problems.push({ code: 'unknown_node', message: `node \`${id}\`: \`${branch}\` names \`${next}\`, which does not exist`, path });
      }
    }
  }
  problems.push(...cycles(def, ids));
  if (hasNode(def, def.start)) {
    const reached = new Set<string>();
    const stack = [def.start];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (reached.has(id)) continue;
      reached.add(id);
      stack.push(...successors(def, id));
    }
    for (const id of ids) {
      if (!reached.has(id)) {
        problems.push({
          code: 'unreachable_node',
          message: `node \`${id}\` cannot be reached from the start \`${def.start}\``,
          path: `nodes.${id}`,
        });
      }
    }
  }
  return problems;
}

/** One problem per cycle found by a depth-first search from every node, naming the loop. */
function cycles(def: FlowDefinition, ids: string[]): FlowProblem[] {
  const problems: FlowProblem[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (id: string): void => {
    state.set(id, 'open');
    trail.push(id);
    for (const next of successors(def, id)) {
      const s = state.get(next);
      if (s === 'open') {
        const loop = [...trail.slice(trail.indexOf(next)), next];
        problems.push({ code: 'cycle', message: `cycle: ${loop.map((n) => `\`${n}\``).join(' → ')}`, path: `nodes.${next}` });
      } else if (s === undefined) {
        visit(next);
      }
    }
    trail.pop();
    state.set(id, 'done');
  };
  const roots = hasNode(def, def.start) ? [def.start, ...ids] : ids;
  for (const id of roots) if (!state.has(id)) visit(id);
  return problems;
}
