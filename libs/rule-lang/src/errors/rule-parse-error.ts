import type { Span } from '../ast/types.js';

/** One problem found while parsing or checking a policy. */
export interface Problem {
  /** Check family in LANGUAGE.md §9.2 order (0 = syntax); the lowest family is reported first. */
  family: number;
  detail: string;
  /** Absent for problems of the policy as a whole (golden rule count, cycles, empty policy). */
  span?: Span;
  help?: string;
}

/** Static-check families, in the order LANGUAGE.md §9.2 runs them. */
export const Family = {
  syntax: 0,
  empty: 1,
  operands: 2,
  formats: 3,
  its: 4,
  presence: 5,
  measures: 6,
  unique: 7,
  labels: 8,
  references: 9,
  golden: 10,
  cycles: 11,
} as const;

/**
 * A policy that does not parse or fails a static check. The message has the shape of
 * LANGUAGE.md §9.1: `Parse error: line L, column C: <detail>` (or `Parse error: <detail>` for
 * problems of the whole policy). `problems` keeps every problem found, first one first.
 */
export class RuleParseError extends Error {
  override readonly name = 'RuleParseError';
  readonly code = 'parse_error' as const;
  readonly line?: number;
  readonly column?: number;
  readonly offset?: number;
  readonly help?: string;
  readonly problems: readonly Problem[];

  constructor(problems: readonly Problem[]) {
    const first = problems[0];
    if (!first) throw new TypeError('RuleParseError needs at least one problem');
    const where = first.span ? `line ${first.span.line}, column ${first.span.column}: ` : '';
    super(`Parse error: ${where}${first.detail}`);
    this.problems = problems;
    if (first.span) {
      this.line = first.span.line;
      this.column = first.span.column;
      this.offset = first.span.offset;
    }
    if (first.help !== undefined) this.help = first.help;
  }
}

/** Sorts problems by family, then position, and throws them as one {@link RuleParseError}. */
export function throwProblems(problems: Problem[]): never {
  const sorted = [...problems].sort((a, b) => a.family - b.family || (a.span?.offset ?? -1) - (b.span?.offset ?? -1));
  throw new RuleParseError(sorted);
}

/** Predicate for {@link RuleParseError}. */
export function isRuleParseError(err: unknown): err is RuleParseError {
  return err instanceof RuleParseError;
}
