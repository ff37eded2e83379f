import { z } from 'zod';
import { Reasons } from './engine.js';
import { PageQuery, pageOf } from './http.js';
import { canReadDecisions } from './access.js';
import { Principal } from './principal.js';

/**
 * Decision records (docs/decisions.md): sampled runs of stored policies and flows, written
 * by the execution service to its Redis outbox as `decided` events and stored by the audit service
 * in its `decisions` table. Settings (org masks, per-base sampling) live in the audit database too;
 * the execution service reads them over the bus (`audit.decisions.settings.resolve`) and caches them.
 */
export const DecisionSubject = {
  query: 'audit.decisions.query',
  get: 'audit.decisions.get',
  /** The settings of the caller's org (admins, auditors and publishers read them). */
  settingsGet: 'audit.decisions.settings.get',
  /** Replaces the org-wide masks (admins) or one base's settings (admins and publishers). */
  settingsPut: 'audit.decisions.settings.put',
  /** Removes one base's settings of its own (admins and publishers): the base is recorded with the defaults again. */
  settingsDelete: 'audit.decisions.settings.delete',
  /** A base's most recent decisions for an impact analysis (callers who may edit; the governance service asks). */
  history: 'audit.decisions.history',
  /** Internal: the settings of an org as the execution service applies them. */
  settingsResolve: 'audit.decisions.settings.resolve',
  /** One base's recording stats: records stored and records dropped (admins, auditors and publishers). */
  stats: 'audit.decisions.stats',
  /** Internal: records an execution replica dropped, by base and reason, added to the bases' stats once per report. */
  dropsReport: 'audit.decisions.drops.report',
} as const;
export type DecisionSubject = (typeof DecisionSubject)[keyof typeof DecisionSubject];

/** The value a masked path's value is replaced by. */
export const MASKED = '***';

/** Most mask paths in one list. */
export const MAX_MASKS = 64;

/**
 * A mask: a dotted path into the data (`a.b`); a `*` segment matches every key of an object or
 * every element of a list (`items.*.card`). Segments are names (no dots); at most 16 of them.
 */
export const MaskPath = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^.]+(\.[^.]+){0,15}$/, 'a mask is dotted segments such as `a.b` or `items.*.card`');
export type MaskPath = z.infer<typeof MaskPath>;

/**
 * Most bytes of an org's decision settings, as `GET /decisions/settings` and the execution
 * service's read (`audit.decisions.settings.resolve`) carry them: well under the bus's 1 MiB, so
 * the settings can always be read. A change that would pass it is refused (413) before anything is written.
 */
export const MAX_DECISION_SETTINGS_BYTES = 256 * 1024;

/** Most bases of one org with decision settings of their own. */
export const MAX_DECISION_SETTINGS_BASES = 1000;

/** Reason of the `payload_too_large` that refuses a settings change past the org's bounds. */
export const DECISION_SETTINGS_LIMIT = 'decision_settings_limit';

/** Per-second cap of recorded decisions per base and replica when neither the base nor the replica sets one. */
export const DEFAULT_DECISIONS_PER_SECOND = 50;

/** Settings of one base's recording. Unknown keys are rejected. */
export const BaseDecisionSettings = z.strictObject({
  enabled: z.boolean().default(true).describe('Record decisions of this base'),
  sampleRate: z.number().min(0).max(1).default(1).describe('Share of runs (0–1) considered for recording; errors are always recorded'),
  perSecond: z
    .number()
    .int()
    .min(0)
    .max(100_000)
    .optional()
    .describe('Decisions recorded per second per execution replica (default `DECISIONS_PER_SECOND`); errors are always recorded'),
  masks: z.array(MaskPath).max(MAX_MASKS).default([]).describe('Paths whose values are replaced by `"***"`'),
});
export type BaseDecisionSettings = z.infer<typeof BaseDecisionSettings>;

/** The org-wide masks, applied to every base's records. Unknown keys are rejected. */
export const OrgDecisionSettings = z.strictObject({
  masks: z.array(MaskPath).max(MAX_MASKS).default([]).describe('Paths masked in every base of the org'),
});
export type OrgDecisionSettings = z.infer<typeof OrgDecisionSettings>;

