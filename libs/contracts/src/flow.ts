import { z } from 'zod';
import { Reasons } from './engine.js';

/** A node id of a flow definition: 1–100 letters, digits, `_` or `-`. */
export const FlowNodeId = z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1–100 letters, digits, `_` or `-`');

/**
 * A policy node: runs a policy and follows `onTrue` or `onFalse`. It names a base (its current
 * runnable record, or the pinned `version`) or an exact `policyId`. A missing branch is reported by
 * the flow validator, not rejected here, so every problem of a definition is listed at once.
 */
export const FlowPolicyNode = z
  .strictObject({
    type: z.literal('policy'),
    baseId: z.uuid().optional(),
    version: z
      .number()
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .optional(),
    policyId: z.uuid().optional(),
    onTrue: FlowNodeId.optional(),
    onFalse: FlowNodeId.optional(),
  })
  .refine((n) => (n.baseId === undefined) !== (n.policyId === undefined), {
    message: 'must name exactly one of `baseId` and `policyId`',
  })
  .refine((n) => n.version === undefined || n.baseId !== undefined, { message: '`version` needs `baseId`', path: ['version'] });
export type FlowPolicyNode = z.infer<typeof FlowPolicyNode>;

/** A terminal node whose value is the flow result. */
export const FlowReturnNode = z.strictObject({ type: z.literal('return'), value: z.boolean() });
export type FlowReturnNode = z.infer<typeof FlowReturnNode>;

/** A terminal node whose named outcome (e.g. `manual review`) is the flow result. */
export const FlowCustomNode = z.strictObject({ type: z.literal('custom'), outcome: z.string().min(1).max(200) });
export type FlowCustomNode = z.infer<typeof FlowCustomNode>;

/** A value a decision table outputs: a JSON string, number, boolean or null. */
export const TableValue = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);
export type TableValue = z.infer<typeof TableValue>;

/** The name of a decision table's input or output: a letter or `_`, then letters, digits or `_` (at most 64). */
export const TableColumnName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a letter or `_`, then letters, digits or `_` (at most 64)')
  // An output of that name could not be an own key of the output object.
  .refine((n) => n !== '__proto__', 'must not be `__proto__`');

/** A decision table's input: a name, and the path of the data it reads in any rule-language path form (`applicant.age`). */
export const FlowTableInput = z.strictObject({ name: TableColumnName, path: z.string().min(1).max(500) });
export type FlowTableInput = z.infer<typeof FlowTableInput>;

/**
 * A decision table's output: its name, optionally the values it may take in priority order
 * (DMN output values: the `priority` hit policy ranks by this order, every rule's value must be
 * listed) and the value it takes when no rule matches (else null).
 */
export const FlowTableOutput = z.strictObject({
  name: TableColumnName,
  values: z.array(TableValue).min(1).max(200).optional(),
  default: TableValue.optional(),
});
export type FlowTableOutput = z.infer<typeof FlowTableOutput>;

/**
 * One rule (row) of a decision table: a cell per input, in input order, each the right-hand side
 * of a rule-language comparison with the input's value on the left (`>= 18`,
 * `is in ["NL", "BE"]`, `-` for any), and the output values it gives (an output it omits takes
 * its default, else null).
 */
export const FlowTableRule = z.strictObject({
  when: z.array(z.string().max(2000)).max(50),
  then: z.record(z.string(), TableValue),
  description: z.string().max(500).optional(),
});
export type FlowTableRule = z.infer<typeof FlowTableRule>;

/** DMN 1.4 hit policies: single hit (`unique`, `any`, `priority`, `first`) and multiple hit (`rule order`, `collect`). */
export const TableHitPolicy = z.enum(['unique', 'any', 'priority', 'first', 'rule order', 'collect']);
export type TableHitPolicy = z.infer<typeof TableHitPolicy>;

/** The aggregation of a `collect` table (DMN C+, C<, C>, C#). */
export const TableAggregation = z.enum(['sum', 'min', 'max', 'count']);
export type TableAggregation = z.infer<typeof TableAggregation>;

/**
 * A decision table (docs/design/tables.md): rules of cells over `inputs`, giving `outputs` under a DMN
 * hit policy. The node's result is its output object (single hit, or `collect` with an
 * aggregation) or the list of the matching rules' output objects (`rule order`, `collect`). The
 * flow then goes to `next`, or to `routes[<value of the output routeOn>]` (else `default`), or
 * ends with the table's result when the node names neither. Cells, outputs, priority lists and
 * routes are checked by the flow validator.
 */
