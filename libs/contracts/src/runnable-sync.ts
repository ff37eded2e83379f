import { z } from 'zod';
import { FlowDefinition } from './flow.js';
import { VersionTimeline } from './runnable-index.js';
import { Principal } from './principal.js';

/**
 * Local evaluation: what the SDK's local runtime loads (`GET /runnable`), how it learns
 * of changes (`GET /runnable/changes`, server-sent events) and how it reports its runs
 * (`POST /runnable/reports`). The registry keeps a per-org `revision` that moves with every
 * commit changing what a run would run: a publish, a delete, a restore, an edit of a
 * never-published draft, a group membership.
 */
export const RunnableSubject = {
  /** One page of the runnable records of a selection (request/reply, `registry` queue group). */
  snapshot: 'registry.runnable.snapshot',
  /** The org's current revision (request/reply). */
  revision: 'registry.runnable.revision',
  /** Run counts reported by a local runtime, turned into `executed` events (request/reply). */
  report: 'registry.runnable.report',
  /** Published (core NATS, no reply) by the registry after each commit that moved an org's revision: {@link RunnableChanged}. */
  changed: 'runnable.changed',
} as const;
export type RunnableSubject = (typeof RunnableSubject)[keyof typeof RunnableSubject];

/** Most base ids one selection may name (longer lists: use a group, or `all`). */
export const RUNNABLE_MAX_BASES = 200;
/** Most runs (records) one report may count. */
export const RUN_REPORT_MAX_RUNS = 1000;

const Revision = z.number().int().min(0);

/** Which bases a runtime holds: named bases, a group's members, every base the caller sees, or a union of these. */
export const RunnableSelection = z.strictObject({
  bases: z.array(z.uuid()).min(1).max(RUNNABLE_MAX_BASES).optional(),
  group: z.uuid().optional(),
  all: z.boolean().optional(),
});
export type RunnableSelection = z.infer<typeof RunnableSelection>;

/** A comma-separated or repeated query parameter as an array. */
const IdList = z.preprocess(
  (v) =>
    typeof v === 'string' ? v.split(',').filter((s) => s !== '') : Array.isArray(v) ? v.flatMap((s: unknown) => String(s).split(',')) : v,
  z.array(z.uuid()).min(1).max(RUNNABLE_MAX_BASES),
);

/** Query of `GET /runnable` and `GET /runnable/changes` (the gateway ignores unknown parameters). */
export const RunnableQuery = z.strictObject({
  bases: IdList.optional().describe(`Base ids (policies or flows), comma-separated or repeated; at most ${RUNNABLE_MAX_BASES}`),
  group: z.uuid().optional().describe('A group: its members the caller sees'),
  all: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('`true`: every base the caller sees in lists (published ones, and never-published ones it created)'),
  since: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('`GET /runnable`: answer only what changed after this revision (`full:false`). `GET /runnable/changes`: the revision held'),
});
export type RunnableQuery = z.infer<typeof RunnableQuery>;

/** Query of `GET /runnable/changes`: the selection is not needed, only the revision held and the heartbeat wanted. */
export const RunnableChangesQuery = z.strictObject({
  since: z.coerce.number().int().min(0).describe('The revision the runtime holds'),
  heartbeatMs: z.coerce
    .number()
    .int()
    .min(500)
    .max(60_000)
    .default(5000)
    .describe('How often a `ping` event confirms the revision while nothing changes'),
});
export type RunnableChangesQuery = z.infer<typeof RunnableChangesQuery>;

/** The evaluation limits the execution service applies, so a local run answers what a remote one would. */
export const RunnableLimits = z.object({
  /** Steps of a run without trace (`EXEC_STEP_BUDGET`). */
  stepBudget: z.number().int().positive(),
  /** Steps of a traced run (`EXEC_TRACE_STEP_BUDGET`). */
  traceStepBudget: z.number().int().positive(),
  /** UTF-8 bytes of one evaluation's trace (`MAX_TRACE_BYTES`). */
  maxTraceBytes: z.number().int().positive(),
});
export type RunnableLimits = z.infer<typeof RunnableLimits>;

/** A policy record as a run needs it. */
export const RunnablePolicy = z.object({
  policyId: z.uuid(),
  baseId: z.uuid(),
  status: z.enum(['draft', 'published']),
  version: z.number().int().nullable(),
  rule: z.string(),
  schema: z.record(z.string(), z.unknown()).nullable(),
});
export type RunnablePolicy = z.infer<typeof RunnablePolicy>;

/** A flow record as a run needs it. */
export const RunnableFlow = z.object({
  flowId: z.uuid(),
  baseId: z.uuid(),
  status: z.enum(['draft', 'published']),
  version: z.number().int().nullable(),
  definition: FlowDefinition,
});
export type RunnableFlow = z.infer<typeof RunnableFlow>;

/**
 * Everything a runtime holds of one base, replacing what it held before: the current runnable
 * record (the version in effect, else the draft) and, for a policy, the records the selected flows
 * pin (by `version` or exact `policyId`). `selected`: the base is in the selection itself, not only
 * named by a selected flow. A base whose versions sit on a timeline (docs/design/timeline.md) also
 * carries `timeline` (the entry in effect and those ahead) and `scheduled` (the records ahead): the
 * runtime picks by its clock, with no request at the instant.
 */