/** Every decision setting of an org: the org masks and the bases that have settings of their own. */
export const DecisionSettings = z.object({
  masks: z.array(MaskPath),
  bases: z.record(z.string(), BaseDecisionSettings),
});
export type DecisionSettings = z.infer<typeof DecisionSettings>;

/** `audit.decisions.settings.get`. */
export const DecisionSettingsGetRequest = z.strictObject({ principal: Principal });
export type DecisionSettingsGetRequest = z.infer<typeof DecisionSettingsGetRequest>;

/** `audit.decisions.settings.put`: the org masks (no `baseId`) or one base's settings. */
export const DecisionSettingsPutRequest = z.discriminatedUnion('scope', [
  z.strictObject({ scope: z.literal('org'), principal: Principal, settings: OrgDecisionSettings }),
  z.strictObject({ scope: z.literal('base'), principal: Principal, baseId: z.string().min(1).max(200), settings: BaseDecisionSettings }),
]);
export type DecisionSettingsPutRequest = z.input<typeof DecisionSettingsPutRequest>;

/** `audit.decisions.settings.delete`: one base's settings of its own. */
export const DecisionSettingsDeleteRequest = z.strictObject({ principal: Principal, baseId: z.string().min(1).max(200) });
export type DecisionSettingsDeleteRequest = z.infer<typeof DecisionSettingsDeleteRequest>;

/** Reply of `audit.decisions.settings.delete`. */
export const DecisionSettingsDeleted = z.object({ baseId: z.string() });
export type DecisionSettingsDeleted = z.infer<typeof DecisionSettingsDeleted>;

/** Path of `PUT` and `DELETE /decisions/settings/{baseId}`. */
export const DecisionSettingsParams = z.object({ baseId: z.string().min(1).max(200).describe('Base id of a policy or flow of the org') });

/** `audit.decisions.settings.resolve` (service to service). */
export const DecisionSettingsResolveRequest = z.strictObject({ orgId: z.string().min(1) });
export type DecisionSettingsResolveRequest = z.infer<typeof DecisionSettingsResolveRequest>;

/** What was decided: `true`/`false`, a flow's custom outcome, or a table's output. */
export const DecisionResult = z.union([z.boolean(), z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]);
export type DecisionResult = z.infer<typeof DecisionResult>;

/**
 * A flow's reasons as a decision record keeps them: each node on its path that gave reasons (a
 * policy node's, a table node's), in path order.
 */
export const DecisionNodeReasons = z.array(z.object({ nodeId: z.string(), reasons: Reasons }));
export type DecisionNodeReasons = z.infer<typeof DecisionNodeReasons>;

/**
 * One recorded decision. `at` is when it was recorded (the time in its UUID v7 id), `now` the
 * evaluation clock a replay pins. `input` is the data with every masked path's value `"***"`.
 * `outcomes` is a policy's named outcomes; a flow's record carries its `path` (node ids) instead.
 */
export const DecisionRecord = z.object({
  decisionId: z.uuid(),
  orgId: z.string(),
  at: z.iso.datetime(),
  now: z.iso.datetime(),
  kind: z.enum(['policy', 'flow']),
  baseId: z.string(),
  policyId: z.string().optional(),
  flowId: z.string().optional(),
  version: z.number().int().nullable(),
  caller: z.object({ userId: z.string(), apiKeyId: z.string().optional() }),
  input: z.record(z.string(), z.unknown()),
  /** Whether any value of `input` was masked. */
  masked: z.boolean(),
  result: DecisionResult,
  outcomes: z.record(z.string(), z.unknown()).optional(),
  path: z.array(z.string()).optional(),
  errorCode: z.string().nullable(),
  durationUs: z.number().int().min(0),
  /**
   * A policy run that asked for reasons: why it came out, masked like `input` (a masked value is
   * `"***"` in each entry's `value` and in the sentence).
   */
  reasons: Reasons.optional(),
  /** A flow run that asked for reasons: each node's reasons, masked like `input`. */
  nodeReasons: DecisionNodeReasons.optional(),
  /** The run asked for reasons but the record would not fit the bus with them: kept without them. */
  reasonsLeftOut: z.literal(true).optional(),
});
export type DecisionRecord = z.infer<typeof DecisionRecord>;

