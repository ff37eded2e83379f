import { z } from 'zod';
import { RunFlags, RunFlagsQuery } from './run-flags.js';
import { tracesOf } from './run-spec.js';

/** Body of `POST /run` (docs/api.md#evaluate-rules). Unknown keys are rejected. */
export const RunRequest = z.strictObject({
  rule: z.string().describe('Policy rule text'),
  data: z.record(z.string(), z.unknown()).describe('JSON data object to evaluate against'),
  trace: z
    .boolean()
    .optional()
    .describe('`false` leaves the trace out: the answer keeps its shape with `"trace": []`, everything else alike. Default true'),
  ...RunFlags.shape,
});
export type RunRequest = z.infer<typeof RunRequest>;

/** Engine error codes (LANGUAGE.md §9.1): results with HTTP 200, not problems. */
export const EngineErrorCode = z.enum(['parse_error', 'missing_selector', 'missing_property', 'budget_exceeded', 'schema_mismatch']);

const ReasonBase = z.object({
  kind: z
    .enum(['condition', 'rule', 'any', 'all', 'missing', 'error', 'table'])
    .describe(
      '`condition` a comparison, `rule` a reference to another rule, `any`/`all` a quantifier, `missing` absent data, `error` the step budget or a parse error, `table` a decision-table row',
    ),
  rule: z.string().describe('The outcome name of the rule the text belongs to (a table: the node id)'),
  text: z.string().describe('The source text exactly as written'),
  holds: z.boolean(),
  path: z.string().optional().describe('The data path read, with the JSON keys found (`driver.age`, `order.items[2].price`)'),
  value: z.unknown().optional().describe('The value found at `path` (after `length of`/`number of`: the measure)'),
  element: z.number().int().optional().describe('any/all: the index of the element that decided'),
  count: z.number().int().optional().describe('An any that fails, an all that holds: the number of elements (a table: of rows)'),
  error: z.string().optional().describe("missing/error: the engine's message"),
  row: z.number().int().optional().describe('table: the 1-based row number'),
  line: z.number().int(),
  column: z.number().int(),
});
/** One reason (docs/LANGUAGE.md §10.4). */
export type Reason = z.infer<typeof ReasonBase> & { because?: Reason[] };
export const Reason: z.ZodType<Reason> = ReasonBase.extend({
  because: z
    .lazy(() => z.array(Reason))
    .optional()
    .describe("The entries under a reference, a quantifier's deciding element or a table row"),
});

/** Why a result came out (docs/LANGUAGE.md §10.4), present only when asked for. */
export const Reasons = z
  .object({
    result: z.boolean(),
    sentence: z.string().describe("`<outcome> is <result> because …`, in the rule's own words"),
    because: z.array(Reason),
    truncated: z
      .literal(true)
      .optional()
      .describe('Present when entries were left out to keep the reasons within their cap (65,536 bytes of JSON)'),
  })
  .describe('Why the result came out (docs/LANGUAGE.md §10.4); present only when asked for');
export type Reasons = z.infer<typeof Reasons>;

/** Response of `POST /run` (docs/api.md#evaluate-rules, docs/errors.md; docs/api.md#conventions). */
export const RunResponse = z.object({
  result: z.boolean(),
  trace: z.array(z.string()),
  outcomes: z.record(z.string(), z.boolean()).optional(),
  error: z.string().optional(),
  errorCode: EngineErrorCode.optional(),
  reasons: Reasons.optional(),
});
export type RunResponse = z.infer<typeof RunResponse>;

/** Body of `POST /validate` and `POST /explain`. */
export const RuleOnlyRequest = z.strictObject({ rule: z.string() });
export type RuleOnlyRequest = z.infer<typeof RuleOnlyRequest>;

/** docs/LANGUAGE.md §12.1 validate_rule. */
export const ValidateResponse = z.object({ valid: z.boolean(), error: z.string().nullable() });
export type ValidateResponse = z.infer<typeof ValidateResponse>;

/** One static-check finding of a policy (docs/api.md#static-checks): a warning never blocks a save, run or publish. */
export const PolicyStaticCheck = z
  .object({
    check: z
      .enum(['constant_condition', 'contradiction'])
      .describe(
        '`constant_condition`: the condition does not depend on the data (always true or always false); `contradiction`: conditions joined by `and` on one path cannot all hold',
      ),
    severity: z.enum(['warning', 'error']).describe('Warnings never block; the policy checks report no errors (those are parse errors)'),
    message: z.string().describe('One sentence naming the conditions as written and why'),
    line: z.number().int().min(1).describe('Line of the condition in the policy text, from 1'),
    column: z.number().int().min(1).describe('Column of the condition, from 1, in code points'),
    text: z.string().describe('The condition as written'),
  })
  .describe('A static-check finding of a policy');
export type PolicyStaticCheck = z.infer<typeof PolicyStaticCheck>;

/** The static checks of a policy text as answers carry them: `checks`, and whether the work bound let them finish. */
export const PolicyChecksFields = {
  checks: z
    .array(PolicyStaticCheck)
    .describe('Static-check findings of the policy, in text order; empty when the rule does not parse (see `error`) or nothing was found'),
  checksComplete: z
    .boolean()
    .describe('False when the checks stopped at their work bound or deadline: a finding may be missing, none is wrong'),
};

