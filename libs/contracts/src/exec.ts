import { z } from 'zod';
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
