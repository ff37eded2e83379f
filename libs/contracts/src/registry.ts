import { z } from 'zod';
import { PolicyChecksFields, PolicyStaticCheck, TableChecksFields, TableStaticCheck } from './engine.js';
import { CoverageSummary, TestRunQuery } from './coverage.js';
import { ErrorReason } from './errors.js';
import { FlowDefinition, FlowResult } from './flow.js';
import { pageOf, QueryFlag } from './http.js';
import { jsonDepth, MAX_DATA_DEPTH, MAX_JSON_DEPTH } from './json-depth.js';
import { findSchemaLoop } from './json-schema-loops.js';
import { Principal } from './principal.js';
import { RolloutStart } from './rollout.js';

/**
 * Request/reply subjects of the registry service, relative to the bus prefix. One queue group
 * (`registry`) serves them all. Every request carries the caller's `principal`, `*.resolve` too:
 * the execution service resolves a record on behalf of the caller whose run it serves.
 */
export const RegistrySubject = {
  policyCreate: 'registry.policy.create',
  policyUpdate: 'registry.policy.update',
  policyGet: 'registry.policy.get',
  policyVersions: 'registry.policy.versions',
  policyDraft: 'registry.policy.draft',
  policyList: 'registry.policy.list',
  policyDelete: 'registry.policy.delete',
  policyResolve: 'registry.policy.resolve',
  policyPublishReviewed: 'registry.policy.publishReviewed',
  policyPublishCheck: 'registry.policy.publishCheck',
  policyChecks: 'registry.policy.checks',
  flowChecks: 'registry.flow.checks',
  policyRestore: 'registry.policy.restore',
  policyListDeleted: 'registry.policy.listDeleted',
  /** Runs the saved tests of a draft or version with coverage (`TestRunRequest` → `TestRunReport`). */
  policyTestRun: 'registry.policy.testRun',
  flowCreate: 'registry.flow.create',
  flowUpdate: 'registry.flow.update',
  flowGet: 'registry.flow.get',
  flowVersions: 'registry.flow.versions',
  flowDraft: 'registry.flow.draft',
  flowList: 'registry.flow.list',
  flowDelete: 'registry.flow.delete',
  flowResolve: 'registry.flow.resolve',
  flowPublishReviewed: 'registry.flow.publishReviewed',
  flowReviewCheck: 'registry.flow.reviewCheck',
  flowPublishCheck: 'registry.flow.publishCheck',
  flowRestore: 'registry.flow.restore',
  flowListDeleted: 'registry.flow.listDeleted',
  /** Runs the saved tests of a draft or version with coverage (`TestRunRequest` → `TestRunReport`). */
  flowTestRun: 'registry.flow.testRun',
  /** Publishes an earlier version's content again as the next version (`RollbackRequest` → record). */
  policyRollback: 'registry.policy.rollback',
  flowRollback: 'registry.flow.rollback',
  /** Cancels a scheduled version before its instant (`ScheduleCancelRequest` → record). */
  policyScheduleCancel: 'registry.policy.scheduleCancel',
  flowScheduleCancel: 'registry.flow.scheduleCancel',
  groupCreate: 'registry.group.create',
  groupGet: 'registry.group.get',
  groupUpdate: 'registry.group.update',
  groupDelete: 'registry.group.delete',
  groupList: 'registry.group.list',
  groupMemberAdd: 'registry.group.member.add',
  groupMemberRemove: 'registry.group.member.remove',
  groupPolicies: 'registry.group.policies',
  groupFlows: 'registry.group.flows',
} as const;
export type RegistrySubject = (typeof RegistrySubject)[keyof typeof RegistrySubject];

const MAX_SCHEMA_DEPTH = MAX_JSON_DEPTH - 8;

/** Record status: the editable draft or an immutable published version. */
export const RecordStatus = z.enum(['draft', 'published']);
export type RecordStatus = z.infer<typeof RecordStatus>;

/** A loop's pointers for a message: the first few, each cut short. */
function loopText(loop: string[]): string {
  const shown = loop.slice(0, 6).map((p) => `\`${p.length > 80 ? `…${p.slice(-79)}` : p}\``);
  return (loop.length > 6 ? [...shown, '…'] : shown).join(' → ');
}