/** One static-check finding of a flow's decision table (docs/tables.md#static-checks-publish): errors block a publish, warnings never do. */
export const TableStaticCheck = z
  .object({
    check: z
      .enum(['overlap', 'conflict', 'gap', 'unreachable', 'never_matches'])
      .describe('`overlap`, `conflict` (errors); `gap`, `unreachable` (never chosen), `never_matches` (warnings)'),
    severity: z.enum(['warning', 'error']).describe('Errors also refuse a publish (422 `cannot_publish`); warnings never block'),
    message: z.string().describe('One sentence naming the table and its rules (numbered from 1)'),
    path: z.string().describe('Where it is in the definition: `nodes.<id>.rules.<r>` or `nodes.<id>.rules`'),
    rules: z.array(z.number().int().min(1)).describe('The rules involved, numbered from 1'),
    example: z.record(z.string(), z.unknown()).optional().describe('An input showing it, where one can be given'),
  })
  .describe("A static-check finding of a flow's decision table");
export type TableStaticCheck = z.infer<typeof TableStaticCheck>;

/** The static checks of a flow's decision tables as answers carry them. */
export const TableChecksFields = {
  checks: z.array(TableStaticCheck).describe("Static-check findings of the flow's decision tables; empty for a flow without tables"),
  checksComplete: z
    .boolean()
    .describe('False when the checks stopped at their work bound or deadline, or did not run: a finding may be missing, none is wrong'),
};

/** Response of `POST /validate`: the syntax answer of docs/LANGUAGE.md §12.1 plus the static checks. */
export const ValidateHttpResponse = ValidateResponse.extend(PolicyChecksFields);
export type ValidateHttpResponse = z.infer<typeof ValidateHttpResponse>;

const ExplainedConditionBase = z.object({
  type: z.enum(['comparison', 'rule_reference', 'label_reference', 'quantifier', 'group']),
  selector: z.string(),
  property: z.string(),
  operator: z.string(),
  value: z.string(),
  logical_op: z.enum(['and', 'or']).nullable(),
  optional: z.boolean(),
  negated: z.boolean(),
});
export type ExplainedCondition = z.infer<typeof ExplainedConditionBase> & { conditions?: ExplainedCondition[] };
export const ExplainedCondition: z.ZodType<ExplainedCondition> = ExplainedConditionBase.extend({
  conditions: z.lazy(() => z.array(ExplainedCondition)).optional(),
});

/** docs/LANGUAGE.md §12.2 explain_rule. */
export const ExplainResponse = z.object({
  rule_count: z.number().int(),
  rules: z.array(
    z.object({
      label: z.string().nullable(),
      selector: z.string(),
      verb: z
        .string()
        .nullable()
        .describe('The outcome verb as written (`gets`, `qualifies for`), dropped from `outcome`; null when none was (LANGUAGE.md §3.4)'),
      outcome: z.string(),
      conditions: z.array(ExplainedCondition),
    }),
  ),
  error: z.string().nullable(),
});
export type ExplainResponse = z.infer<typeof ExplainResponse>;

/** docs/LANGUAGE.md §12.3 list_operators. */
export const OperatorsResponse = z.array(z.object({ operator: z.string(), forms: z.array(z.string()) }));
export type OperatorsResponse = z.infer<typeof OperatorsResponse>;

/**
 * Query of the run routes that take the data object itself as the body (`/run/policy/…`,
 * `/run/flow/…`, their `_version` and `/batch` forms, `/flow/test`): `?trace=false` leaves the
 * trace out (`"trace": []`; flows: each node's `trace` empty), everything else alike. Other
 * query parameters are ignored.
 */
export const TraceQuery = z.object({
  trace: z
    .enum(['true', 'false'])
    .optional()
    .describe(
      '`false` leaves the trace out: the answer keeps its shape with `"trace": []` (flows: each node\'s `trace` empty). Default true',
    ),
  ...RunFlagsQuery.shape,
});
export type TraceQuery = z.infer<typeof TraceQuery>;

/** Query of the runs by base id (`POST /run/policy/{baseId}`, `/run/flow/{baseId}` and their `/batch`): {@link TraceQuery} and the run's instants. */
export const ByBaseQuery = TraceQuery.extend({
  asOf: z.iso
    .datetime({ offset: true })
    .optional()
    .describe(
      'Run the version that was runnable at this instant (schedules, rollbacks and cancellations counted), evaluated at it unless `now` is given; ' +
        '404 before the first version took effect (docs/api.md#scheduled-versions-as-of-runs-and-rollback)',
    ),
  now: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('The evaluation clock (`now()` in the rule); it also picks the version in effect at it. Default: the current time'),
});
export type ByBaseQuery = z.infer<typeof ByBaseQuery>;

/** The run's instants a {@link ByBaseQuery} gives, as `RunSpec` fields. */
export function instantsOf(q: { asOf?: string | undefined; now?: string | undefined } | undefined): { asOf?: string; now?: string } {
  return { ...(q?.asOf !== undefined ? { asOf: q.asOf } : {}), ...(q?.now !== undefined ? { now: q.now } : {}) };
}

/** Whether a run with query `q` builds its trace (on unless `?trace=false`). */
export function traceOf(q: TraceQuery | undefined): boolean {
  return tracesOf(q?.trace === undefined ? undefined : { trace: q.trace === 'true' });
}
