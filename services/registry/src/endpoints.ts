import {
  ExportPageRequest,
  ExportSubject,
  ImportRequest,
  ImportSubject,
  type ImportReply,
  type ExportPage,
  FlowCreateRequest,
  FlowIdRequest,
  FlowUpdateRequest,
  FlowVersionsRequest,
  GroupCreateRequest,
  GroupIdRequest,
  GroupMemberAddRequest,
  GroupMemberRemoveRequest,
  GroupMembersListRequest,
  GroupUpdateRequest,
  ListDeletedRequest,
  ListRequest,
  RecordListRequest,
  PolicyChecksRequest,
  FlowChecksRequest,
  PolicyCreateRequest,
  PolicyIdRequest,
  PolicyUpdateRequest,
  PolicyVersionsRequest,
  PublishReviewedRequest,
  PublishCheckRequest,
  RegistrySubject,
  ResolveRequest,
  RestoreRequest,
  RollbackRequest,
  ScheduleCancelRequest,
  TestRunRequest,
  type TestRunReport,
  type DeleteBaseReply,
  type EmptyReply,
  type FlowDraftReply,
  type FlowRecord,
  type FlowRecordPage,
  type FlowSummaryPage,
  type FlowPublishReviewedReply,
  type FlowReviewCheckReply,
  type PublishCheckReply,
  type FlowUpdateReply,
  type Group,
  type GroupMember,
  type GroupPage,
  type PolicyDraftReply,
  type PolicyRecord,
  type PolicyRecordPage,
  type PolicySummaryPage,
  type PolicyPublishReviewedReply,
  type PolicyUpdateReply,
  type PolicyChecksReply,
  type FlowChecksReply,
} from '@arbiter/contracts';
import { defineEndpoint, type ServiceDef } from '@arbiter/service-kit';
import {
  toDeletedFlowSummary,
  toDeletedPolicySummary,
  toFlowRecord,
  toFlowSummary,
  toPolicyRecord,
  toPolicySummary,
} from './domain/mappers.js';
import type { ExportService } from './export-service.js';
import type { GroupsService } from './groups-service.js';
import type { ImportService } from './import-service.js';
import type { RecordsService } from './records-service.js';
import type { GroupRow } from './repositories/groups.js';
import type { RecordRow } from './repositories/records.js';
import type { VersionInterval } from './domain/timeline.js';

/** A version's effective interval on its base's timeline (docs/design/timeline.md), as `GET …/versions` shows it; nothing for a draft. */
function intervalFields(r: RecordRow, intervals: Map<number, VersionInterval>) {
  const i = r.version === null ? undefined : intervals.get(r.version);
  if (i === undefined) return {};
  return {
    effectiveFrom: i.effectiveFrom.toISOString(),
    effectiveUntil: i.effectiveUntil?.toISOString() ?? null,
    cancelled: i.cancelled,
    rollbackOf: i.rollbackOf,
  };
}

/** The services the endpoints call. */
export interface RegistryServices {
  policies: RecordsService;
  flows: RecordsService;
  groups: GroupsService;
  exports: ExportService;
  imports: ImportService;
}

function toGroup(g: GroupRow): Group {
  return {
    groupId: g.id,
    name: g.name,
    description: g.description,
    createdBy: g.createdBy,
    createdAt: g.createdAt.toISOString(),
    updatedAt: g.updatedAt.toISOString(),
  };
}