const SchemaObject = z
  .record(z.string(), z.unknown())
  .refine(
    (schema) => jsonDepth(schema, MAX_SCHEMA_DEPTH) <= MAX_SCHEMA_DEPTH,
    `the schema is nested deeper than ${MAX_JSON_DEPTH - 8} levels`,
  );

/** A JSON Schema object (checked with ajv when publishing), or null for none; nested at most {@link MAX_JSON_DEPTH} − 8 levels (reason `too_deep`). */
export const JsonSchemaValue = SchemaObject.nullable();

/**
 * A JSON Schema as a request saves it (create, update, import): also refused when it refers back
 * to itself without descending into the data, e.g. `{"$ref": "#"}` (reason `schema_loop`), which
 * no validator can apply. The registry then checks that ajv compiles it (reason `invalid_schema`).
 */
export const SavedJsonSchema = SchemaObject.superRefine((schema, ctx) => {
  const loop = findSchemaLoop(schema);
  if (loop !== null) {
    ctx.addIssue({
      code: 'custom',
      message: `the schema refers back to itself without descending into the data (${loopText(loop)}): no value can be validated with it`,
      params: { reason: 'schema_loop' },
    });
  }
}).nullable();

/** Saved-test data, nested no deeper than a run's data may be ({@link MAX_DATA_DEPTH}). */
const TestData = z.record(z.string(), z.unknown()).refine((data) => jsonDepth(data, MAX_DATA_DEPTH) <= MAX_DATA_DEPTH, {
  message: `data is nested deeper than ${MAX_DATA_DEPTH} levels`,
  params: { reason: 'too_deep' },
});

/** A record id as sent by a caller: anything that is not a known id answers 404, never 400. */
export const RecordIdParam = z.string().min(1).max(100);

/** A saved test of a policy: the golden rule's result on `data` must equal `expect`. */
export const PolicyTest = z.strictObject({
  name: z.string().trim().min(1).max(200),
  data: TestData,
  expect: z.boolean(),
});
export type PolicyTest = z.infer<typeof PolicyTest>;

/** A saved test of a flow: the flow result on `data` must equal `expect` (a table's output object or list compared deeply). */
export const FlowTest = z.strictObject({
  name: z.string().trim().min(1).max(200),
  data: TestData,
  expect: FlowResult,
});
export type FlowTest = z.infer<typeof FlowTest>;

/** A base's or group's name: a label, not a key (docs/api.md#policies-and-flows). */
const Name = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe('A label, not a key: other live policies, flows or groups of the org may have the same name; ids identify them');
const Description = z.string().max(2000);
const RuleText = z.string().max(65536);
const MAX_TESTS = 100;

/**
 * The review state of a draft as shown in record bodies and version lists (when the gateway has a
 * governance service); the full summary is `GET .../review`.
 */
export const RecordReview = z.object({
  state: z.enum(['draft', 'pending_approval', 'approved', 'rejected', 'published']),
  requestId: z.uuid().nullable(),
  stale: z.boolean(),
});
export type RecordReview = z.infer<typeof RecordReview>;

const recordMeta = {
  baseId: z.uuid(),
  name: z.string(),
  description: z.string(),
  schema: JsonSchemaValue,
  status: RecordStatus,
  version: z.number().int().nullable(),
  basedOnVersion: z.number().int().nullable(),
  createdAt: z.iso.datetime(),
  createdBy: z.string(),
  updatedAt: z.iso.datetime(),
  updatedBy: z.string(),
  publishedAt: z.iso.datetime().nullable(),
  publishedBy: z.string().nullable(),
  contentHash: z
    .string()
    .optional()
    .describe('sha256 of the publishable content (name, description, rule or definition, schema, tests); changes with every edit'),
  groups: z
    .array(z.object({ groupId: z.uuid(), name: z.string() }))
    .optional()
    .describe('The groups containing the base (on `GET /policy/{id}` and `GET /flow/{id}`)'),
  review: RecordReview.optional().describe('Drafts only: the review state; absent when the governance service did not answer'),
  authors: z
    .array(z.string())
    .optional()
    .describe(
      'Who changed the content since the last published version (a version: of the draft it was); none of them may approve it under governance',
    ),
  effectiveFrom: z.iso
    .datetime()
    .nullable()
    .optional()
    .describe('Versions (on `GET …/versions`): when it becomes or became the runnable version (its schedule, else its publish instant)'),
  effectiveUntil: z.iso
    .datetime()
    .nullable()
    .optional()
    .describe('Versions (on `GET …/versions`): when a later-effective version took or takes over; null while none does'),
  cancelled: z
    .boolean()
    .optional()
    .describe('Versions (on `GET …/versions`): its schedule was cancelled before it started; it never runs by base id'),
  rollbackOf: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe('Versions (on `GET …/versions`): the earlier version whose content this one brought back (`POST …/rollback`)'),
};

