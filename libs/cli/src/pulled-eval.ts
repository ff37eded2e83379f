/**
 * `rules eval --bundle DIR --base ID`: a policy or flow of a pulled directory run by its base id,
 * the version picked as the service picks it (docs/design/timeline.md): the one in effect at `asOf`,
 * else at `now`, else at the current time, evaluated with `now`, else `asOf`, as its clock. No I/O here.
 */

import type { FlowDefinition } from '@arbiter/contracts';
import { BundleFileError, filesToBundle, type FileTree } from './bundle-files.js';
import { evalDataOf, evalRunOf, runEval, usageFailure } from './commands.js';
import { CliUsageError, ExitCode, isJsonObject, type CommandOutput } from './output.js';
import { definitionOf } from './flow-tests.js';
import { runPulledFlow } from './pulled-flow-eval.js';
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

/**
 * The evaluation JSON of {@link runEval} with the record that ran (`policyId`, `baseId`, `version`:
 * null for a draft), as the service's answer ends; for a flow, the flow's answer with `flowId`,
 * `baseId` and `version` ({@link runPulledFlow}).
 */
export async function runPulledEval(input: PulledEvalInput): Promise<CommandOutput> {
  const at = input.asOf ?? input.now ?? input.current;
  let found: { kind: 'policy' | 'flow'; record: Record<string, unknown>; policies: Record<string, unknown>[] };
  try {
    found = pulledRecord(input, at);
  } catch (err) {
    return usageFailure('eval', err);
  }
  const now = input.now ?? input.asOf;
  const { record } = found;
  if (found.kind === 'flow') return runFlowRecord(input, found, at, now);
  return runEval({
    rule: typeof record.rule === 'string' ? record.rule : '',
    data: input.data,
    ruleName: `${input.baseId} (${typeof record.version === 'number' ? `version ${record.version}` : 'draft'})`,
    ...(input.dataName !== undefined && { dataName: input.dataName }),
    ...(input.trace !== undefined && { trace: input.trace }),
    ...(input.stepBudget !== undefined && { stepBudget: input.stepBudget }),
    ...(input.reasons === true && { reasons: true }),
    ...(now !== undefined && { now }),
    ...(isJsonObject(record.schema) && { schema: record.schema }),
    picked: {
      policyId: typeof record.recordId === 'string' ? record.recordId : '',
      baseId: input.baseId,
      version: typeof record.version === 'number' ? record.version : null,
    },
  });
}

/** The record of the pulled policy or flow base `input.baseId` that runs at `at`, and the directory's policies (for a flow's nodes). */
function pulledRecord(input: PulledEvalInput, at: Date) {
  let bundle: ReturnType<typeof filesToBundle>;
  try {
    bundle = filesToBundle(input.files, new Date(0));
  } catch (err) {
    if (err instanceof BundleFileError) throw new CliUsageError(`the pulled directory \`${input.dir}\`: ${err.message}`);
    throw err;
  }
  const policies = (bundle.policies as unknown[]).filter(isJsonObject);
  const flows = (bundle.flows as unknown[]).filter(isJsonObject);
  const policy = policies.find((b) => b.baseId === input.baseId);
  const flow = policy === undefined ? flows.find((b) => b.baseId === input.baseId) : undefined;
  const base = policy ?? flow;
  if (base === undefined)
    throw new CliUsageError(`\`${input.baseId}\` is neither a policy nor a flow of the pulled directory \`${input.dir}\``, {
      showUsage: false,
    });
  const kind = policy !== undefined ? 'policy' : 'flow';
  const records = Array.isArray(base.records) ? base.records.filter(isJsonObject) : [];
  const pick = pickPulled(records, at.getTime());
  if ('before' in pick)
    throw new CliUsageError(
      `${kind} \`${input.baseId}\` has no version in effect at ${at.toISOString()}: its first takes effect at ${new Date(pick.before).toISOString()}`,
      { showUsage: false },
    );
  if ('none' in pick) throw new CliUsageError(`${kind} \`${input.baseId}\` has no version in effect and no draft`, { showUsage: false });
  return { kind, record: pick.record, policies } as const;
}

/** A pulled flow's record run on the data: its answer with the record that ran, exit 0 (1 when the flow stopped on an error). */
async function runFlowRecord(
  input: PulledEvalInput,
  found: { record: Record<string, unknown>; policies: Record<string, unknown>[] },
  at: Date,
  now: Date | undefined,
): Promise<CommandOutput> {
  const { record } = found;
  const version = typeof record.version === 'number' ? record.version : null;
  let data: Record<string, unknown>;
  let definition: FlowDefinition;
  try {
    data = evalDataOf(input.data, input.dataName);
    definition = definitionOf(record.definition, `flow \`${input.baseId}\` (${version === null ? 'draft' : `version ${version}`})`);
  } catch (err) {
    return usageFailure('eval', err);
  }
  const run = evalRunOf({ ...input, now });
  const answer = await runPulledFlow(definition, found.policies, at.getTime(), data, run);
  const out = { ...answer, flowId: typeof record.recordId === 'string' ? record.recordId : '', baseId: input.baseId, version };
  return {
    stdout: JSON.stringify(out, null, 2) + '\n',
    stderr: answer.error === undefined ? '' : `error ${answer.errorCode ?? ''}: ${answer.error}\n`,
    code: answer.error === undefined ? ExitCode.ok : ExitCode.failed,
  };
}
