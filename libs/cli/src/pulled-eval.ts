/**
 * `rules eval --bundle DIR --base ID`: a policy of a pulled directory run by its base id, the
 * version picked as the service picks it (docs/design/timeline.md): the one in effect at `asOf`,
 * else at `now`, else at the current time, evaluated with `now`, else `asOf`, as its clock. No I/O here.
 */

import { BundleFileError, filesToBundle, type FileTree } from './bundle-files.js';
import { runEval, usageFailure } from './commands.js';
import { CliUsageError, isJsonObject, type CommandOutput } from './output.js';
import { pickPulled } from './pulled-versions.js';

/** Inputs of {@link runPulledEval}. */
export interface PulledEvalInput {
  /** The pulled directory's files. */
  files: FileTree;
  dir: string;
  baseId: string;
  data: string;
  dataName?: string;
  /** The instant whose runnable version runs (and, without `now`, the evaluation's clock). */
  asOf?: Date;
  /** The evaluation's clock (and, without `asOf`, the instant whose version runs). */
  now?: Date;
  /** The current time, when neither is given. */
  current: Date;
  trace?: boolean;
  stepBudget?: number;
  reasons?: boolean;
}

/** The evaluation JSON of {@link runEval} with the record that ran (`policyId`, `version`: null for a draft). */
export function runPulledEval(input: PulledEvalInput): CommandOutput {
  let record: Record<string, unknown>;
  const at = input.asOf ?? input.now ?? input.current;
  try {
    let policies: unknown[];
    try {
      policies = filesToBundle(input.files, new Date(0)).policies as unknown[];
    } catch (err) {
      if (err instanceof BundleFileError) throw new CliUsageError(`the pulled directory \`${input.dir}\`: ${err.message}`);
      throw err;
    }
    const base = policies.filter(isJsonObject).find((b) => b.baseId === input.baseId);
    if (base === undefined)
      throw new CliUsageError(`policy \`${input.baseId}\` is not in the pulled directory \`${input.dir}\``, { showUsage: false });
    const records = Array.isArray(base.records) ? base.records.filter(isJsonObject) : [];
    const pick = pickPulled(records, at.getTime());
    if ('before' in pick)
      throw new CliUsageError(
        `policy \`${input.baseId}\` has no version in effect at ${at.toISOString()}: its first takes effect at ${new Date(pick.before).toISOString()}`,
        { showUsage: false },
      );
    if ('none' in pick) throw new CliUsageError(`policy \`${input.baseId}\` has no version in effect and no draft`, { showUsage: false });
    record = pick.record;
  } catch (err) {
    return usageFailure('eval', err);
  }
  const now = input.now ?? input.asOf;
  return runEval({
    rule: typeof record.rule === 'string' ? record.rule : '',
    data: input.data,
    ruleName: `${input.baseId} (${typeof record.version === 'number' ? `version ${record.version}` : 'draft'})`,
    ...(input.dataName !== undefined && { dataName: input.dataName }),
    ...(input.trace !== undefined && { trace: input.trace }),
    ...(input.stepBudget !== undefined && { stepBudget: input.stepBudget }),
    ...(input.reasons === true && { reasons: true }),
    ...(now !== undefined && { now }),
    picked: {
      policyId: typeof record.recordId === 'string' ? record.recordId : '',
      version: typeof record.version === 'number' ? record.version : null,
    },
  });
}