const FilterId = z.string().min(1).max(200);

/**
 * Body of `POST /policy/{id}/tests/from-decision` and `POST /flow/{id}/tests/from-decision`: the
 * recorded decision to turn into a saved test of the base's draft, and the test's name.
 */
export const TestFromDecisionBody = z.strictObject({
  decisionId: z.uuid().describe("A recorded decision of this base (`GET /decisions`); its masked input becomes the test's data"),
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .describe('Name of the saved test; when the input was masked, " (masked input)" is added (the name is cut to stay within 200)'),
});
export type TestFromDecisionBody = z.infer<typeof TestFromDecisionBody>;

/** Filters of a decision query (all optional; all given must hold). */
export const DecisionFilter = z.object({
  baseId: FilterId.optional().describe('Base id of the policy or flow'),
  version: z.coerce.number().int().min(1).optional().describe('Version run (drafts have none)'),
  result: z.enum(['true', 'false']).optional().describe('Boolean result'),
  errorCode: z.string().min(1).max(100).optional().describe('Error code of the answer'),
  caller: FilterId.optional().describe('User id of the caller'),
  apiKeyId: FilterId.optional().describe('API key of the caller'),
  from: z.iso.datetime({ offset: true }).optional().describe('Recorded at or after (ISO 8601)'),
  to: z.iso.datetime({ offset: true }).optional().describe('Recorded before (ISO 8601)'),
});
export type DecisionFilter = z.infer<typeof DecisionFilter>;

/** Query of `GET /decisions`. */
export const DecisionQuery = DecisionFilter.extend(PageQuery.shape);
export type DecisionQuery = z.infer<typeof DecisionQuery>;

/** A page of decisions, newest first. */
export const DecisionPage = pageOf(DecisionRecord);
export type DecisionPage = z.infer<typeof DecisionPage>;

/** Largest page the bus answers (impact analysis reads its history in such pages). */
export const DECISIONS_MAX_PAGE = 1000;

/** `audit.decisions.query`: the caller (admin or auditor; own org only), filters, page size and cursor. */
export const DecisionQueryRequest = DecisionFilter.extend({
  principal: Principal,
  limit: z.number().int().min(1).max(DECISIONS_MAX_PAGE).default(50),
  cursor: z.string().min(1).max(512).optional(),
});
export type DecisionQueryRequest = z.input<typeof DecisionQueryRequest>;

/** `audit.decisions.get`. */
export const DecisionGetRequest = z.strictObject({ principal: Principal, decisionId: z.string().min(1).max(200) });
export type DecisionGetRequest = z.infer<typeof DecisionGetRequest>;

/** `audit.decisions.history`: one base's decisions, newest first, in pages. */
export const DecisionHistoryRequest = z.strictObject({
  principal: Principal,
  baseId: z.string().min(1).max(200),
  limit: z.number().int().min(1).max(DECISIONS_MAX_PAGE),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  cursor: z.string().min(1).max(512).optional(),
});
export type DecisionHistoryRequest = z.infer<typeof DecisionHistoryRequest>;

/** What a replay compares of one decision of a history page: the record without its input and caller (with the record that made it). */
export const DecisionHistoryEntry = DecisionRecord.pick({
  decisionId: true,
  at: true,
  now: true,
  result: true,
  outcomes: true,
  path: true,
  errorCode: true,
  reasons: true,
  nodeReasons: true,
  policyId: true,
  flowId: true,
});
export type DecisionHistoryEntry = z.infer<typeof DecisionHistoryEntry>;

/**
 * The header of an `audit.decisions.history` reply, a frame (service-kit `frame.ts`): `entries[i]`
 * describes decision `i`, whose masked input is the frame's item `i` as the database wrote it, so
 * an impact analysis hands each input to the execution service without decoding it. Not validated
 * per reply: the audit service's tests hold its replies to this shape.
 */