export const RunnableBase = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('policy'),
    baseId: z.uuid(),
    selected: z.boolean(),
    current: RunnablePolicy,
    pinned: z.array(RunnablePolicy),
    timeline: VersionTimeline.optional(),
    scheduled: z.array(RunnablePolicy).optional(),
    /** A running staged rollout: `current` is its new version, `previous` what the other runs get. */
    rollout: z.object({ percent: z.number(), by: z.string().optional(), previous: RunnablePolicy }).optional(),
  }),
  z.object({
    kind: z.literal('flow'),
    baseId: z.uuid(),
    selected: z.boolean(),
    current: RunnableFlow,
    timeline: VersionTimeline.optional(),
    scheduled: z.array(RunnableFlow).optional(),
    /** As a policy base's. */
    rollout: z.object({ percent: z.number(), by: z.string().optional(), previous: RunnableFlow }).optional(),
  }),
]);
export type RunnableBase = z.infer<typeof RunnableBase>;
/** The `rollout` of a held base: what `@arbiter/run`'s `rolloutChoosesNew` needs, and the previous record. */
export type RunnableBaseRollout = NonNullable<RunnableBase['rollout']>;

/**
 * Answer of `GET /runnable`: the selection at `revision`. `full:true` replaces everything held;
 * `full:false` (asked with `since`) lists only the bases that changed after `since` (each in
 * full) and the ids of bases that stopped being runnable (`removed`: deleted). `missing` and
 * `removed` come with the first page of the registry's answer.
 */
export const RunnableSnapshot = z.object({
  revision: Revision,
  full: z.boolean(),
  bases: z.array(RunnableBase),
  removed: z.array(z.uuid()),
  /** Named `bases` that are not runnable: unknown, deleted or of another org (alike, as runs answer 404 for all three). */
  missing: z.array(z.uuid()),
  limits: RunnableLimits,
});
export type RunnableSnapshot = z.infer<typeof RunnableSnapshot>;

/** Request of `registry.runnable.snapshot`: one page (bases in id order after `cursor`). Unknown keys are rejected. */
export const RunnableSnapshotRequest = z.strictObject({
  principal: Principal,
  selection: RunnableSelection,
  since: Revision.optional(),
  cursor: z.uuid().optional(),
  limit: z.number().int().min(1).max(500).default(100),
});
export type RunnableSnapshotRequest = z.input<typeof RunnableSnapshotRequest>;

/** Reply of `registry.runnable.snapshot`: a page of {@link RunnableSnapshot}; `removed` and `missing` come with the first page. */
export const RunnableSnapshotPage = RunnableSnapshot.extend({ nextCursor: z.uuid().nullable() });
export type RunnableSnapshotPage = z.infer<typeof RunnableSnapshotPage>;

/** Request of `registry.runnable.revision`. */
export const RunnableRevisionRequest = z.strictObject({ principal: Principal });
export type RunnableRevisionRequest = z.input<typeof RunnableRevisionRequest>;

/** Reply of `registry.runnable.revision`; payload of the `runnable.changed` notification (with the org). */
export const RunnableRevision = z.object({ revision: Revision });
export type RunnableRevision = z.infer<typeof RunnableRevision>;

/** The `runnable.changed` notification: an org's revision moved. */
export const RunnableChanged = z.object({ orgId: z.string(), revision: Revision });
export type RunnableChanged = z.infer<typeof RunnableChanged>;

/**
 * Most runs one entry of a report may count, whatever its window (the gateway also bounds a count by
 * its window's length): 2³¹−1, beyond what one runtime runs in a day at 20,000 a second.
 */
export const RUN_REPORT_MAX_COUNT = 2 ** 31 - 1;

const Count = z.number().int().min(0).max(RUN_REPORT_MAX_COUNT);

/** The runs of one record in one report window, counted like the execution service's `executed` events. */
export const RunCount = z
  .strictObject({
    kind: z.enum(['policy', 'flow']),
    recordId: z.uuid(),
    baseId: z.uuid(),
    version: z.number().int().nullable(),
    count: Count.min(1),
    trueCount: Count,
    falseCount: Count,
    errorCount: Count,
    /** Flow runs ending on a custom node, by outcome. */
    customCounts: z.record(z.string().max(200), Count).optional(),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
  })
  .refine((r) => r.trueCount + r.falseCount + r.errorCount + Object.values(r.customCounts ?? {}).reduce((a, b) => a + b, 0) === r.count, {
    message: 'trueCount, falseCount, errorCount and customCounts must add up to count',
    path: ['count'],
  })
  .refine((r) => r.from <= r.to, { message: '`from` must not be after `to`', path: ['from'] });
export type RunCount = z.infer<typeof RunCount>;

/**
 * Body of `POST /runnable/reports`. `reportId` makes a retry harmless: the events of one report
 * have ids derived from it, so a report sent twice is counted once. Unknown keys are rejected.
 */
export const RunReport = z.strictObject({
  reportId: z.uuid(),
  runs: z.array(RunCount).min(1).max(RUN_REPORT_MAX_RUNS),
});
export type RunReport = z.infer<typeof RunReport>;

/** Request of `registry.runnable.report`. */
export const RunReportRequest = z.strictObject({ principal: Principal, ...RunReport.shape });
export type RunReportRequest = z.input<typeof RunReportRequest>;

/** Answer of `POST /runnable/reports`: runs turned into events, and the record ids not found in the caller's org (not counted). */
export const RunReportReply = z.object({ accepted: z.number().int(), ignored: z.array(z.uuid()) });
export type RunReportReply = z.infer<typeof RunReportReply>;
