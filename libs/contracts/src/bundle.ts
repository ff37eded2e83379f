import { z } from 'zod';
import { FlowDefinition } from './flow.js';
import { pageOf } from './http.js';
import { Principal } from './principal.js';
import { FlowTest, JsonSchemaValue, PinnedVersions, PolicyTest, RecordStatus, SavedJsonSchema } from './registry.js';

/**
 * Export and import of an org's policies, flows and groups. `GET /export`
 * answers one JSON {@link Bundle}; the gateway streams it from pages of the registry's
 * `registry.export` subject, so no replica ever holds the whole org.
 */
export const ExportSubject = 'registry.export' as const;

/**
 * A published version's place on its base's timeline (docs/design/timeline.md), all optional so
 * bundles written before they existed still import: `effectiveFrom` when it was scheduled (else it
 * took effect when published), `cancelled` with when and by whom when its schedule was cancelled
 * (or the version withdrawn), `rollbackOf` when it republished an earlier version.
 */
function bundleTimelineFields<I extends z.ZodType, V extends z.ZodType, A extends z.ZodType>(instant: I, version: V, author: A) {
  return {
    effectiveFrom: instant.optional(),
    cancelled: z.literal(true).optional(),
    cancelledAt: instant.optional(),
    cancelledBy: author.optional(),
    rollbackOf: version.optional(),
  };
}

/** One draft or version of a base as exported: its content and who made it; version numbers kept. */
export const BundleRecord = z.object({
  recordId: z.uuid(),
  status: RecordStatus,
  version: z.number().int().nullable(),
  basedOnVersion: z.number().int().nullable(),
  name: z.string(),
  description: z.string(),
  rule: z.string().nullable(),
  definition: FlowDefinition.nullable(),
  schema: JsonSchemaValue,
  tests: z.array(z.unknown()),
  createdAt: z.iso.datetime(),
  createdBy: z.string(),
  updatedAt: z.iso.datetime(),
  updatedBy: z.string(),
  publishedAt: z.iso.datetime().nullable(),
  publishedBy: z.string().nullable(),
  pinnedVersions: PinnedVersions.optional(),
  ...bundleTimelineFields(z.iso.datetime(), z.number().int(), z.string()),
});
export type BundleRecord = z.infer<typeof BundleRecord>;

/** A live policy or flow base with every record: versions oldest first, then the draft. */
export const BundleBase = z.object({
  baseId: z.uuid(),
  createdBy: z.string(),
  createdAt: z.iso.datetime(),
  latestVersion: z.number().int().nullable(),
  records: z.array(BundleRecord),
});
export type BundleBase = z.infer<typeof BundleBase>;

/** A group with its live members. */
export const BundleGroup = z.object({
  groupId: z.uuid(),
  name: z.string(),
  description: z.string(),
  createdBy: z.string(),
  createdAt: z.iso.datetime(),
  members: z.array(z.object({ memberId: z.uuid(), memberType: z.enum(['policy', 'flow']) })),
});
export type BundleGroup = z.infer<typeof BundleGroup>;

/** The whole bundle of `GET /export`. */
export const Bundle = z.object({
  format: z.literal('arbiter-bundle'),
  formatVersion: z.literal(1),
  orgId: z.string(),
  exportedAt: z.iso.datetime(),
  policies: z.array(BundleBase),
  flows: z.array(BundleBase),
  groups: z.array(BundleGroup),
});
export type Bundle = z.infer<typeof Bundle>;

/** What one `registry.export` page holds. */
export const ExportSection = z.enum(['policies', 'flows', 'groups']);
export type ExportSection = z.infer<typeof ExportSection>;

/** Most bases or groups in one `registry.export` page (each base with all its records). */
export const EXPORT_MAX_PAGE = 20;

/**
 * Most bytes of items (their JSON) in one `registry.export` page: a page crosses the bus in one
 * reply, which NATS refuses past its max payload (1 MiB by default), so a page ends before the
 * item that would pass this, whatever its count. A base too big for a page of its own is split
 * between pages by records: the next page starts with the same base (same `baseId`, the records
 * that follow), and the gateway joins the parts into one base of the bundle.
 */