export const FlowTableNode = z.strictObject({
  type: z.literal('table'),
  hitPolicy: TableHitPolicy,
  aggregation: TableAggregation.optional(),
  inputs: z.array(FlowTableInput).max(50),
  outputs: z.array(FlowTableOutput).min(1).max(50),
  rules: z.array(FlowTableRule).max(1000),
  next: FlowNodeId.optional(),
  routeOn: TableColumnName.optional(),
  routes: z.record(z.string().max(1000), FlowNodeId).optional(),
  default: FlowNodeId.optional(),
});
export type FlowTableNode = z.infer<typeof FlowTableNode>;

/** One node of a flow definition. */
export const FlowNode = z.discriminatedUnion('type', [FlowPolicyNode, FlowReturnNode, FlowCustomNode, FlowTableNode]);
export type FlowNode = z.infer<typeof FlowNode>;

/**
 * A flow definition (docs/api.md#policies-and-flows): a DAG of nodes keyed by id, entered at `start`. Unknown keys are
 * rejected. Structural rules (ids resolve, no cycles, …) are checked by `@arbiter/flow`.
 */
export const FlowDefinition = z.strictObject({
  start: FlowNodeId,
  nodes: z.record(FlowNodeId, FlowNode).refine((n) => Object.keys(n).length <= 1000, 'must have at most 1000 nodes'),
});
export type FlowDefinition = z.infer<typeof FlowDefinition>;

/** A decision table's output object: output name → value. */
export const TableOutputObject = z.record(z.string(), TableValue);
export type TableOutputObject = z.infer<typeof TableOutputObject>;

/** What a table node gives: its output object (single hit, aggregation) or the matching rules' output objects (multiple hit). */
export const TableResult = z.union([TableOutputObject, z.array(TableOutputObject)]);
export type TableResult = z.infer<typeof TableResult>;

/**
 * The result of a flow: a return node's boolean, a custom node's outcome, or the result of the
 * table node it ended at.
 */
export const FlowResult = z.union([z.boolean(), z.string(), TableResult]);
export type FlowResult = z.infer<typeof FlowResult>;

/** One visited node of a flow run, in visit order. A table node's step lists the rules that matched (0-based). */
export const FlowPathStep = z.object({
  nodeId: z.string(),
  type: z.enum(['policy', 'return', 'custom', 'table']),
  policyId: z.string().optional(),
  version: z.number().int().nullable().optional(),
  result: FlowResult,
  matched: z.array(z.number().int()).optional(),
});
export type FlowPathStep = z.infer<typeof FlowPathStep>;

/** The evaluation of one policy node. `error` is null when the policy ran without error. */
export const FlowPolicyNodeRun = z.object({
  nodeId: z.string(),
  result: z.boolean(),
  outcomes: z.record(z.string(), z.boolean()),
  trace: z.array(z.string()),
  error: z.string().nullable(),
  errorCode: z.string().optional(),
  reasons: Reasons.optional(),
});
export type FlowPolicyNodeRun = z.infer<typeof FlowPolicyNodeRun>;

/** One evaluated cell of a table node (with a trace only): rule and input indexes from 0, and its result. */
export const TableCellRun = z.object({ rule: z.number().int(), input: z.number().int(), result: z.boolean() });
export type TableCellRun = z.infer<typeof TableCellRun>;

/**
 * The evaluation of one table node: its result, the rules that matched (0-based, in the order the
 * hit policy gives them), the trace (each evaluated cell, when traced) and `cells` (the same
 * cells as data, empty without a trace). `error` is null when the table ran without error.
 */
export const FlowTableNodeRun = z.object({
  nodeId: z.string(),
  type: z.literal('table'),
  result: TableResult,
  matched: z.array(z.number().int()),
  cells: z.array(TableCellRun),
  trace: z.array(z.string()),
  error: z.string().nullable(),
  errorCode: z.string().optional(),
  reasons: Reasons.optional(),
});
export type FlowTableNodeRun = z.infer<typeof FlowTableNodeRun>;

/** The evaluation of one policy or table node (a table node's entry has `type: "table"`). */
export const FlowNodeRun = z.union([FlowTableNodeRun, FlowPolicyNodeRun]);
export type FlowNodeRun = z.infer<typeof FlowNodeRun>;

/** Response of a flow run (docs/api.md#policies-and-flows). On a node error the flow stops: `result` false, `error` set. */
export const FlowRunResponse = z.object({
  result: FlowResult,
  path: z.array(FlowPathStep),
  nodes: z.array(FlowNodeRun),
  error: z.string().optional(),
  errorCode: z.string().optional(),
});
export type FlowRunResponse = z.infer<typeof FlowRunResponse>;