/**
 * When a published version becomes the base's runnable version (docs/design/timeline.md): an ISO
 * instant with offset, later than the registry's clock (400 otherwise). Absent: at once.
 */
export const EffectiveFrom = z.iso
  .datetime({ offset: true })
  .describe(
    'Publish only: when the new version becomes the runnable version (a future instant; docs/api.md#scheduled-versions-as-of-runs-and-rollback)',
  );

/** A policy draft or version (docs/api.md#policies-and-flows). */
export const PolicyRecord = z.object({ policyId: z.uuid(), ...recordMeta, rule: z.string(), tests: z.array(PolicyTest) });
export type PolicyRecord = z.infer<typeof PolicyRecord>;

/**
 * The versions a flow version's base-naming policy nodes run, by node id: a flow
 * published through review pins every node that names a base without a `version` to that base's
 * latest version at publish, so it keeps running the reviewed text it was approved with.
 */
export const PinnedVersions = z
  .record(z.string(), z.number().int().min(1))
  .describe('Versions only, published through review: the version each policy node naming a base without `version` runs');
export type PinnedVersions = z.infer<typeof PinnedVersions>;

/** A flow draft or version (docs/api.md#policies-and-flows). */
export const FlowRecord = z.object({
  flowId: z.uuid(),
  ...recordMeta,
  definition: FlowDefinition,
  tests: z.array(FlowTest),
  pinnedVersions: PinnedVersions.optional(),
});
export type FlowRecord = z.infer<typeof FlowRecord>;

/** Body of `POST /policy`. Unknown keys are rejected. */
export const CreatePolicyBody = z.strictObject({
  name: Name,
  description: Description.default(''),
  rule: RuleText,
  schema: SavedJsonSchema.default(null),
  tests: z.array(PolicyTest).max(MAX_TESTS).default([]),
});
export type CreatePolicyBody = z.infer<typeof CreatePolicyBody>;

/**
 * Body of `PUT /policy/{policyId}`: the given fields are applied to the draft; with
 * `status:"published"` the draft is then published. Unknown keys are rejected.
 */
export const UpdatePolicyBody = z.strictObject({
  status: RecordStatus,
  effectiveFrom: EffectiveFrom.optional(),
  name: Name.optional(),
  description: Description.optional(),
  rule: RuleText.optional(),
  schema: SavedJsonSchema.optional(),
  tests: z.array(PolicyTest).max(MAX_TESTS).optional(),
  /** With `status:"published"`: the new version starts as a staged rollout (docs/api.md#staged-rollouts). */
  rollout: RolloutStart.optional(),
});
export type UpdatePolicyBody = z.infer<typeof UpdatePolicyBody>;

/** Body of `POST /flow`. Unknown keys are rejected. */
export const CreateFlowBody = z.strictObject({
  name: Name,
  description: Description.default(''),
  definition: FlowDefinition,
  schema: SavedJsonSchema.default(null),
  tests: z.array(FlowTest).max(MAX_TESTS).default([]),
});
export type CreateFlowBody = z.infer<typeof CreateFlowBody>;

/** Body of `PUT /flow/{flowId}`; as {@link UpdatePolicyBody}. Unknown keys are rejected. */
export const UpdateFlowBody = z.strictObject({
  status: RecordStatus,
  effectiveFrom: EffectiveFrom.optional(),
  name: Name.optional(),
  description: Description.optional(),
  definition: FlowDefinition.optional(),
  schema: SavedJsonSchema.optional(),
  tests: z.array(FlowTest).max(MAX_TESTS).optional(),
  /** With `status:"published"`: the new version starts as a staged rollout (docs/api.md#staged-rollouts). */
  rollout: RolloutStart.optional(),
});
export type UpdateFlowBody = z.infer<typeof UpdateFlowBody>;