export const EXPORT_PAGE_MAX_BYTES = 512 * 1024;

/** Request of `registry.export` (admin): a page of one section of the caller's org, by id. */
export const ExportPageRequest = z.strictObject({
  principal: Principal,
  section: ExportSection,
  limit: z.number().int().min(1).max(EXPORT_MAX_PAGE).default(EXPORT_MAX_PAGE),
  cursor: z.string().min(1).max(512).optional(),
});
export type ExportPageRequest = z.input<typeof ExportPageRequest>;

/** Reply of `registry.export`: bases (policies, flows) or groups, by id, with the next page's cursor. */
export const ExportPage = pageOf(z.union([BundleBase, BundleGroup]));
export type ExportPage = z.infer<typeof ExportPage>;

/**
 * Largest `POST /import` body (bytes). The bundle crosses the bus to the registry in one message and
 * NATS refuses messages above its max payload (1 MiB by default): this leaves room for the envelope.
 * A larger org is imported in parts (see {@link ImportSubject}).
 */
export const IMPORT_MAX_BYTES = 1_000_000;

/** The registry's import subject: a whole bundle in one request, one transaction. */
export const ImportSubject = 'registry.import' as const;

const MAX_BUNDLE_ITEMS = 10_000;

/**
 * Highest version number an imported record may carry: far below PostgreSQL's `integer` maximum
 * (2³¹−1), so every imported base can still be published about a billion more times.
 */
const MAX_IMPORTED_VERSION = 1_000_000_000;
const ImportedVersion = z
  .number()
  .int()
  .min(1)
  .max(MAX_IMPORTED_VERSION, `at most ${MAX_IMPORTED_VERSION}: an imported version must leave room to publish`);
const Author = z.string().min(1).max(300);
const ImportName = z.string().trim().min(1).max(200);

/** The fields every imported record has, policy or flow. */
const importRecordFields = {
  recordId: z.uuid(),
  status: RecordStatus,
  version: ImportedVersion.nullable(),
  basedOnVersion: ImportedVersion.nullable(),
  name: ImportName,
  description: z.string().max(2000),
  schema: SavedJsonSchema,
  createdAt: z.iso.datetime(),
  createdBy: Author,
  updatedAt: z.iso.datetime(),
  updatedBy: Author,
  publishedAt: z.iso.datetime().nullable(),
  publishedBy: Author.nullable(),
  ...bundleTimelineFields(z.iso.datetime(), ImportedVersion, Author),
};

/** A draft is unnumbered and unpublished; a version has a number and who published it when. */
function lifecycleOk(r: { status: string; version: number | null; publishedAt: string | null; publishedBy: string | null }): boolean {
  return r.status === 'draft'
    ? r.version === null && r.publishedAt === null && r.publishedBy === null
    : r.version !== null && r.publishedAt !== null && r.publishedBy !== null;
}
const lifecycleMessage = 'a draft has no `version`, `publishedAt`, `publishedBy`; a published record has all three';

/** Timeline fields belong to versions only, and a cancellation says when and by whom. */
function timelineOk(r: {
  status: string;
  effectiveFrom?: string;
  cancelled?: true;
  cancelledAt?: string;
  cancelledBy?: string;
  rollbackOf?: number;
}): boolean {
  const timed = r.effectiveFrom !== undefined || r.cancelled !== undefined || r.rollbackOf !== undefined;
  if (r.status === 'draft' && (timed || r.cancelledAt !== undefined || r.cancelledBy !== undefined)) return false;
  return (r.cancelled === true) === (r.cancelledAt !== undefined) && (r.cancelled === true) === (r.cancelledBy !== undefined);
}
const timelineMessage =
  'a draft has no `effectiveFrom`, `cancelled`, `rollbackOf`; a cancelled version has `cancelled: true` with `cancelledAt` and `cancelledBy`';

/** A policy record of an imported bundle (strict: unknown keys are refused). */
export const ImportPolicyRecord = z
  .strictObject({ ...importRecordFields, rule: z.string().max(65536), definition: z.null(), tests: z.array(PolicyTest).max(100) })
  .refine(lifecycleOk, lifecycleMessage)
  .refine(timelineOk, timelineMessage);

