import { z } from 'zod';

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

/** One node of a flow definition. */
export const FlowNode = z.discriminatedUnion('type', [FlowPolicyNode, FlowReturnNode, FlowCustomNode]);
export type FlowNode = z.infer<typeof FlowNode>;

/**
 * A flow definition (DESIGN.md §5): a DAG of nodes keyed by id, entered at `start`. Unknown keys are
 * rejected. Structural rules (ids resolve, no cycles, …) are checked by `@arbiter/flow`.
 */
export const FlowDefinition = z.strictObject({
  start: FlowNodeId,
  nodes: z.record(FlowNodeId, FlowNode).refine((n) => Object.keys(n).length <= 1000, 'must have at most 1000 nodes'),
});
export type FlowDefinition = z.infer<typeof FlowDefinition>;

/** The result of a flow: a return node's boolean or a custom node's outcome. */
export const FlowResult = z.union([z.boolean(), z.string()]);
export type FlowResult = z.infer<typeof FlowResult>;

/** One visited node of a flow run, in visit order. */
export const FlowPathStep = z.object({
  nodeId: z.string(),
  type: z.enum(['policy', 'return', 'custom']),
  policyId: z.string().optional(),
  version: z.number().int().nullable().optional(),
  result: FlowResult,
});
export type FlowPathStep = z.infer<typeof FlowPathStep>;

/** The evaluation of one policy node. `error` is null when the policy ran without error. */
export const FlowNodeRun = z.object({
  nodeId: z.string(),
  result: z.boolean(),
  outcomes: z.record(z.string(), z.boolean()),
  trace: z.array(z.string()),
  error: z.string().nullable(),
  errorCode: z.string().optional(),
});
export type FlowNodeRun = z.infer<typeof FlowNodeRun>;

/** Response of a flow run (DESIGN.md §5). On a node error the flow stops: `result` false, `error` set. */
export const FlowRunResponse = z.object({
  result: FlowResult,
  path: z.array(FlowPathStep),
  nodes: z.array(FlowNodeRun),
  error: z.string().optional(),
  errorCode: z.string().optional(),
});
export type FlowRunResponse = z.infer<typeof FlowRunResponse>;