/** Query of `GET /policies`, `GET /flows`, `GET /groups` and the group member lists. Unknown parameters are ignored. */
export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size (1–200)'),
  cursor: z.string().min(1).max(512).optional().describe('Opaque cursor from a previous page'),
  q: z.string().min(1).max(200).optional().describe('Case-insensitive part of the name'),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** Orders of `GET /policies` and `GET /flows` (`-` for descending); without `sort`, newest base first. */
export const RecordListSort = z.enum(['name', '-name', 'updatedAt', '-updatedAt']);
export type RecordListSort = z.infer<typeof RecordListSort>;

/**
 * Query of `GET /policies` and `GET /flows`: filters, order and, for admins,
 * colleagues' never-published drafts; also the registry's request (`all` a boolean there).
 */
export const RecordListQuery = z.strictObject({
  ...ListQuery.shape,
  status: RecordStatus.optional().describe('Only bases whose current record has this status (`draft`: never published)'),
  createdBy: z.string().min(1).max(200).optional().describe('Only bases created by this user id'),
  group: z.uuid().optional().describe('Only members of this group'),
  sort: RecordListSort.optional().describe('`name`, `-name`, `updatedAt` or `-updatedAt` (`-`: descending); default newest first'),
  all: z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .optional()
    .describe("`true` (admins only): also colleagues' never-published drafts"),
});
export type RecordListQuery = z.infer<typeof RecordListQuery>;

/** Query of `GET .../versions`: a page of the draft (first) and the versions, newest first. */
export const VersionsQuery = ListQuery.omit({ q: true });
export type VersionsQuery = z.infer<typeof VersionsQuery>;

