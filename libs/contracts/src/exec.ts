import { z } from 'zod';
import { WireError } from './errors.js';
import { Principal } from './principal.js';

/** The caller, sent by the gateway and the mcp service; execution re-checks its `view` right (DESIGN.md §2). A request without one is refused. */
const Caller = Principal;

/** Request of `exec.run`. Unknown keys are rejected. */
export const ExecRunRequest = z.strictObject({
  principal: Caller,
  rule: z.string(),
  data: z.record(z.string(), z.unknown()),
  /** Build the human-readable trace; on unless turned off. */
  trace: z.boolean().default(true),
  /** The evaluation clock (ISO 8601 with offset); the current time when absent. For tests and replays. */
  now: z.iso.datetime({ offset: true }).optional(),
});
export type ExecRunRequest = z.infer<typeof ExecRunRequest>;
/** What a caller of `exec.run` may send (`trace` optional). */
export type ExecRunInput = z.input<typeof ExecRunRequest>;

/** Request of `exec.validate` and `exec.explain`. Unknown keys are rejected. */
export const ExecRuleRequest = z.strictObject({ principal: Caller, rule: z.string() });
export type ExecRuleRequest = z.infer<typeof ExecRuleRequest>;

/** Request of `exec.operators`: nothing but the caller. */
export const ExecOperatorsRequest = z.strictObject({ principal: Caller });
export type ExecOperatorsRequest = z.infer<typeof ExecOperatorsRequest>;

/**
 * Subjects an `exec.batch` item may name: the evaluations (`exec.run` and the stored runs). Their
 * values are spelled out here rather than imported so this module stays free of the stored-run shapes.
 */
export const ExecBatchItemSubject = z.enum([
  'exec.run',
  'exec.stored.policy.base',
  'exec.stored.policy.record',
  'exec.stored.flow.base',
  'exec.stored.flow.record',
]);
export type ExecBatchItemSubject = z.infer<typeof ExecBatchItemSubject>;

/** Items one `exec.batch` message carries at most (callers split larger groups). */
export const EXEC_BATCH_MAX_ITEMS = 256;

/**
 * One item of `exec.batch`: the subject it would have been sent on and that request's JSON text
 * (text, so a malformed or too deep item fails alone rather than the whole batch), with its
 * caller's request id for logs.
 */
export const ExecBatchItem = z.strictObject({
  subject: ExecBatchItemSubject,
  payload: z.string(),
  requestId: z.string().max(200).optional(),
});
export type ExecBatchItem = z.infer<typeof ExecBatchItem>;

/** Request of `exec.batch`. Unknown keys are rejected. */
export const ExecBatchRequest = z.strictObject({ items: z.array(ExecBatchItem).min(1).max(EXEC_BATCH_MAX_ITEMS) });
export type ExecBatchRequest = z.infer<typeof ExecBatchRequest>;

/** One item's answer: what its own subject would have replied (`data`), or its error. */
export const ExecBatchResult = z.union([
  z.object({ ok: z.literal(true), data: z.unknown() }),
  z.object({ ok: z.literal(false), error: WireError }),
]);
export type ExecBatchResult = z.infer<typeof ExecBatchResult>;

/** Reply of `exec.batch`: one result per item, in the items' order. */
export const ExecBatchReply = z.object({ results: z.array(ExecBatchResult) });
export type ExecBatchReply = z.infer<typeof ExecBatchReply>;

/**
 * Request of `exec.run.many`: one rule, many data objects (at most `EXEC_BATCH_MAX_ITEMS`), each
 * run as `exec.run` would run it; the reply is an {@link ExecBatchReply}, one result per item in order.
 */
export const ExecRunManyRequest = z.strictObject({
  principal: Caller,
  rule: z.string(),
  items: z.array(z.record(z.string(), z.unknown())).min(1).max(EXEC_BATCH_MAX_ITEMS),
  trace: z.boolean().default(true),
  now: z.iso.datetime({ offset: true }).optional(),
});
export type ExecRunManyRequest = z.infer<typeof ExecRunManyRequest>;
export type ExecRunManyInput = z.input<typeof ExecRunManyRequest>;
