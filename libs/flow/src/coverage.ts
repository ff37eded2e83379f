import type { CoverageReport, FlowDefinition, FlowRunResponse, UncoveredItem } from '@arbiter/contracts';

/** One edge of a flow: a node to the next, with the branches that lead there (`onTrue`, `routes.high`, `default`, `next`). */
interface Edge {
  from: string;
  to: string;
  via: string[];
}

/** `(covered share) %` with one decimal, never rounded up to 100 while something is uncovered; 100 when there is nothing to count. */
function percentOf(covered: number, total: number): number {
  if (total === 0) return 100;
  return Math.floor((covered / total) * 1000) / 10;
}

/** A table row's cells as people read them: `age >= 18, country is in ["NL"]`, `-` cells left out. */
function rowText(inputs: readonly { name: string }[], when: readonly string[]): string {
  const cells = when.flatMap((cell, i) => (cell.trim() === '-' ? [] : [`${inputs[i]?.name ?? `input ${i + 1}`} ${cell.trim()}`]));
  return cells.length === 0 ? '-' : cells.join(', ');
}

/** The edges of a definition in node order, one per (from, to) pair: several branches to the same node are one edge. */
function edgesOf(def: FlowDefinition): Edge[] {
  const edges: Edge[] = [];
  for (const [from, node] of Object.entries(def.nodes)) {
    const byTarget = new Map<string, Edge>();
    const add = (to: string | undefined, via: string): void => {
      if (to === undefined) return;
      const known = byTarget.get(to);
      if (known) known.via.push(via);
      else {
        const edge = { from, to, via: [via] };
        byTarget.set(to, edge);
        edges.push(edge);
      }
    };
    if (node.type === 'policy') {
      add(node.onTrue, 'onTrue');
      add(node.onFalse, 'onFalse');
    } else if (node.type === 'table') {
      add(node.next, 'next');
      for (const [key, to] of Object.entries(node.routes ?? {})) add(to, `routes.${key}`);
      add(node.default, 'default');
    }
  }
  return edges;
}

/**
 * Coverage of a flow by a set of runs (its saved tests): which decision-table rows were matched at
 * least once and which edges (node to node) were taken. Counted from each run's `path` (the nodes
 * visited, a table step with the rules it matched), so it adds nothing to a run.
 */
export class FlowCoverage {
  private readonly edges: Edge[];
  private readonly taken = new Set<string>();
  /** Per table node id, whether each of its rows matched. */
  private readonly rows = new Map<string, boolean[]>();
  private runs = 0;

  constructor(private readonly def: FlowDefinition) {
    this.edges = edgesOf(def);
    for (const [id, node] of Object.entries(def.nodes)) {
      if (node.type === 'table') this.rows.set(id, new Array<boolean>(node.rules.length).fill(false));
    }
  }

  /** Counts what one run of the flow visited. */
  record(run: Pick<FlowRunResponse, 'path'>): void {
    this.runs++;
    let previous: string | null = null;
    for (const step of run.path) {
      if (previous !== null) this.taken.add(`${previous}\u0000${step.nodeId}`);
      previous = step.nodeId;
      const rows = step.type === 'table' ? this.rows.get(step.nodeId) : undefined;
      if (rows === undefined) continue;
      for (const r of step.matched ?? []) if (r >= 0 && r < rows.length) rows[r] = true;
    }
  }

  /** The number of runs recorded. */
  get runCount(): number {
    return this.runs;
  }

  /** Rows and edges covered, and those left uncovered: rows by table in node order, then edges in node order. */
  report(): CoverageReport {
    const uncovered: UncoveredItem[] = [];
    let rowsTotal = 0;
    let rowsCovered = 0;
    for (const [nodeId, matched] of this.rows) {
      const node = this.def.nodes[nodeId];
      if (node.type !== 'table') continue;
      matched.forEach((hit, r) => {
        rowsTotal++;
        if (hit) rowsCovered++;
        else uncovered.push({ kind: 'row', nodeId, row: r + 1, text: rowText(node.inputs, node.rules[r].when) });
      });
    }
    let edgesCovered = 0;
    for (const edge of this.edges) {
      if (this.taken.has(`${edge.from}\u0000${edge.to}`)) edgesCovered++;
      else uncovered.push({ kind: 'edge', from: edge.from, to: edge.to, text: `${edge.from} → ${edge.to} (${edge.via.join(', ')})` });
    }
    return {
      summary: {
        rows: { total: rowsTotal, covered: rowsCovered },
        edges: { total: this.edges.length, covered: edgesCovered },
        percent: percentOf(rowsCovered + edgesCovered, rowsTotal + this.edges.length),
      },
      uncovered,
    };
  }
}
