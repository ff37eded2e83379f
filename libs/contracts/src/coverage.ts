import { z } from 'zod';

/** How many parts of one kind a set of runs counts, and how many of them it covered. */
export const CoverageCount = z.object({ total: z.number().int().min(0), covered: z.number().int().min(0) });
export type CoverageCount = z.infer<typeof CoverageCount>;

/**
 * The counts of a coverage report: a policy's `conditions`, `quantifiers` and `references`, a
 * flow's table `rows` and `edges`; each present only for the kind of record it counts. `percent` is
 * the covered share of everything counted (one decimal, never rounded up to 100 while something is
 * uncovered; 100 when there is nothing to count).
 */
export const CoverageSummary = z.object({
  conditions: CoverageCount.optional().describe('Comparisons seen both true and false'),
  quantifiers: CoverageCount.optional().describe('Quantifiers (`any of`, `all of`) seen both holding and failing'),
  references: CoverageCount.optional().describe('Rule and label references followed at least once'),
  rows: CoverageCount.optional().describe('Decision-table rows matched at least once'),
  edges: CoverageCount.optional().describe('Flow edges (node to node) taken at least once'),
  percent: z.number().min(0).max(100),
});
export type CoverageSummary = z.infer<typeof CoverageSummary>;

/** A part of a policy not fully covered: a condition or quantifier seen one way only (or never), a reference never followed. */
export const UncoveredCondition = z.object({
  kind: z.enum(['condition', 'quantifier', 'reference']),
  text: z.string().describe('The source text, as written'),
  line: z.number().int(),
  column: z.number().int(),
  seen: z.object({ true: z.number().int(), false: z.number().int(), missing: z.number().int() }),
});
export type UncoveredCondition = z.infer<typeof UncoveredCondition>;

/** A decision-table row no run matched. */
export const UncoveredRow = z.object({
  kind: z.literal('row'),
  nodeId: z.string(),
  row: z.number().int().min(1).describe('The rule number in the table, from 1'),
  text: z.string().describe('The row\u2019s cells, `<input> <cell>` joined by `, ` (`-` cells left out; `-` when every cell is)'),
});
export type UncoveredRow = z.infer<typeof UncoveredRow>;

/** A flow edge no run took. */
export const UncoveredEdge = z.object({
  kind: z.literal('edge'),
  from: z.string(),
  to: z.string(),
  text: z.string().describe('`from → to (onTrue)`: the branches that lead there'),
});
export type UncoveredEdge = z.infer<typeof UncoveredEdge>;

/** One uncovered part of a policy or flow. */
export const UncoveredItem = z.union([UncoveredCondition, UncoveredRow, UncoveredEdge]);
export type UncoveredItem = z.infer<typeof UncoveredItem>;

/** What a set of runs (the saved tests) covered of a policy or flow, and what it left uncovered (in definition order). */
export const CoverageReport = z.object({
  summary: CoverageSummary,
  uncovered: z.array(UncoveredItem),
});
export type CoverageReport = z.infer<typeof CoverageReport>;

/** One saved test's run: whether it gave the expected result, the result it gave, and why it could not run as expected. */
export const TestRunResult = z.object({
  name: z.string(),
  ok: z.boolean(),
  expected: z.unknown(),
  actual: z.unknown().describe('The result the run gave (false for a policy whose run stopped with an error)'),
  error: z.string().optional(),
});
export type TestRunResult = z.infer<typeof TestRunResult>;

/** Response of `POST /policy/{baseId}/tests/run` and `POST /flow/{baseId}/tests/run`: every saved test's run and their coverage. */
export const TestRunReport = z.object({
  passed: z.number().int(),
  failed: z.number().int(),
  results: z.array(TestRunResult),
  coverage: CoverageReport,
});
export type TestRunReport = z.infer<typeof TestRunReport>;

/** Query of the test-run routes: `version` runs that version's saved tests instead of the draft's. */
export const TestRunQuery = z.strictObject({
  version: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .optional()
    .describe('Run the saved tests of this version (default: the draft, else the latest version)'),
});
export type TestRunQuery = z.infer<typeof TestRunQuery>;

/** The first uncovered items a `coverage_below_minimum` error lists. */
export const COVERAGE_DETAIL_ITEMS = 5;

/** One line for an uncovered item, as error details and the CLI show it. */
export function uncoveredText(item: UncoveredItem): string {
  switch (item.kind) {
    case 'row':
      return `node \`${item.nodeId}\`, rule ${item.row}: ${item.text} (never matched)`;
    case 'edge':
      return `${item.text} (never taken)`;
    case 'reference':
      return `line ${item.line}, column ${item.column}: ${item.text} (never followed)`;
    default: {
      const { seen } = item;
      if (seen.true === 0 && seen.false === 0) return `line ${item.line}, column ${item.column}: ${item.text} (never evaluated)`;
      const hold = item.kind === 'quantifier' ? ['holding', 'failing'] : ['true', 'false'];
      return `line ${item.line}, column ${item.column}: ${item.text} (seen ${seen.true > 0 ? hold[0] : hold[1]} only)`;
    }
  }
}
