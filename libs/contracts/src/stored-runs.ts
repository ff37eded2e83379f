import { z } from 'zod';
import { RunResponse } from './engine.js';
import { FlowDefinition, FlowRunResponse } from './flow.js';
import { Principal } from './principal.js';
import { RunFlags } from './run-flags.js';
import { RUN_DEFAULTS } from './run-spec.js';
import { ProblemDetails } from './http.js';

/**
 * The stored runs (docs/api.md#evaluate-rules): the four `exec.eval` group names (`EvalSubject`; a group's `id` is a
 * base id for `*.base`, a record id for `*.record`, and one that is not a UUID answers not_found,
 * like the registry) and `exec.flow.test`, a subject of the `exec` queue group. Every run carries
 * the caller's `principal`: the execution service answers not_found for another org's, a deleted
 * or an unknown id.
 */
export const StoredRunSubject = {
  /** Run the current runnable policy of a base (the latest version, else the draft). */
  policyByBase: 'exec.stored.policy.base',
  /** Run the exact policy record. */
  policyByRecord: 'exec.stored.policy.record',
  /** Run the current runnable flow of a base. */
  flowByBase: 'exec.stored.flow.base',
  /** Run the exact flow record. */
  flowByRecord: 'exec.stored.flow.record',
  /** Run an ad hoc flow definition (`POST /flow/test`); its policy nodes name stored policies. */
  flowTest: 'exec.flow.test',
} as const;
export type StoredRunSubject = (typeof StoredRunSubject)[keyof typeof StoredRunSubject];

/** The input data of a run: a JSON object (the HTTP body of `POST /run/...`). */
export const RunData = z.record(z.string(), z.unknown()).describe('The input data object the policy or flow runs on');
export type RunData = z.infer<typeof RunData>;

/** Body of `POST /flow/test`: a definition that is not stored and the data to run it on. Unknown keys are rejected. */
export const FlowTestBody = z.strictObject({ definition: FlowDefinition, data: RunData });
export type FlowTestBody = z.infer<typeof FlowTestBody>;

/** Request of `exec.flow.test`. The definition's structure (DAG checks) is validated by the execution service: 400 with every problem. */
export const FlowTestRequest = z.strictObject({
  principal: Principal,
  ...FlowTestBody.shape,
  trace: z.boolean().default(RUN_DEFAULTS.trace),
  /** The run's flags (policy nodes say why with `reasons`). */
  flags: RunFlags.optional(),
});
export type FlowTestRequest = z.infer<typeof FlowTestRequest>;
export type FlowTestInput = z.input<typeof FlowTestRequest>;

/**
 * Response of a stored policy run (docs/api.md#policies-and-flows): the engine result plus the record that ran.
 * Engine outcomes (parse error, missing data, `schema_mismatch`) are results with `error` and
 * `errorCode`, not HTTP errors.
 */
export const StoredPolicyRunResponse = RunResponse.extend({
  outcomes: z.record(z.string(), z.boolean()),
  policyId: z.string().describe('The record that ran'),
  baseId: z.string(),
  version: z.number().int().nullable().describe('Its version number; null for a draft'),
});
export type StoredPolicyRunResponse = z.infer<typeof StoredPolicyRunResponse>;

/**
 * Response of a stored flow run: the flow result (docs/api.md#policies-and-flows) plus the flow record that ran. A
 * policy node whose policy is deleted or unknown stops the flow with `result:false`,
 * `errorCode:"policy_not_found"` and an `error` naming the node (HTTP 200: the flow itself exists).
 */
export const StoredFlowRunResponse = FlowRunResponse.extend({
  flowId: z.string().describe('The flow record that ran'),
  baseId: z.string(),
  version: z.number().int().nullable().describe('Its version number; null for a draft'),
});
export type StoredFlowRunResponse = z.infer<typeof StoredFlowRunResponse>;

/** Default of the gateway's `RUN_BATCH_MAX_ITEMS`: data objects one batch call may carry (more → 413). */
export const RUN_BATCH_DEFAULT_MAX_ITEMS = 1000;

/** Body of `POST /run/batch`: one unsaved rule and the data objects to run it on, in order. Unknown keys are rejected. */
export const RunBatchRequest = z.strictObject({
  rule: z.string().describe('Policy rule text'),
  items: z.array(RunData).min(1).describe('Data objects, each evaluated as by `POST /run`; at most RUN_BATCH_MAX_ITEMS (413 beyond)'),
  trace: z
    .boolean()
    .optional()
    .describe('`false` leaves the traces out: each answer keeps its shape with `"trace": []`, everything else alike. Default true'),
  ...RunFlags.shape,
});
export type RunBatchRequest = z.infer<typeof RunBatchRequest>;

/** Body of the stored batch runs (`POST /run/policy/{baseId}/batch`, …): the data objects, in order. Unknown keys are rejected. */
export const StoredRunBatchRequest = z.strictObject({
  items: z
    .array(RunData)
    .min(1)
    .describe('Data objects, each run as by the single-item endpoint; at most RUN_BATCH_MAX_ITEMS (413 beyond)'),
});
export type StoredRunBatchRequest = z.infer<typeof StoredRunBatchRequest>;

/**
 * Answer of a batch run: `results[i]` is what the single-item endpoint would have answered for
 * `items[i]`: its 200 body (engine outcomes such as a parse error included), or, for an item that
 * failed on its own (data nested too deep, the per-key evaluation limit, a time-out), its RFC 9457
 * problem object.
 */
export function batchRunResponse<T extends z.ZodType>(item: T) {
  return z.object({ results: z.array(z.union([item, ProblemDetails])) });
}
export const RunBatchResponse = batchRunResponse(RunResponse);
export type RunBatchResponse = z.infer<typeof RunBatchResponse>;
export const StoredPolicyBatchResponse = batchRunResponse(StoredPolicyRunResponse);
export type StoredPolicyBatchResponse = z.infer<typeof StoredPolicyBatchResponse>;
export const StoredFlowBatchResponse = batchRunResponse(StoredFlowRunResponse);
export type StoredFlowBatchResponse = z.infer<typeof StoredFlowBatchResponse>;
