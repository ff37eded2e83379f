import { z } from 'zod';

/** Request of `exec.run`. Unknown keys are rejected. */
export const ExecRunRequest = z.strictObject({
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
export const ExecRuleRequest = z.strictObject({ rule: z.string() });
export type ExecRuleRequest = z.infer<typeof ExecRuleRequest>;

/** Request of `exec.operators`: an empty object. */
export const ExecOperatorsRequest = z.strictObject({});
export type ExecOperatorsRequest = z.infer<typeof ExecOperatorsRequest>;
