import { RUN_DEFAULTS, tracesOf, type RunSpec } from '@arbiter/contracts';
import type { EvaluateOptions } from '@arbiter/rule-lang';

/** The limits a door runs under; each one left out is {@link RUN_DEFAULTS}'s. */
export interface RunLimits {
  /** Steps a run without a trace may take. */
  stepBudget: number;
  /** Steps a run with a trace may take. */
  tracedStepBudget: number;
  /** UTF-8 bytes of one run's trace (`Infinity`: never cut). */
  maxTraceBytes: number;
  /** UTF-8 bytes of one answer's reasons (`Infinity`: never cut). */
  maxReasonsBytes: number;
}

/** What a run's options come to once every default is decided: what the answer builder runs by. */
export interface ResolvedRun {
  readonly trace: boolean;
  /** Steps the run may take in all (a flow's nodes share them). */
  readonly stepBudget: number;
  readonly maxTraceBytes: number;
  /** Whether each answer says why its result came out (`reasons`). */
  readonly reasons: boolean;
  readonly maxReasonsBytes: number;
  /** The evaluation clock; the current time when undefined. */
  readonly now: Date | undefined;
  /** The rule-lang options of a policy run with a budget of its own, built once (a run allocates none). */
  readonly options: EvaluateOptions;
}

/** The parts of a {@link RunSpec} that decide how a run runs (the rest say what runs and for whom). */
export type RunMode = Pick<RunSpec, 'trace' | 'now' | 'flags'>;

/**
 * Every default of a run, decided once: the trace (on), the step budget of its mode (fewer steps
 * with a trace), the trace cap, each flag (`reasons` off) and the reasons' cap, and the clock. The
 * worker, the SDK's local runtime, the CLI and the gateway's test engine all run what this answers,
 * so a new flag is added here and in contracts' `RunFlags`, and nowhere else decides it.
 */
export function resolveRun(spec: RunMode | undefined, limits: Partial<RunLimits> = {}): ResolvedRun {
  const trace = tracesOf(spec);
  const stepBudget = trace ? (limits.tracedStepBudget ?? RUN_DEFAULTS.tracedStepBudget) : (limits.stepBudget ?? RUN_DEFAULTS.stepBudget);
  const now = spec?.now === undefined ? undefined : new Date(spec.now);
  const reasons = spec?.flags?.reasons ?? RUN_DEFAULTS.reasons;
  // Without reasons the options are what they always were (the evaluation takes the same path).
  const options: EvaluateOptions = now === undefined ? { trace, stepBudget } : { trace, stepBudget, now };
  if (reasons) options.reasons = true;
  return {
    trace,
    stepBudget,
    maxTraceBytes: limits.maxTraceBytes ?? RUN_DEFAULTS.maxTraceBytes,
    reasons,
    maxReasonsBytes: limits.maxReasonsBytes ?? RUN_DEFAULTS.maxReasonsBytes,
    now,
    options,
  };
}
