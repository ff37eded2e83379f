/** How `rules test --coverage` prints a policy's coverage: a summary line and each uncovered part with its position. */

import type { CoverageItem, PolicyCoverageReport } from '@arbiter/rule-lang';

function seenText(item: CoverageItem): string {
  const { seen } = item;
  const missing = seen.missing > 0 ? `, stopped by missing data ${seen.missing}×` : '';
  if (item.kind === 'reference') return `never followed${missing}`;
  const hold = item.kind === 'quantifier' ? ['holding', 'failing'] : ['true', 'false'];
  if (seen.true === 0 && seen.false === 0) return `never evaluated${missing}`;
  return `seen ${seen.true > 0 ? hold[0] : hold[1]} only${missing}`;
}

/** `coverage: conditions 2/3 both ways, 83.3 %`, then one indented line per uncovered part. */
export function coverageLines(report: PolicyCoverageReport): string[] {
  return [
    `coverage: ${report.text}`,
    ...report.uncovered.map((item) => `  line ${item.line}, column ${item.column}: ${item.text} (${seenText(item)})`),
  ];
}