export const DecisionHistoryHeader = z.object({
  entries: z.array(DecisionHistoryEntry),
  nextCursor: z.string().nullable(),
  ends: z.array(z.number().int().min(0)),
});
export type DecisionHistoryHeader = z.infer<typeof DecisionHistoryHeader>;

/**
 * Why a decision record was dropped (docs/decisions.md): the outbox was full or unwritable, the
 * buffer was full, the org's settings could not be read, the record was too large for the bus.
 */
export const DecisionDropReason = z.enum(['outbox', 'buffer', 'settings', 'too_large']);
export type DecisionDropReason = z.infer<typeof DecisionDropReason>;

/** The field of a drops report and of a base's stats that counts each {@link DecisionDropReason}. */
export const DECISION_DROP_FIELDS = {
  outbox: 'outbox',
  buffer: 'buffer',
  settings: 'settings',
  too_large: 'tooLarge',
} as const satisfies Record<DecisionDropReason, string>;

/** Most bases one drops report carries (the rest wait for the next report). */
export const MAX_DROPS_PER_REPORT = 1000;

const dropCount = z.number().int().min(0);

/**
 * `audit.decisions.drops.report` (service to service): records an execution replica dropped since
 * its last report, per base and reason. `reportId` makes it idempotent: a report sent again (its
 * reply lost) is added once.
 */
export const DecisionDropsReport = z.strictObject({
  reportId: z.uuid(),
  drops: z
    .array(
      z.strictObject({
        orgId: z.string().min(1).max(200),
        baseId: z.string().min(1).max(200),
        outbox: dropCount,
        buffer: dropCount,
        settings: dropCount,
        /** Absent in reports of replicas older than the reason. */
        tooLarge: dropCount.default(0),
      }),
    )
    .min(1)
    .max(MAX_DROPS_PER_REPORT),
});
export type DecisionDropsReport = z.infer<typeof DecisionDropsReport>;

/** Reply of `audit.decisions.drops.report`: whether this report was new (false: it had been added before). */
export const DecisionDropsReply = z.object({ added: z.boolean() });
export type DecisionDropsReply = z.infer<typeof DecisionDropsReply>;

/** `audit.decisions.stats`. */
export const DecisionStatsRequest = z.strictObject({ principal: Principal, baseId: z.string().min(1).max(200) });
export type DecisionStatsRequest = z.infer<typeof DecisionStatsRequest>;

/**
 * A base's recording stats: records stored now (within the retention) and records dropped since
 * the base was first recorded, by reason, as the execution replicas reported them.
 */
export const DecisionBaseStats = z.object({
  baseId: z.string(),
  recorded: z.number().int().describe('Decision records of the base stored now (within `DECISIONS_RETENTION_DAYS`)'),
  dropped: z
    .object({
      total: z.number().int(),
      outbox: z.number().int(),
      buffer: z.number().int(),
      settings: z.number().int(),
      tooLarge: z.number().int(),
    })
    .describe('Records dropped rather than stored, by reason (docs/decisions.md)'),
  lastDroppedAt: z.iso.datetime().nullable().describe('When the latest report of drops for this base arrived'),
});
export type DecisionBaseStats = z.infer<typeof DecisionBaseStats>;

/** Path of `GET /decisions/stats/{baseId}`. */
export const DecisionStatsParams = z.object({ baseId: z.string().min(1).max(200).describe('Base id of a policy or flow') });

/** Most decisions one impact analysis replays. */
export const IMPACT_MAX_DECISIONS = 10_000;

/** Body of `POST /policy/{policyId}/impact` and `POST /flow/{flowId}/impact`. Unknown keys are rejected. */
export const ImpactRequest = z.strictObject({
  limit: z.number().int().min(1).max(IMPACT_MAX_DECISIONS).default(1000).describe('Most recent decisions replayed (≤ 10,000)'),
  from: z.iso.datetime({ offset: true }).optional().describe('Decisions recorded at or after (ISO 8601)'),
  to: z.iso.datetime({ offset: true }).optional().describe('Decisions recorded before (ISO 8601)'),
});
export type ImpactRequest = z.infer<typeof ImpactRequest>;

