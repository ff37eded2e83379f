import type { CoverageCount, CoverageSummary, UncoveredCondition, UncoveredItem } from '@arbiter/contracts';

/** The counts of a coverage summary in words: `conditions 3/4 both ways, rows 9/10, edges 4/4, 85 %` (kinds with nothing to count left out). */
export function coverageSummaryText(summary: CoverageSummary): string {
  const parts: string[] = [];
  const count = (name: string, c: CoverageCount | undefined, how = ''): void => {
    if (c && c.total > 0) parts.push(`${name} ${c.covered}/${c.total}${how}`);
  };
  count('conditions', summary.conditions, ' both ways');
  count('quantifiers', summary.quantifiers, ' both ways');
  count('references', summary.references, ' followed');
  count('rows', summary.rows);
  count('edges', summary.edges);
  parts.push(`${summary.percent} %`);
  return parts.join(', ');
}

const times = (n: number): string => (n === 1 ? 'once' : `${n} times`);

/** Which way the saved tests never saw a condition, quantifier or reference: the editor's tooltip on its underline. */
export function uncoveredConditionText(item: UncoveredCondition): string {
  if (item.kind === 'reference') return 'Not covered: no saved test followed this reference.';
  const [yes, no] = item.kind === 'quantifier' ? ['holding', 'failing'] : ['true', 'false'];
  const { seen } = item;
  const missing = seen.missing > 0 ? ` (data missing ${times(seen.missing)})` : '';
  if (seen.true === 0 && seen.false === 0) return `Not covered: no saved test evaluated this ${item.kind}${missing}.`;
  return seen.true > 0
    ? `Not covered: the saved tests saw this ${item.kind} ${yes} (${times(seen.true)}) but never ${no}${missing}.`
    : `Not covered: the saved tests saw this ${item.kind} ${no} (${times(seen.false)}) but never ${yes}${missing}.`;
}

/** One line of the uncovered list under the tests. */
export function uncoveredItemText(item: UncoveredItem): string {
  switch (item.kind) {
    case 'row':
      return `Table ${item.nodeId}, rule ${item.row}: ${item.text} — no test matched it`;
    case 'edge':
      return `Edge ${item.text} — never taken`;
    default:
      return `Line ${item.line}, column ${item.column}: ${item.text} — ${uncoveredConditionText(item).replace(/^Not covered: /, '')}`;
  }
}

/** The uncovered conditions, quantifiers and references of a report (what the rule editor underlines). */
export function uncoveredConditions(items: readonly UncoveredItem[]): UncoveredCondition[] {
  return items.filter((i): i is UncoveredCondition => i.kind === 'condition' || i.kind === 'quantifier' || i.kind === 'reference');
}

/** A table node's uncovered rows: the row's index (from 0) to its title in the grid. */
export function uncoveredRows(items: readonly UncoveredItem[], nodeId: string): ReadonlyMap<number, string> {
  const rows = new Map<number, string>();
  for (const i of items) {
    if (i.kind === 'row' && i.nodeId === nodeId) rows.set(i.row - 1, `Not covered: no saved test matched rule ${i.row} (${i.text})`);
  }
  return rows;
}