/** A flow record of an imported bundle (strict). */
export const ImportFlowRecord = z
  .strictObject({
    ...importRecordFields,
    rule: z.null(),
    definition: FlowDefinition,
    tests: z.array(FlowTest).max(100),
    pinnedVersions: PinnedVersions.optional(),
  })
  .refine(lifecycleOk, lifecycleMessage)
  .refine(timelineOk, timelineMessage);

function importBase<R extends z.ZodType>(record: R) {
  return z.strictObject({
    baseId: z.uuid(),
    createdBy: Author,
    createdAt: z.iso.datetime(),
    latestVersion: ImportedVersion.nullable(),
    records: z.array(record).min(1).max(MAX_BUNDLE_ITEMS),
  });
}

/** A policy base of an imported bundle. */
export const ImportPolicyBase = importBase(ImportPolicyRecord);
export type ImportPolicyBase = z.infer<typeof ImportPolicyBase>;
/** A flow base of an imported bundle. */
export const ImportFlowBase = importBase(ImportFlowRecord);
export type ImportFlowBase = z.infer<typeof ImportFlowBase>;

/** A group of an imported bundle. */
export const ImportGroup = z.strictObject({
  groupId: z.uuid(),
  name: ImportName,
  description: z.string().max(2000),
  createdBy: Author,
  createdAt: z.iso.datetime(),
  members: z.array(z.strictObject({ memberId: z.uuid(), memberType: z.enum(['policy', 'flow']) })).max(MAX_BUNDLE_ITEMS),
});
export type ImportGroup = z.infer<typeof ImportGroup>;

/**
 * Body of `POST /import`: a bundle exactly as `GET /export` writes it, validated strictly (unknown
 * keys, another `format` or `formatVersion` are refused).
 */
export const ImportBundle = z.strictObject({
  format: z.literal('arbiter-bundle'),
  formatVersion: z.literal(1),
  orgId: z.string().min(1).max(300),
  exportedAt: z.iso.datetime(),
  policies: z.array(ImportPolicyBase).max(MAX_BUNDLE_ITEMS),
  flows: z.array(ImportFlowBase).max(MAX_BUNDLE_ITEMS),
  groups: z.array(ImportGroup).max(MAX_BUNDLE_ITEMS),
});
export type ImportBundle = z.infer<typeof ImportBundle>;

/** Query of `POST /import`. */
export const ImportQuery = z.strictObject({
  dryRun: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe('`true`: answer the plan and change nothing'),
});

/**
 * Request of `registry.import` (admin). `governed`: the org publishes through review (its
 * `governanceApproval` setting, known to the gateway): a base whose published versions would be
 * created is then a conflict, since versions enter such an org only through review.
 */
export const ImportRequest = z.strictObject({
  principal: Principal,
  dryRun: z.boolean(),
  bundle: ImportBundle,
  governed: z.boolean().default(false),
});
export type ImportRequest = z.input<typeof ImportRequest>;

/** What the import does (or would do) with one base or group of the bundle. */
export const ImportAction = z.enum(['create', 'conflict', 'unchanged']);
export type ImportAction = z.infer<typeof ImportAction>;

/** One line of an import plan. */
export const ImportItem = z.object({
  type: z.enum(['policy', 'flow', 'group']),
  name: z.string(),
  sourceId: z.string().describe('Base or group id in the bundle'),
  action: ImportAction,
  targetId: z
    .string()
    .nullable()
    .describe(
      'Base or group id in the target org: the new id once created, the existing one when unchanged; null in a dry run for `create` and for conflicts',
    ),
  reason: z.string().optional().describe('Why it conflicts or is unchanged'),
});
export type ImportItem = z.infer<typeof ImportItem>;

/** Reply of `registry.import` and body of `POST /import`. */
export const ImportReply = z.object({
  dryRun: z.boolean(),
  created: z.number().int(),
  unchanged: z.number().int(),
  conflicts: z.number().int(),
  items: z.array(ImportItem),
});
export type ImportReply = z.infer<typeof ImportReply>;