/** Outcome of one side of a changed decision: a policy's result and named outcomes, a flow's result and path. */
const ImpactSide = z.object({
  result: DecisionResult,
  errorCode: z.string().nullable(),
  outcomes: z.record(z.string(), z.unknown()),
  path: z.array(z.string()).optional().describe('A flow: the node ids it went through'),
  reasons: Reasons.optional().describe(
    'A policy: why it came out (docs/LANGUAGE.md §10.4), masked like `input`. Before: as recorded (runs that asked for reasons); after: from the replay',
  ),
  nodeReasons: DecisionNodeReasons.optional().describe("A flow: each node's reasons on its path, masked like `input`"),
  reasonsReplayed: z
    .literal(true)
    .optional()
    .describe(
      'before: the run did not ask for reasons, so they come from replaying the decision through the record that made it (shown only when that replay gave the recorded answer)',
    ),
});

/** A changed decision of an impact report: its recorded input (masked, as recorded) and both sides. */
export const ImpactExample = z.object({
  decisionId: z.uuid(),
  at: z.iso.datetime(),
  before: ImpactSide,
  after: ImpactSide,
  input: z.record(z.string(), z.unknown()),
});
export type ImpactExample = z.infer<typeof ImpactExample>;

/**
 * An impact report: the base's recorded decisions replayed through one policy or flow record at
 * each decision's `now` (`policyId` or `flowId` names it). `transitions` counts the changed ones by
 * `before→after` (`true`, `false`, a flow's outcome, `error`); `outcomes` counts, per named
 * outcome of a policy, the decisions whose value of it changed. The counts are for everyone who
 * sees the report; `examples` hold recorded decision data, so only the readers of decisions get
 * them ({@link impactReportFor}).
 */
export const ImpactReport = z.object({
  impactId: z.uuid(),
  policyId: z.string().optional().describe('The policy record replayed (a policy analysis)'),
  flowId: z.string().optional().describe('The flow record replayed (a flow analysis)'),
  baseId: z.string(),
  contentHash: z.string(),
  at: z.iso.datetime(),
  replayed: z.number().int(),
  unchanged: z.number().int(),
  changed: z.number().int(),
  errors: z.number().int(),
  unreplayable: z.number().int(),
  transitions: z.record(z.string(), z.number().int()),
  outcomes: z.record(z.string(), z.number().int()),
  examples: z
    .array(ImpactExample)
    .optional()
    .describe(
      'Up to 20 changed decisions, each with its recorded input (masked, as recorded) and both sides. Only for callers with the `audit` right ' +
        '(admins and auditors; a key needs the `audit` scope), the readers of `GET /decisions`; absent for everyone else',
    ),
  examplesTruncated: z
    .boolean()
    .optional()
    .describe(
      'With `examples`: true when changed decisions were left out of them so the report fits a bus message (their inputs are large)',
    ),
});
export type ImpactReport = z.infer<typeof ImpactReport>;

/**
 * An impact report as `reader` may see it: whole for the readers of decisions
 * ({@link canReadDecisions}), its counts only for everyone else. Every answer that carries a report
 * (the analysis, the review summary) goes through it.
 */
export function impactReportFor(reader: Pick<Principal, 'role' | 'scopes'>, report: ImpactReport): ImpactReport {
  if (canReadDecisions(reader)) return report;
  const { examples: _examples, examplesTruncated: _truncated, ...counts } = report;
  return counts;
}

/** `governance.impact`: an impact analysis of a policy or flow record for the caller. */
export const ImpactAnalysisRequest = ImpactRequest.extend({
  principal: Principal,
  kind: z.enum(['policy', 'flow']),
  recordId: z.string().min(1).max(200),
});
export type ImpactAnalysisRequest = z.input<typeof ImpactAnalysisRequest>;

/** Path of `GET /decisions/{id}`. */
export const DecisionIdParams = z.object({ id: z.uuid().describe('Decision id') });
