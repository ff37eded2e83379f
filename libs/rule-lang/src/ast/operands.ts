/** The AST nodes an operator's test reads (its operand), below the operator catalogue. */

/** Position in the policy text. `line` and `column` count from 1, columns in code points. */
export interface Span {
  line: number;
  column: number;
  offset: number;
  length: number;
}

export type StepKind = 'selector' | 'property';

/** One key lookup of a path, as written. */
export interface PathStep {
  name: string;
  kind: StepKind;
}

/** A path in root-first order. `its` paths start at the current element of the innermost any/all. */
export interface Path {
  root: 'data' | 'its';
  steps: PathStep[];
  span: Span;
}

export type Literal =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number; text: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'date'; text: string };

export type PeriodUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year' | 'decade' | 'century';

export type Operand =
  | { kind: 'literal'; literal: Literal; span: Span }
  | { kind: 'list'; items: Literal[]; span: Span }
  | { kind: 'period'; count: number; text: string; unit: PeriodUnit; span: Span }
  | { kind: 'path'; path: Path; span: Span };