/** The `registry` NATS service: thin handlers from {@link RegistrySubject} to the services. */
export function registryService(s: RegistryServices, version: string): ServiceDef {
  const { policies, flows, groups } = s;
  return {
    name: 'registry',
    version,
    description: 'Policies, flows and groups: drafts, versions, ownership, soft delete',
    endpoints: {
      policy_create: defineEndpoint({
        subject: RegistrySubject.policyCreate,
        request: PolicyCreateRequest,
        handler: async ({ principal, name, description, rule, schema, tests }): Promise<PolicyRecord> =>
          toPolicyRecord(await policies.create(principal, { name, description, rule, definition: null, schema, tests })),
      }),
      policy_update: defineEndpoint({
        subject: RegistrySubject.policyUpdate,
        request: PolicyUpdateRequest,
        handler: async ({ principal, policyId, status, minCoverage, effectiveFrom, rollout, ...patch }): Promise<PolicyUpdateReply> => {
          const out = await policies.update(principal, policyId, status, patch, minCoverage, effectiveFrom, rollout);
          return { outcome: out.outcome, record: toPolicyRecord(out.record) };
        },
      }),
      policy_get: defineEndpoint({
        subject: RegistrySubject.policyGet,
        request: PolicyIdRequest,
        handler: async ({ principal, policyId }): Promise<PolicyRecord> => {
          const record = await policies.get(principal, policyId);
          return { ...toPolicyRecord(record), groups: (await groups.ofBases(principal, [record.baseId])).get(record.baseId) ?? [] };
        },
      }),
      policy_versions: defineEndpoint({
        subject: RegistrySubject.policyVersions,
        request: PolicyVersionsRequest,
        handler: async ({ principal, policyId, limit, cursor }): Promise<PolicyRecordPage> => {
          const page = await policies.versions(principal, policyId, { limit, cursor });
          return {
            items: page.items.map((r) => ({ ...toPolicyRecord(r), ...intervalFields(r, page.intervals) })),
            nextCursor: page.nextCursor,
          };
        },
      }),
      policy_draft: defineEndpoint({
        subject: RegistrySubject.policyDraft,
        request: PolicyIdRequest,
        handler: async ({ principal, policyId }): Promise<PolicyDraftReply> => {
          const out = await policies.draft(principal, policyId);
          return { created: out.created, record: toPolicyRecord(out.record) };
        },
      }),
      policy_list: defineEndpoint({
        subject: RegistrySubject.policyList,
        request: RecordListRequest,
        handler: async ({ principal, group, ...query }): Promise<PolicySummaryPage> => {
          const page = await policies.list(principal, { ...query, groupId: group });
          return { items: page.items.map(toPolicySummary), nextCursor: page.nextCursor };
        },
      }),
      policy_delete: defineEndpoint({
        subject: RegistrySubject.policyDelete,
        request: PolicyIdRequest,
        handler: async ({ principal, policyId }): Promise<DeleteBaseReply> => policies.remove(principal, policyId),
      }),
      policy_resolve: defineEndpoint({
        subject: RegistrySubject.policyResolve,
        request: ResolveRequest,
        handler: async (req) => policies.resolve(req),
      }),
      policy_publish_reviewed: defineEndpoint({
        subject: RegistrySubject.policyPublishReviewed,
        request: PublishReviewedRequest,
        handler: async ({
          principal,
          recordId,
          expectedContentHash,
          reviewRequestId,
          effectiveFrom,
          rollout,
        }): Promise<PolicyPublishReviewedReply> => {
          const out = await policies.publishReviewed(principal, recordId, expectedContentHash, reviewRequestId, effectiveFrom, rollout);
          return { outcome: out.outcome, record: toPolicyRecord(out.record) };
        },
      }),
      policy_publish_check: defineEndpoint({
        subject: RegistrySubject.policyPublishCheck,
        request: PublishCheckRequest,
        handler: async ({ principal, recordId, minCoverage }): Promise<PublishCheckReply> =>
          policies.publishCheck(principal, recordId, minCoverage),
      }),
      policy_test_run: defineEndpoint({
        subject: RegistrySubject.policyTestRun,
        request: TestRunRequest,
        handler: async ({ principal, baseId, version }): Promise<TestRunReport> => policies.testRun(principal, baseId, version),
      }),
      flow_test_run: defineEndpoint({
        subject: RegistrySubject.flowTestRun,
        request: TestRunRequest,
        handler: async ({ principal, baseId, version }): Promise<TestRunReport> => flows.testRun(principal, baseId, version),
      }),
      policy_checks: defineEndpoint({
        subject: RegistrySubject.policyChecks,
        request: PolicyChecksRequest,
        handler: async ({ principal, rule }): Promise<PolicyChecksReply> => policies.staticChecks(principal, rule),
      }),
      flow_checks: defineEndpoint({
        subject: RegistrySubject.flowChecks,
        request: FlowChecksRequest,
        handler: async ({ principal, definition }): Promise<FlowChecksReply> => flows.tableChecks(principal, definition),
      }),
      flow_review_check: defineEndpoint({
        subject: RegistrySubject.flowReviewCheck,
        request: FlowIdRequest,
        handler: async ({ principal, flowId }): Promise<FlowReviewCheckReply> => ({ problems: await flows.reviewCheck(principal, flowId) }),
      }),
      flow_create: defineEndpoint({
        subject: RegistrySubject.flowCreate,
        request: FlowCreateRequest,
        handler: async ({ principal, name, description, definition, schema, tests }): Promise<FlowRecord> =>
          toFlowRecord(await flows.create(principal, { name, description, rule: null, definition, schema, tests })),
      }),
      flow_update: defineEndpoint({
        subject: RegistrySubject.flowUpdate,
        request: FlowUpdateRequest,
        handler: async ({ principal, flowId, status, minCoverage, effectiveFrom, rollout, ...patch }): Promise<FlowUpdateReply> => {
          const out = await flows.update(principal, flowId, status, patch, minCoverage, effectiveFrom, rollout);
          return { outcome: out.outcome, record: toFlowRecord(out.record) };
        },
      }),
      flow_get: defineEndpoint({
        subject: RegistrySubject.flowGet,
        request: FlowIdRequest,
        handler: async ({ principal, flowId }): Promise<FlowRecord> => {
          const record = await flows.get(principal, flowId);
          return { ...toFlowRecord(record), groups: (await groups.ofBases(principal, [record.baseId])).get(record.baseId) ?? [] };
        },
      }),
      flow_versions: defineEndpoint({
        subject: RegistrySubject.flowVersions,
        request: FlowVersionsRequest,
        handler: async ({ principal, flowId, limit, cursor }): Promise<FlowRecordPage> => {
          const page = await flows.versions(principal, flowId, { limit, cursor });
          return {
            items: page.items.map((r) => ({ ...toFlowRecord(r), ...intervalFields(r, page.intervals) })),
            nextCursor: page.nextCursor,
          };
        },
      }),
      flow_draft: defineEndpoint({
        subject: RegistrySubject.flowDraft,
        request: FlowIdRequest,
        handler: async ({ principal, flowId }): Promise<FlowDraftReply> => {
          const out = await flows.draft(principal, flowId);
          return { created: out.created, record: toFlowRecord(out.record) };
        },
      }),
      flow_list: defineEndpoint({
        subject: RegistrySubject.flowList,
        request: RecordListRequest,
        handler: async ({ principal, group, ...query }): Promise<FlowSummaryPage> => {
          const page = await flows.list(principal, { ...query, groupId: group });
          return { items: page.items.map(toFlowSummary), nextCursor: page.nextCursor };
        },
      }),
      flow_delete: defineEndpoint({
        subject: RegistrySubject.flowDelete,
        request: FlowIdRequest,
        handler: async ({ principal, flowId }): Promise<DeleteBaseReply> => flows.remove(principal, flowId),
      }),
      flow_resolve: defineEndpoint({
        subject: RegistrySubject.flowResolve,
        request: ResolveRequest,
        handler: async (req) => flows.resolve(req),
      }),
      flow_publish_reviewed: defineEndpoint({
        subject: RegistrySubject.flowPublishReviewed,
        request: PublishReviewedRequest,
        handler: async ({
          principal,
          recordId,
          expectedContentHash,
          reviewRequestId,
          effectiveFrom,
          rollout,
        }): Promise<FlowPublishReviewedReply> => {
          const out = await flows.publishReviewed(principal, recordId, expectedContentHash, reviewRequestId, effectiveFrom, rollout);
          return { outcome: out.outcome, record: toFlowRecord(out.record) };
        },
      }),
      flow_publish_check: defineEndpoint({
        subject: RegistrySubject.flowPublishCheck,
        request: PublishCheckRequest,
        handler: async ({ principal, recordId, minCoverage }): Promise<PublishCheckReply> =>
          flows.publishCheck(principal, recordId, minCoverage),
      }),
      ...restoreEndpoints(s),
      policy_rollback: defineEndpoint({
        subject: RegistrySubject.policyRollback,
        request: RollbackRequest,
        handler: async ({ principal, baseId, toVersion, effectiveFrom }): Promise<PolicyRecord> =>
          toPolicyRecord(await policies.rollback(principal, baseId, toVersion, effectiveFrom)),
      }),
      flow_rollback: defineEndpoint({
        subject: RegistrySubject.flowRollback,
        request: RollbackRequest,
        handler: async ({ principal, baseId, toVersion, effectiveFrom }): Promise<FlowRecord> =>
          toFlowRecord(await flows.rollback(principal, baseId, toVersion, effectiveFrom)),
      }),
      policy_schedule_cancel: defineEndpoint({
        subject: RegistrySubject.policyScheduleCancel,
        request: ScheduleCancelRequest,
        handler: async ({ principal, baseId, version }): Promise<PolicyRecord> =>
          toPolicyRecord(await policies.cancelSchedule(principal, baseId, version)),
      }),
      flow_schedule_cancel: defineEndpoint({
        subject: RegistrySubject.flowScheduleCancel,
        request: ScheduleCancelRequest,
        handler: async ({ principal, baseId, version }): Promise<FlowRecord> =>
          toFlowRecord(await flows.cancelSchedule(principal, baseId, version)),
      }),
      export_page: defineEndpoint({
        subject: ExportSubject,
        request: ExportPageRequest,
        handler: async ({ principal, ...query }): Promise<ExportPage> => s.exports.page(principal, query),
      }),
      import_bundle: defineEndpoint({
        subject: ImportSubject,
        request: ImportRequest,
        handler: async ({ principal, bundle, dryRun, governed }): Promise<ImportReply> =>
          s.imports.run(principal, bundle, dryRun, governed),
      }),
      group_create: defineEndpoint({
        subject: RegistrySubject.groupCreate,
        request: GroupCreateRequest,
        handler: async ({ principal, ...input }): Promise<Group> => toGroup(await groups.create(principal, input)),
      }),
      group_get: defineEndpoint({
        subject: RegistrySubject.groupGet,
        request: GroupIdRequest,
        handler: async ({ principal, groupId }): Promise<Group> => toGroup(await groups.get(principal, groupId)),
      }),
      group_update: defineEndpoint({
        subject: RegistrySubject.groupUpdate,
        request: GroupUpdateRequest,
        handler: async ({ principal, groupId, ...set }): Promise<Group> => toGroup(await groups.update(principal, groupId, set)),
      }),
      group_delete: defineEndpoint({
        subject: RegistrySubject.groupDelete,
        request: GroupIdRequest,
        handler: async ({ principal, groupId }): Promise<EmptyReply> => {
          await groups.remove(principal, groupId);
          return {};
        },
      }),
      group_list: defineEndpoint({
        subject: RegistrySubject.groupList,
        request: ListRequest,
        handler: async ({ principal, ...query }): Promise<GroupPage> => {
          const page = await groups.list(principal, query);
          return { items: page.items.map(toGroup), nextCursor: page.nextCursor };
        },
      }),
      group_member_add: defineEndpoint({
        subject: RegistrySubject.groupMemberAdd,
        request: GroupMemberAddRequest,
        handler: async ({ principal, groupId, memberId, memberType }): Promise<GroupMember> => {
          const m = await groups.addMember(principal, groupId, { memberId, memberType });
          return { groupId: m.groupId, memberId: m.baseId, memberType: m.memberType, addedBy: m.addedBy, addedAt: m.addedAt.toISOString() };
        },
      }),
      group_member_remove: defineEndpoint({
        subject: RegistrySubject.groupMemberRemove,
        request: GroupMemberRemoveRequest,
        handler: async ({ principal, groupId, memberId }): Promise<EmptyReply> => {
          await groups.removeMember(principal, groupId, memberId);
          return {};
        },
      }),
      group_policies: defineEndpoint({
        subject: RegistrySubject.groupPolicies,
        request: GroupMembersListRequest,
        handler: async ({ principal, groupId, ...query }): Promise<PolicySummaryPage> => {
          await groups.assertVisible(principal, groupId);
          const page = await policies.list(principal, { ...query, groupId });
          return { items: page.items.map(toPolicySummary), nextCursor: page.nextCursor };
        },
      }),
      group_flows: defineEndpoint({
        subject: RegistrySubject.groupFlows,
        request: GroupMembersListRequest,
        handler: async ({ principal, groupId, ...query }): Promise<FlowSummaryPage> => {
          await groups.assertVisible(principal, groupId);
          const page = await flows.list(principal, { ...query, groupId });
          return { items: page.items.map(toFlowSummary), nextCursor: page.nextCursor };
        },
      }),
    },
  };
}

