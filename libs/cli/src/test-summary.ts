/**
 * How `rules test` ends, for a policy (commands.ts) and a flow (flow-tests.ts) alike: the case
 * lines, `N passed, M failed`, the coverage and whether it reaches `--min`, the exit code, or all
 * of it as one JSON document.
 */

import { ExitCode, type CommandOutput } from './output.js';

/** A finished test run, for {@link testOutput}. */
export interface TestRun<C extends { summary: { percent: number } }> {
  /** One or more lines per case, in order. */
  lines: readonly string[];
  /** One entry per case, as the JSON document lists it. */
  cases: ReadonlyArray<{ readonly passed: boolean }>;
  /** The coverage report, when coverage was asked for, and how it is printed. */
  coverage: C | undefined;
  coverageLines: (report: C) => string[];
  minCoverage: number | undefined;
  json: boolean | undefined;
  /** Properties that come first in the JSON document (what was tested). */
  head?: Readonly<Record<string, unknown>>;
}

/** Exit 0 when every case passes (and coverage reaches `minCoverage`), 1 otherwise. */
export function testOutput<C extends { summary: { percent: number } }>(run: TestRun<C>): CommandOutput {
  const passed = run.cases.filter((c) => c.passed).length;
  const failed = run.cases.length - passed;
  const out = [...run.lines, `${passed} passed, ${failed} failed`];
  const report = run.coverage;
  const belowMin = report !== undefined && run.minCoverage !== undefined && report.summary.percent < run.minCoverage;
  if (report !== undefined) out.push(...run.coverageLines(report));
  if (belowMin) out.push(`coverage ${report.summary.percent} % is below --min ${run.minCoverage}`);
  const code = failed > 0 || belowMin ? ExitCode.failed : ExitCode.ok;
  if (run.json === true) {
    const doc = {
      ...run.head,
      passed,
      failed,
      cases: run.cases,
      ...(report !== undefined && { coverage: report }),
      ...(run.minCoverage !== undefined && { minCoverage: run.minCoverage }),
    };
    return { stdout: JSON.stringify(doc, null, 2) + '\n', stderr: '', code };
  }
  return { stdout: out.join('\n') + '\n', stderr: '', code };
}
