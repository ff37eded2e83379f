/**
 * @arbiter/run: the run layer. A validated `RunSpec` in, an answer out, no transport: every door
 * that runs a rule (the execution service's workers, the SDK's local runtime, the CLI, the
 * gateway's test engine) resolves its options with {@link resolveRun} and answers with the
 * builders here. The caches of compiled policies, schemas and tables are `@arbiter/run/caches`
 * (Node only). docs/design/run-layer.md tells why.
 */

export { RUN_DEFAULTS, tracesOf, type RunOptions, type RunSpec } from '@arbiter/contracts';
export { resolveRun, type ResolvedRun, type RunLimits, type RunMode } from './resolve.js';
export { capTrace, utf8Bytes } from './trace-cap.js';
export { capReasons } from './reasons-cap.js';
export { compileRule, type CompiledRule } from './compiled.js';
export {
  answerPolicy,
  answerRule,
  answerTable,
  failedAnswer,
  failedReasons,
  missingPolicyAnswer,
  missingPolicyNode,
  policyNode,
  POLICY_NOT_FOUND,
  type PolicyAnswer,
  type PolicyRunExtras,
  type RunErrorCode,
} from './answer.js';
export { compileDataSchema, type DataSchema } from './schema/data-schema.js';
export { DRAFT_07, DRAFT_2020, schemaAjv, type SchemaAjv, type SchemaDialect } from './schema/ajv.js';
export { instantOf, timelinePick, timelineUntil } from './versions/timeline.js';
export {
  canonicalJson,
  rolloutBucket,
  rolloutChoosesNew,
  rolloutThreshold,
  valueAtPath,
  ROLLOUT_BUCKETS,
  type RolloutSplit,
} from './versions/rollout.js';
