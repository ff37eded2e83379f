import { z } from 'zod';
import { WireError } from './errors.js';
import { Principal } from './principal.js';
import { RunFlags } from './run-flags.js';

/** The caller, sent by the gateway and the mcp service; execution re-checks its `view` right (docs/design/bus.md). A request without one is refused. */
const Caller = Principal;

/** Request of `exec.validate` and `exec.explain`. Unknown keys are rejected. */
export const ExecRuleRequest = z.strictObject({ principal: Caller, rule: z.string() });
export type ExecRuleRequest = z.infer<typeof ExecRuleRequest>;

/** Request of `exec.operators`: nothing but the caller. */
export const ExecOperatorsRequest = z.strictObject({ principal: Caller });
export type ExecOperatorsRequest = z.infer<typeof ExecOperatorsRequest>;

/** Items one `exec.eval` message carries at most (callers split larger groups). */
export const EXEC_BATCH_MAX_ITEMS = 256;

/**
 * What a group of items of an `exec.eval` message runs: `exec.run` (an unsaved rule) or a stored
 * run. These are names of groups, not subjects anything listens on: `exec.eval` is the one road
 * of every run (the JSON single-request subjects of the same names are gone, docs/design/run-layer.md).
 * Spelled out here rather than imported so this module stays free of the stored-run shapes.
 */
export const EvalSubject = z.enum([
  'exec.run',
  'exec.stored.policy.base',
  'exec.stored.policy.record',
  'exec.stored.flow.base',
  'exec.stored.flow.record',
]);
export type EvalSubject = z.infer<typeof EvalSubject>;

/**
 * One group of an `exec.eval` message: `n` consecutive items (data objects) run alike: by the rule
 * `rules[rule]` (`exec.run`) or the stored record `id`, for the caller `principals[principal]`, with
 * or without a trace. `timeoutMs` is how long the caller still waits from when the message was
 * sent: work not started by then is dropped (its caller has gone). Unknown keys are rejected.
 */
export const EvalGroup = z.strictObject({
  n: z.number().int().min(1).max(EXEC_BATCH_MAX_ITEMS),
  subject: EvalSubject,
  principal: z.number().int().min(0),
  rule: z.number().int().min(0).optional(),
  id: z.string().max(200).optional(),
  trace: z.boolean(),
  /** UTF-8 bytes each item's trace may take (a batch item's share), below the service's own cap. */
  traceBytes: z.number().int().positive().optional(),
  /** The run's flags, as its caller set them (absent: every flag at its default). */
  flags: RunFlags.optional(),
  now: z.iso.datetime({ offset: true }).optional(),
  /** Each item's evaluation clock (a replay of decisions made at different times): `n` of them; `now` is then unused. */
  nows: z
    .array(z.iso.datetime({ offset: true }))
    .max(EXEC_BATCH_MAX_ITEMS)
    .optional(),
  requestId: z.string().max(200).optional(),
  /** A stored run by base id: the version runnable at this instant, evaluated at it unless `now` is given (docs/design/timeline.md). */
  asOf: z.iso.datetime({ offset: true }).optional(),
  /**
   * A replay of recorded decisions (impact analysis; stored policy runs only): run at `now`, as the
   * caller's low-priority work, not counted or recorded; an answer that read a masked (`"***"`)
   * value carries `"maskedRead": true`.
   */
  replay: z.boolean().optional(),
  timeoutMs: z.number().int().positive().max(3_600_000),
});
export type EvalGroup = z.infer<typeof EvalGroup>;

/**
 * Header of an `exec.eval` message (service-kit `frame.ts`: the header line, then the items' raw
 * JSON texts back to back, `ends[i]` the byte offset where item `i` ends). Principals and rule
 * texts shared by several groups travel once. The items of `groups[0]` come first, then those of
 * `groups[1]`, …; the counts add up to `ends.length`.
 */
export const EvalRequestHeader = z.strictObject({
  principals: z.array(Principal).min(1),
  rules: z.array(z.string()),
  groups: z.array(EvalGroup).min(1),
  ends: z.array(z.number().int().min(0)).min(1).max(EXEC_BATCH_MAX_ITEMS),
  /**
   * When the sender started waiting for the reply (epoch ms, its clock): the receiver takes the
   * time the message spent on the way (queued behind other messages, in socket buffers) off each
   * group's `timeoutMs`, so nothing runs, or is recorded, for a caller who has already timed out.
   */
  sentAt: z.number().int().min(0).optional(),
});
export type EvalRequestHeader = z.infer<typeof EvalRequestHeader>;

/**
 * Header of an `exec.eval` reply: item `i`'s answer is the raw JSON body its single request would
 * have answered (`ends` as in the request), or, when `errors[i]` is set, that error (its slice is
 * empty). A reply whose header is an error envelope (`{ok:false,error}`) failed as a whole.
 */
export const EvalReplyHeader = z.object({
  ends: z.array(z.number().int().min(0)),
  errors: z.record(z.string(), WireError).optional(),
});
export type EvalReplyHeader = z.infer<typeof EvalReplyHeader>;
