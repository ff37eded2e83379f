/**
 * Coverage of a policy by a set of runs (its tests): which conditions were seen both true and false,
 * which quantifiers both holding and failing, which rule references were followed. A condition
 * seen one way only is half covered; runs stopped by missing data are counted apart and cover
 * neither way. Counting is done by the policy's generated coverage evaluator (compile/codegen.ts),
 * or where code generation is unavailable by its coverage closures (compile/conditions.ts), which
 * count alike; a run costs little more than an untraced run.
 */

import type { EvaluateOptions, EvaluationResult } from '../api-types.js';
import type { Condition } from '../ast/types.js';
import type { CompiledPolicy } from '../compile/policy.js';

export type CoverageKind = 'condition' | 'quantifier' | 'reference';

/** One counted part of the policy, where it is and how its runs went. */
export interface CoverageItem {
  kind: CoverageKind;
  /** The source text of the condition, as written. */
  text: string;
  /** Position in the policy text, from 1 (columns in code points). */
  line: number;
  column: number;
  seen: { true: number; false: number; missing: number };
}

export interface CoverageCount {
  total: number;
  covered: number;
}

export interface CoverageSummary {
  /** Comparisons seen both true and false. */
  conditions: CoverageCount;
  /** Quantifiers (`any of`, `all of`) seen both holding and failing. */
  quantifiers: CoverageCount;
  /** Rule and label references followed at least once. */
  references: CoverageCount;
  /** Covered share of everything counted, a one-way condition counting half; 100 when there is nothing to count. */
  percent: number;
}

export interface PolicyCoverageReport {
  runs: number;
  summary: CoverageSummary;
  /** `conditions 17/20 both ways, quantifiers 2/2 both ways, references 1/1 followed, 85 %`. */
  text: string;
  /** What is not fully covered, in text order. */
  uncovered: CoverageItem[];
}

function kindOf(c: Condition): CoverageKind | null {
  switch (c.kind) {
    case 'comparison':
      return 'condition';
    case 'quantifier':
      return 'quantifier';
    case 'labelRef':
    case 'ruleRef':
      return 'reference';
    case 'group':
      return null;
  }
}

/** `(covered share) %` with one decimal, never rounded up to 100 while something is uncovered. */
function percentOf(score: number, total: number): number {
  if (total === 0) return 100;
  return Math.floor((score / total) * 1000) / 10;
}

/** Accumulates the coverage of one compiled policy over any number of runs. */
export class PolicyCoverage {
  private readonly counts: Uint32Array;
  private readonly chars: string[];
  private runs = 0;

  constructor(
    private readonly policy: CompiledPolicy,
    source: string,
  ) {
    this.counts = new Uint32Array(policy.conditions.length * 3);
    this.chars = Array.from(source);
  }

  /** Runs the policy on `data` (untraced), counting what it evaluates. */
  run(data: unknown, options?: Omit<EvaluateOptions, 'trace' | 'traceTree'>): EvaluationResult {
    this.runs++;
    return this.policy.evaluateCovered(data, this.counts, options);
  }

  report(): PolicyCoverageReport {
    const tally: Record<CoverageKind, CoverageCount> = {
      condition: { total: 0, covered: 0 },
      quantifier: { total: 0, covered: 0 },
      reference: { total: 0, covered: 0 },
    };
    let score = 0;
    const uncovered: CoverageItem[] = [];
    this.policy.conditions.forEach((c, i) => {
      const kind = kindOf(c);
      if (kind === null) return;
      const seen = { true: this.counts[i * 3], false: this.counts[i * 3 + 1], missing: this.counts[i * 3 + 2] };
      const full = kind === 'reference' ? seen.true + seen.false > 0 : seen.true > 0 && seen.false > 0;
      const part = full ? 1 : kind === 'reference' ? 0 : ((seen.true > 0 ? 1 : 0) + (seen.false > 0 ? 1 : 0)) / 2;
      tally[kind].total++;
      if (full) tally[kind].covered++;
      score += part;
      if (!full) {
        const { line, column, offset, length } = c.span;
        uncovered.push({ kind, text: this.chars.slice(offset, offset + length).join(''), line, column, seen });
      }
    });
    const total = tally.condition.total + tally.quantifier.total + tally.reference.total;
    const summary: CoverageSummary = {
      conditions: tally.condition,
      quantifiers: tally.quantifier,
      references: tally.reference,
      percent: percentOf(score, total),
    };
    const parts = [`conditions ${tally.condition.covered}/${tally.condition.total} both ways`];
    if (tally.quantifier.total > 0) parts.push(`quantifiers ${tally.quantifier.covered}/${tally.quantifier.total} both ways`);
    if (tally.reference.total > 0) parts.push(`references ${tally.reference.covered}/${tally.reference.total} followed`);
    parts.push(`${summary.percent} %`);
    return { runs: this.runs, summary, text: parts.join(', '), uncovered };
  }
}