const summaryMeta = {
  baseId: z.uuid(),
  name: z.string(),
  description: z.string(),
  status: RecordStatus,
  version: z.number().int().nullable(),
  latestVersion: z.number().int().nullable(),
  createdBy: z.string(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  publishedAt: z.iso.datetime().nullable(),
  deletedAt: z.iso.datetime().optional().describe('Only in lists of deleted bases (`?deleted=true`): when the base was deleted'),
  deletedBy: z.string().optional().describe('Only in lists of deleted bases (`?deleted=true`): who deleted it'),
};

/** A policy base in a list: its current runnable record (latest version, else the draft) plus the draft's id. */
export const PolicySummary = z.object({ policyId: z.uuid(), draftId: z.uuid().nullable(), ...summaryMeta });
export type PolicySummary = z.infer<typeof PolicySummary>;

/** A flow base in a list; as {@link PolicySummary}. */
export const FlowSummary = z.object({ flowId: z.uuid(), draftId: z.uuid().nullable(), ...summaryMeta });
export type FlowSummary = z.infer<typeof FlowSummary>;

/** Response of `GET /policies` and `GET /group/{groupId}/policies`. */
export const PolicySummaryPage = pageOf(PolicySummary);
export type PolicySummaryPage = z.infer<typeof PolicySummaryPage>;
/** Response of `GET /flows` and `GET /group/{groupId}/flows`. */
export const FlowSummaryPage = pageOf(FlowSummary);
export type FlowSummaryPage = z.infer<typeof FlowSummaryPage>;
/** Response of `GET /policy/{policyId}/versions`. */
export const PolicyRecordPage = pageOf(PolicyRecord);
export type PolicyRecordPage = z.infer<typeof PolicyRecordPage>;
/** Response of `GET /flow/{flowId}/versions`. */
export const FlowRecordPage = pageOf(FlowRecord);
export type FlowRecordPage = z.infer<typeof FlowRecordPage>;

/** Reply of `registry.policy.update`: `published` means a new version was created (HTTP 201), else 200. */
export const PolicyUpdateReply = z.object({ outcome: z.enum(['updated', 'published']), record: PolicyRecord });
export type PolicyUpdateReply = z.infer<typeof PolicyUpdateReply>;
/** Answer of `POST /policy` and of a policy `PUT` that saves or publishes (200, 201): the record and its static checks. */
export const PolicySaveAnswer = PolicyRecord.extend(PolicyChecksFields);
export type PolicySaveAnswer = z.infer<typeof PolicySaveAnswer>;
/** Answer of `POST /flow` and of a flow `PUT` that saves or publishes (200, 201): the record and its tables' static checks. */
export const FlowSaveAnswer = FlowRecord.extend(TableChecksFields);
export type FlowSaveAnswer = z.infer<typeof FlowSaveAnswer>;
/** Reply of `registry.flow.update`; as {@link PolicyUpdateReply}. */
export const FlowUpdateReply = z.object({ outcome: z.enum(['updated', 'published']), record: FlowRecord });
export type FlowUpdateReply = z.infer<typeof FlowUpdateReply>;

/** Reply of `registry.policy.draft`: `created` when a new draft was made (HTTP 201), else the existing one (200). */
export const PolicyDraftReply = z.object({ created: z.boolean(), record: PolicyRecord });
export type PolicyDraftReply = z.infer<typeof PolicyDraftReply>;
/** Reply of `registry.flow.draft`; as {@link PolicyDraftReply}. */
export const FlowDraftReply = z.object({ created: z.boolean(), record: FlowRecord });
export type FlowDraftReply = z.infer<typeof FlowDraftReply>;

/** Reply of `registry.policy.delete` and `registry.flow.delete` (HTTP 204). */
export const DeleteBaseReply = z.object({ baseId: z.uuid() });
export type DeleteBaseReply = z.infer<typeof DeleteBaseReply>;

/** A group (docs/api.md#policies-and-flows). */
export const Group = z.object({
  groupId: z.uuid(),
  name: z.string(),
  description: z.string(),
  createdBy: z.string(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type Group = z.infer<typeof Group>;

/** Response of `GET /groups`. */
export const GroupPage = pageOf(Group);
export type GroupPage = z.infer<typeof GroupPage>;

/** Body of `POST /group`. Unknown keys are rejected. */
export const CreateGroupBody = z.strictObject({ name: Name, description: Description.default('') });
export type CreateGroupBody = z.infer<typeof CreateGroupBody>;

/** Body of `PUT /group/{groupId}`: at least one field. Unknown keys are rejected. */
export const UpdateGroupBody = z
  .strictObject({ name: Name.optional(), description: Description.optional() })
  .refine((b) => b.name !== undefined || b.description !== undefined, 'must set `name` or `description`');
export type UpdateGroupBody = z.infer<typeof UpdateGroupBody>;

/** Kind of a group member. */
export const MemberType = z.enum(['policy', 'flow']);
export type MemberType = z.infer<typeof MemberType>;

/** Body of `POST /group/{groupId}/member`: a policy or flow base id. Unknown keys are rejected. */
export const AddGroupMemberBody = z.strictObject({ memberId: RecordIdParam, memberType: MemberType });
export type AddGroupMemberBody = z.infer<typeof AddGroupMemberBody>;

/** A membership record (HTTP 201 on add). */
export const GroupMember = z.object({
  groupId: z.uuid(),
  memberId: z.uuid(),
  memberType: MemberType,
  addedBy: z.string(),
  addedAt: z.iso.datetime(),
});
export type GroupMember = z.infer<typeof GroupMember>;

/** Reply of `registry.group.delete` and `registry.group.member.remove` (HTTP 204). */
export const EmptyReply = z.object({});
export type EmptyReply = z.infer<typeof EmptyReply>;

// ---- NATS requests: the HTTP body (or query) plus the caller and the path ids.

const withPrincipal = { principal: Principal };
/**
 * The org's `minCoverage` setting, which the gateway keeps and sends with a publish (and the
 * governance service with a submission's checks): a publish whose saved tests cover less is refused
 * with `coverage_below_minimum`. Absent or 0: no minimum.
 */
const gate = { minCoverage: z.number().int().min(0).max(100).optional() };

/** Request of `registry.policy.create`. */
export const PolicyCreateRequest = z.strictObject({ ...withPrincipal, ...CreatePolicyBody.shape });
export type PolicyCreateRequest = z.input<typeof PolicyCreateRequest>;
/** Request of `registry.policy.update`. */
export const PolicyUpdateRequest = z.strictObject({ ...withPrincipal, policyId: RecordIdParam, ...UpdatePolicyBody.shape, ...gate });
export type PolicyUpdateRequest = z.input<typeof PolicyUpdateRequest>;
/** Request of `registry.policy.checks`: the static checks of a policy text (any member of the org; run in the registry's check workers). */
export const PolicyChecksRequest = z.strictObject({ ...withPrincipal, rule: z.string() });
export type PolicyChecksRequest = z.input<typeof PolicyChecksRequest>;
/** Reply of `registry.policy.checks`. */
export const PolicyChecksReply = z.object(PolicyChecksFields);
export type PolicyChecksReply = z.infer<typeof PolicyChecksReply>;
/** Request of `registry.flow.checks`: the static checks of a flow definition's decision tables (any member of the org; in the check workers). */
export const FlowChecksRequest = z.strictObject({ ...withPrincipal, definition: FlowDefinition });
export type FlowChecksRequest = z.input<typeof FlowChecksRequest>;
/** Reply of `registry.flow.checks`. */
export const FlowChecksReply = z.object(TableChecksFields);
export type FlowChecksReply = z.infer<typeof FlowChecksReply>;
/** Request of `registry.policy.get`, `.draft` and `.delete`. */
export const PolicyIdRequest = z.strictObject({ ...withPrincipal, policyId: RecordIdParam });
export type PolicyIdRequest = z.input<typeof PolicyIdRequest>;
/** Request of `registry.policy.versions`. */
export const PolicyVersionsRequest = z.strictObject({ ...withPrincipal, policyId: RecordIdParam, ...VersionsQuery.shape });
export type PolicyVersionsRequest = z.input<typeof PolicyVersionsRequest>;

/** Request of `registry.flow.create`. */
export const FlowCreateRequest = z.strictObject({ ...withPrincipal, ...CreateFlowBody.shape });
export type FlowCreateRequest = z.input<typeof FlowCreateRequest>;
/** Request of `registry.flow.update`. */
export const FlowUpdateRequest = z.strictObject({ ...withPrincipal, flowId: RecordIdParam, ...UpdateFlowBody.shape, ...gate });
export type FlowUpdateRequest = z.input<typeof FlowUpdateRequest>;
/** Request of `registry.flow.get`, `.draft` and `.delete`. */
export const FlowIdRequest = z.strictObject({ ...withPrincipal, flowId: RecordIdParam });
export type FlowIdRequest = z.input<typeof FlowIdRequest>;
/** Request of `registry.flow.versions`. */
export const FlowVersionsRequest = z.strictObject({ ...withPrincipal, flowId: RecordIdParam, ...VersionsQuery.shape });
export type FlowVersionsRequest = z.input<typeof FlowVersionsRequest>;

/** Body of `POST /policy/{baseId}/rollback` and `POST /flow/{baseId}/rollback`. Unknown keys are rejected. */
export const RollbackBody = z.strictObject({
  toVersion: z
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .describe('The earlier version whose content becomes runnable again'),
  effectiveFrom: EffectiveFrom.optional(),
});
export type RollbackBody = z.infer<typeof RollbackBody>;
/** Request of `registry.policy.rollback` / `registry.flow.rollback`. */
export const RollbackRequest = z.strictObject({ ...withPrincipal, baseId: RecordIdParam, ...RollbackBody.shape });
export type RollbackRequest = z.input<typeof RollbackRequest>;
/** Path of `DELETE /{kind}/{baseId}/schedule/{version}`. */
export const ScheduleParams = z.object({
  baseId: RecordIdParam,
  version: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1),
});
/** Request of `registry.policy.scheduleCancel` / `registry.flow.scheduleCancel`. */
export const ScheduleCancelRequest = z.strictObject({ ...withPrincipal, baseId: RecordIdParam, version: z.number().int().min(1) });
export type ScheduleCancelRequest = z.input<typeof ScheduleCancelRequest>;

/** Request of `registry.policy.list`, `registry.flow.list` and `registry.group.list`. */
export const ListRequest = z.strictObject({ ...withPrincipal, ...ListQuery.shape });
export type ListRequest = z.input<typeof ListRequest>;
/** Request of `registry.policy.list` and `registry.flow.list`. */
export const RecordListRequest = z.strictObject({ ...withPrincipal, ...RecordListQuery.shape });
export type RecordListRequest = z.input<typeof RecordListRequest>;

/**
 * Request of `registry.policy.resolve` / `registry.flow.resolve`: rebuilds the runnable index of the
 * base from PostgreSQL and answers the record a run uses: by `recordId`, or by `baseId` (the pinned
 * `version`, else the current runnable record). not_found for unknown, deleted or other-org ids.
 */
export const ResolveRequest = z
  .strictObject({
    /** Whom the run resolves for: the record must be in this principal's org and viewable by it. */
    principal: Principal,
    baseId: RecordIdParam.optional(),
    recordId: RecordIdParam.optional(),
    version: z.number().int().min(1).optional(),
    /** A run by base id without `version`: the instant whose runnable version it uses (its `asOf`, else its `now`); absent: the current time. */
    at: z.iso.datetime({ offset: true }).optional(),
  })
  .refine((r) => (r.baseId === undefined) !== (r.recordId === undefined), 'must give exactly one of `baseId` and `recordId`')
  .refine((r) => r.version === undefined || r.baseId !== undefined, '`version` needs `baseId`');
export type ResolveRequest = z.input<typeof ResolveRequest>;

/** Request of `registry.group.create`. */
export const GroupCreateRequest = z.strictObject({ ...withPrincipal, ...CreateGroupBody.shape });
export type GroupCreateRequest = z.input<typeof GroupCreateRequest>;
/** Request of `registry.group.get` and `registry.group.delete`. */
export const GroupIdRequest = z.strictObject({ ...withPrincipal, groupId: RecordIdParam });
export type GroupIdRequest = z.input<typeof GroupIdRequest>;
/** Request of `registry.group.update`. */
export const GroupUpdateRequest = z
  .strictObject({ ...withPrincipal, groupId: RecordIdParam, name: Name.optional(), description: Description.optional() })
  .refine((b) => b.name !== undefined || b.description !== undefined, 'must set `name` or `description`');
export type GroupUpdateRequest = z.input<typeof GroupUpdateRequest>;
/** Request of `registry.group.member.add`. */
export const GroupMemberAddRequest = z.strictObject({ ...withPrincipal, groupId: RecordIdParam, ...AddGroupMemberBody.shape });
export type GroupMemberAddRequest = z.input<typeof GroupMemberAddRequest>;
/** Request of `registry.group.member.remove`. */
export const GroupMemberRemoveRequest = z.strictObject({ ...withPrincipal, groupId: RecordIdParam, memberId: RecordIdParam });
export type GroupMemberRemoveRequest = z.input<typeof GroupMemberRemoveRequest>;
/** Request of `registry.group.policies` and `registry.group.flows`. */
export const GroupMembersListRequest = z.strictObject({ ...withPrincipal, groupId: RecordIdParam, ...ListQuery.omit({ q: true }).shape });
export type GroupMembersListRequest = z.input<typeof GroupMembersListRequest>;

/**
 * Request of `registry.policy.publishReviewed` / `registry.flow.publishReviewed` (the governance
 * service, after an approval): publishes the draft `recordId` as the next version only when its
 * content hash, read under the base's row lock in the publishing transaction, still equals
 * `expectedContentHash` (else 409 `review_stale`, nothing written). Same checks as a `PUT` publish
 * (422 `cannot_publish`). Idempotent: when `recordId` is already a version with that content, the
 * reply is that version with `outcome: 'already_published'`.
 */
export const PublishReviewedRequest = z.strictObject({
  ...withPrincipal,
  recordId: RecordIdParam,
  expectedContentHash: z.string().min(1).max(128),
  reviewRequestId: z.uuid(),
  /** When the new version becomes the runnable version (docs/design/timeline.md); absent: at once. */
  effectiveFrom: EffectiveFrom.optional(),
  /** The new version starts as a staged rollout (docs/api.md#staged-rollouts). */
  rollout: RolloutStart.optional(),
});
export type PublishReviewedRequest = z.input<typeof PublishReviewedRequest>;
/** Reply of `registry.policy.publishReviewed`. */
export const PolicyPublishReviewedReply = z.object({ outcome: z.enum(['published', 'already_published']), record: PolicyRecord });
export type PolicyPublishReviewedReply = z.infer<typeof PolicyPublishReviewedReply>;
/** Reply of `registry.flow.publishReviewed`. */
export const FlowPublishReviewedReply = z.object({ outcome: z.enum(['published', 'already_published']), record: FlowRecord });
export type FlowPublishReviewedReply = z.infer<typeof FlowPublishReviewedReply>;
/**
 * Reply of `registry.flow.reviewCheck` (request: {@link FlowIdRequest}), asked before a flow's
 * review is approved: the policy nodes of its draft that would run text never reviewed (a draft:
 * reason `unreviewed_policy`), empty when every node runs a published version.
 */
export const FlowReviewCheckReply = z.object({ problems: z.array(ErrorReason) });
export type FlowReviewCheckReply = z.infer<typeof FlowReviewCheckReply>;

/**
 * Request of `registry.policy.publishCheck` / `registry.flow.publishCheck` (the governance service,
 * when a draft is submitted for review): runs the publish checks of the draft `recordId` without
 * publishing anything. 409 `version_immutable` for a version.
 */
export const PublishCheckRequest = z.strictObject({ ...withPrincipal, recordId: RecordIdParam, ...gate });
export type PublishCheckRequest = z.input<typeof PublishCheckRequest>;
/** Request of `registry.policy.testRun` / `registry.flow.testRun`: runs the saved tests of the base's draft, or of `version`. */
export const TestRunRequest = z.strictObject({ principal: Principal, baseId: RecordIdParam, version: TestRunQuery.shape.version });
export type TestRunRequest = z.input<typeof TestRunRequest>;

/** Static-check warnings a publish check carries at most (the review summary keeps them). */
export const MAX_REVIEW_WARNINGS = 50;

/** A static-check warning of a policy or of a flow's decision table, as the review summary shows it. */
export const StaticCheckWarning = z.union([PolicyStaticCheck, TableStaticCheck]);
export type StaticCheckWarning = z.infer<typeof StaticCheckWarning>;

/**
 * Reply of `registry.{policy,flow}.publishCheck`: every reason a publish of the draft would be
 * refused (422 `cannot_publish`), empty when it would pass, and the content hash that was checked.
 */
export const PublishCheckReply = z.object({
  contentHash: z.string(),
  problems: z.array(ErrorReason),
  /** What the saved tests cover, when the checks passed (the review summary shows it). */
  coverage: CoverageSummary.optional(),
  /** The static checks' warnings, when the checks passed (never blocking; the review summary shows them). */
  warnings: z.array(StaticCheckWarning).max(MAX_REVIEW_WARNINGS).optional(),
});
export type PublishCheckReply = z.infer<typeof PublishCheckReply>;

// ---- Restore

/**
 * The query `GET /policies` and `GET /flows` accept: {@link RecordListQuery} plus `deleted=true`,
 * which lists the org's soft-deleted bases instead (admin only, newest deletion first; `q` searches
 * their names, the other filters and `sort` do not apply to it).
 */
export const RecordListHttpQuery = RecordListQuery.extend({
  all: QueryFlag.optional().describe("`true` (admins only): also colleagues' never-published drafts"),
  deleted: z
    .enum(['true', 'false'])
    .optional()
    .describe('`true`: list the soft-deleted bases of the org instead (admin only; restore them with `POST .../restore`)'),
});
export type RecordListHttpQuery = z.infer<typeof RecordListHttpQuery>;

/** Request of `registry.policy.listDeleted` and `registry.flow.listDeleted` (admin): a page of deleted bases. */
export const ListDeletedRequest = z.strictObject({ ...withPrincipal, ...ListQuery.shape });
export type ListDeletedRequest = z.input<typeof ListDeletedRequest>;

/**
 * Request of `registry.policy.restore` and `registry.flow.restore` (admin): brings a soft-deleted
 * base back with all its records, given its base id or any of its record ids. 404 for unknown or
 * other-org ids, 409 `conflict` when the base is not deleted. Reply: the base's current record.
 */
export const RestoreRequest = z.strictObject({ ...withPrincipal, id: RecordIdParam });
export type RestoreRequest = z.input<typeof RestoreRequest>;

/** Body of `POST /policy/{id}/restore` and `POST /flow/{id}/restore`: none, or `{}`. */
export const RestoreBody = z.strictObject({});
export type RestoreBody = z.infer<typeof RestoreBody>;