/** Restore and the lists of deleted bases, admin only. */
function restoreEndpoints({ policies, flows }: RegistryServices): ServiceDef['endpoints'] {
  return {
    policy_restore: defineEndpoint({
      subject: RegistrySubject.policyRestore,
      request: RestoreRequest,
      handler: async ({ principal, id }): Promise<PolicyRecord> => toPolicyRecord(await policies.restore(principal, id)),
    }),
    policy_list_deleted: defineEndpoint({
      subject: RegistrySubject.policyListDeleted,
      request: ListDeletedRequest,
      handler: async ({ principal, ...query }): Promise<PolicySummaryPage> => {
        const page = await policies.listDeleted(principal, query);
        return { items: page.items.map(toDeletedPolicySummary), nextCursor: page.nextCursor };
      },
    }),
    flow_restore: defineEndpoint({
      subject: RegistrySubject.flowRestore,
      request: RestoreRequest,
      handler: async ({ principal, id }): Promise<FlowRecord> => toFlowRecord(await flows.restore(principal, id)),
    }),
    flow_list_deleted: defineEndpoint({
      subject: RegistrySubject.flowListDeleted,
      request: ListDeletedRequest,
      handler: async ({ principal, ...query }): Promise<FlowSummaryPage> => {
        const page = await flows.listDeleted(principal, query);
        return { items: page.items.map(toDeletedFlowSummary), nextCursor: page.nextCursor };
      },
    }),
  };
}
