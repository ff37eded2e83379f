/** One thing wrong with a flow definition; the shape of a 400/422 reason (`ErrorReason`). */
export interface FlowProblem {
  /**
   * `invalid_definition`, `missing_start`, `unknown_node`, `missing_branch`, `cycle`,
   * `unreachable_node`; for table nodes `invalid_cell` (a cell or input path that does not parse:
   * rule, input, line and column in the message), `unknown_output` and `invalid_table`.
   */
  code: FlowProblemCode;
  message: string;
  /** Where, dot-separated (`nodes.n1.onTrue`). */
  path?: string;
}

/** Codes of {@link FlowProblem}. */
export type FlowProblemCode =
  | 'invalid_definition'
  | 'missing_start'
  | 'unknown_node'
  | 'missing_branch'
  | 'cycle'
  | 'unreachable_node'
  | 'invalid_cell'
  | 'unknown_output'
  | 'invalid_table';
