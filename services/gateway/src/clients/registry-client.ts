import {
  ExportPage,
  RolloutState,
  RolloutSubject,
  type RolloutRequest,
  ExportSubject,
  ImportReply,
  ImportSubject,
  type ImportBundle,
  type ImportRequest,
  type ExportPageRequest,
  type ExportSection,
  DeleteBaseReply,
  EmptyReply,
  FlowDraftReply,
  FlowRecord,
  FlowRecordPage,
  FlowSummaryPage,
  FlowUpdateReply,
  Group,
  GroupMember,
  GroupPage,
  PolicyChecksReply,
  FlowChecksReply,
  PolicyDraftReply,
  PolicyRecord,
  PolicyRecordPage,
  PolicySummaryPage,
  PolicyUpdateReply,
  RegistrySubject,
  TestRunReport,
  type TestRunQuery,
  type TestRunRequest,
  type AddGroupMemberBody,
  type CreateFlowBody,
  type CreateGroupBody,
  type CreatePolicyBody,
  type PolicyChecksRequest,
  type FlowChecksRequest,
  type FlowDefinition,
  type FlowCreateRequest,
  type FlowIdRequest,
  type FlowUpdateRequest,
  type FlowVersionsRequest,
  type GroupCreateRequest,
  type GroupIdRequest,
  type GroupMemberAddRequest,
  type GroupMemberRemoveRequest,
  type GroupMembersListRequest,
  type GroupUpdateRequest,
  type ListDeletedRequest,
  type ListQuery,
  type ListRequest,
  type RecordListQuery,
  type RecordListRequest,
  type PolicyCreateRequest,
  type PolicyIdRequest,
  type PolicyUpdateRequest,
  type PolicyVersionsRequest,
  type Principal,
  type RestoreRequest,
  type UpdateFlowBody,
  type UpdateGroupBody,
  type UpdatePolicyBody,
  type VersionsQuery,
  type RollbackBody,
  type RollbackRequest,
  type ScheduleCancelRequest,
} from '@arbiter/contracts';
import type { Bus, RequestOptions } from '@arbiter/service-kit';
import type { z } from 'zod';

/** Per-call context passed along for tracing. */
export interface RegistryCallContext {
  /** The HTTP request id, forwarded so logs can be followed across services. */
  readonly requestId?: string;
}

/** A page of a list. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Policies or flows in the registry (`R` the record, `S` the list summary, `C`/`U` the create and
 * update bodies). Authorization, ownership and tenancy are decided by the registry from the
 * principal; its refusals arrive as `ArbiterError`s with the registry's code.
 */
export interface RecordsClient<R, S, C, U> {
  /** Creates a base with its draft. */
  create(principal: Principal, body: C, ctx?: RegistryCallContext): Promise<R>;
  /** Updates a draft, or publishes it (`outcome: 'published'`), refusing less coverage than `minCoverage` percent (the org's setting). */
  update(
    principal: Principal,
    recordId: string,
    body: U & { minCoverage?: number },
    ctx?: RegistryCallContext,
  ): Promise<{ outcome: 'updated' | 'published'; record: R }>;
  /** A draft or version by id. */
  get(principal: Principal, recordId: string, ctx?: RegistryCallContext): Promise<R>;
  /** A page of the base's draft and versions, given any record id of the base. */
  versions(principal: Principal, recordId: string, query: VersionsQuery, ctx?: RegistryCallContext): Promise<Page<R>>;
  /** The base's existing draft (`created: false`) or a new one from the given version. */
  draft(principal: Principal, recordId: string, ctx?: RegistryCallContext): Promise<{ created: boolean; record: R }>;
  /** A page of the bases the caller sees. */
  list(principal: Principal, query: RecordListQuery, ctx?: RegistryCallContext): Promise<Page<S>>;
  /** Soft-deletes the base of any of its record ids. */
  remove(principal: Principal, recordId: string, ctx?: RegistryCallContext): Promise<void>;
  /** Brings a soft-deleted base back (admin), given its base id or any record id; answers its current record. */
  restore(principal: Principal, id: string, ctx?: RegistryCallContext): Promise<R>;
  /** A page of the org's soft-deleted bases (admin). */
  listDeleted(principal: Principal, query: ListQuery, ctx?: RegistryCallContext): Promise<Page<S>>;
  /** Runs the saved tests of the base's draft (or `query.version`) with coverage, given its base id or any record id. */
  testRun(principal: Principal, baseId: string, query: TestRunQuery, ctx?: RegistryCallContext): Promise<TestRunReport>;
  /** Publishes an earlier version's content again as the next version, at once or at `body.effectiveFrom`. */
  rollback(principal: Principal, baseId: string, body: RollbackBody, ctx?: RegistryCallContext): Promise<R>;
  /** Cancels a version's schedule before its instant; answers the version. */
  cancelSchedule(principal: Principal, baseId: string, version: number, ctx?: RegistryCallContext): Promise<R>;
}

/** Groups of policy and flow bases in the registry. */
export interface GroupsClient {
  /** Creates a group. */
  create(principal: Principal, body: CreateGroupBody, ctx?: RegistryCallContext): Promise<Group>;
  /** A group of the caller's org. */
  get(principal: Principal, groupId: string, ctx?: RegistryCallContext): Promise<Group>;
  /** Changes a group's name or description. */
  update(principal: Principal, groupId: string, body: UpdateGroupBody, ctx?: RegistryCallContext): Promise<Group>;
  /** Deletes a group and its memberships. */
  remove(principal: Principal, groupId: string, ctx?: RegistryCallContext): Promise<void>;
  /** A page of the org's groups. */
  list(principal: Principal, query: ListQuery, ctx?: RegistryCallContext): Promise<Page<Group>>;
  /** Adds a live policy or flow base. */
  addMember(principal: Principal, groupId: string, body: AddGroupMemberBody, ctx?: RegistryCallContext): Promise<GroupMember>;
  /** Removes a member base. */
  removeMember(principal: Principal, groupId: string, memberId: string, ctx?: RegistryCallContext): Promise<void>;
  /** A page of the group's policies the caller sees. */
  policies(principal: Principal, groupId: string, query: Omit<ListQuery, 'q'>, ctx?: RegistryCallContext): Promise<PolicySummaryPage>;
  /** A page of the group's flows the caller sees. */
  flows(principal: Principal, groupId: string, query: Omit<ListQuery, 'q'>, ctx?: RegistryCallContext): Promise<FlowSummaryPage>;
}

/** Policies of the registry. */
export type PoliciesClient = RecordsClient<PolicyRecord, PolicySummaryPage['items'][number], CreatePolicyBody, UpdatePolicyBody>;
/** Flows of the registry. */
export type FlowsClient = RecordsClient<FlowRecord, FlowSummaryPage['items'][number], CreateFlowBody, UpdateFlowBody>;

/** What the gateway needs from the registry service (docs/api.md#policies-and-flows). */
export interface RegistryClient {
  readonly policies: PoliciesClient;
  readonly flows: FlowsClient;
  readonly groups: GroupsClient;
  /** A page of one section of the caller's org for `GET /export` (admin). */
  exportPage(principal: Principal, section: ExportSection, cursor: string | undefined, ctx?: RegistryCallContext): Promise<ExportPage>;
  /** The static checks of a policy text (docs/api.md#static-checks), run in the registry's check workers. */
  policyChecks(principal: Principal, rule: string, ctx?: RegistryCallContext): Promise<PolicyChecksReply>;
  /** The static checks of a flow definition's decision tables (docs/tables.md#static-checks-publish), in the registry's check workers. */
  flowChecks(principal: Principal, definition: FlowDefinition, ctx?: RegistryCallContext): Promise<FlowChecksReply>;
  /** `POST /import` (admin): plans (`dryRun`) or loads a bundle into the caller's org. */
  importBundle(
    principal: Principal,
    bundle: ImportBundle,
    dryRun: boolean,
    ctx?: RegistryCallContext & { governed?: boolean },
  ): Promise<ImportReply>;
  /** A staged-rollout act on a base (docs/api.md#staged-rollouts). */
  rollout(
    principal: Principal,
    kind: 'policy' | 'flow',
    baseId: string,
    action: 'get' | 'percent' | 'promote' | 'rollback',
    percent: number | undefined,
    ctx?: RegistryCallContext,
  ): Promise<RolloutState>;
}

/**
 * The production {@link RegistryClient}: request/reply to the registry service on
 * `<prefix>.registry.*`, every request carrying the caller's principal. `Bus.request` turns "no
 * replica listening" into `dependency_unavailable` (503), a missed deadline into `timeout` (504)
 * and an error envelope into the registry's `ArbiterError`.
 */
export class NatsRegistryClient implements RegistryClient {
  readonly policies: PoliciesClient;
  readonly flows: FlowsClient;
  readonly groups: GroupsClient;

  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs: number,
    /** Deadline of an import: one transaction over a whole bundle takes longer than one record's change. */
    private readonly importTimeoutMs: number = Math.max(timeoutMs, 30_000),
  ) {
    const send = this.send.bind(this);
    this.policies = {
      create: (principal, body, ctx) =>
        send(RegistrySubject.policyCreate, { principal, ...body } satisfies PolicyCreateRequest, PolicyRecord, ctx),
      update: (principal, policyId, body, ctx) =>
        send(RegistrySubject.policyUpdate, { principal, policyId, ...body } satisfies PolicyUpdateRequest, PolicyUpdateReply, ctx),
      get: (principal, policyId, ctx) =>
        send(RegistrySubject.policyGet, { principal, policyId } satisfies PolicyIdRequest, PolicyRecord, ctx),
      versions: (principal, policyId, query, ctx) =>
        send(RegistrySubject.policyVersions, { principal, policyId, ...query } satisfies PolicyVersionsRequest, PolicyRecordPage, ctx),
      draft: (principal, policyId, ctx) =>
        send(RegistrySubject.policyDraft, { principal, policyId } satisfies PolicyIdRequest, PolicyDraftReply, ctx),
      list: (principal, query, ctx) =>
        send(RegistrySubject.policyList, { principal, ...query } satisfies RecordListRequest, PolicySummaryPage, ctx),
      remove: async (principal, policyId, ctx) => {
        await send(RegistrySubject.policyDelete, { principal, policyId } satisfies PolicyIdRequest, DeleteBaseReply, ctx);
      },
      restore: (principal, id, ctx) => send(RegistrySubject.policyRestore, { principal, id } satisfies RestoreRequest, PolicyRecord, ctx),
      listDeleted: (principal, query, ctx) =>
        send(RegistrySubject.policyListDeleted, { principal, ...query } satisfies ListDeletedRequest, PolicySummaryPage, ctx),
      testRun: (principal, baseId, query, ctx) =>
        send(RegistrySubject.policyTestRun, { principal, baseId, ...query } satisfies TestRunRequest, TestRunReport, ctx),
      rollback: (principal, baseId, body, ctx) =>
        send(RegistrySubject.policyRollback, { principal, baseId, ...body } satisfies RollbackRequest, PolicyRecord, ctx),
      cancelSchedule: (principal, baseId, version, ctx) =>
        send(RegistrySubject.policyScheduleCancel, { principal, baseId, version } satisfies ScheduleCancelRequest, PolicyRecord, ctx),
    };
    this.flows = {
      create: (principal, body, ctx) =>
        send(RegistrySubject.flowCreate, { principal, ...body } satisfies FlowCreateRequest, FlowRecord, ctx),
      update: (principal, flowId, body, ctx) =>
        send(RegistrySubject.flowUpdate, { principal, flowId, ...body } satisfies FlowUpdateRequest, FlowUpdateReply, ctx),
      get: (principal, flowId, ctx) => send(RegistrySubject.flowGet, { principal, flowId } satisfies FlowIdRequest, FlowRecord, ctx),
      versions: (principal, flowId, query, ctx) =>
        send(RegistrySubject.flowVersions, { principal, flowId, ...query } satisfies FlowVersionsRequest, FlowRecordPage, ctx),
      draft: (principal, flowId, ctx) =>
        send(RegistrySubject.flowDraft, { principal, flowId } satisfies FlowIdRequest, FlowDraftReply, ctx),
      list: (principal, query, ctx) =>
        send(RegistrySubject.flowList, { principal, ...query } satisfies RecordListRequest, FlowSummaryPage, ctx),
      remove: async (principal, flowId, ctx) => {
        await send(RegistrySubject.flowDelete, { principal, flowId } satisfies FlowIdRequest, DeleteBaseReply, ctx);
      },
      restore: (principal, id, ctx) => send(RegistrySubject.flowRestore, { principal, id } satisfies RestoreRequest, FlowRecord, ctx),
      listDeleted: (principal, query, ctx) =>
        send(RegistrySubject.flowListDeleted, { principal, ...query } satisfies ListDeletedRequest, FlowSummaryPage, ctx),
      testRun: (principal, baseId, query, ctx) =>
        send(RegistrySubject.flowTestRun, { principal, baseId, ...query } satisfies TestRunRequest, TestRunReport, ctx),
      rollback: (principal, baseId, body, ctx) =>
        send(RegistrySubject.flowRollback, { principal, baseId, ...body } satisfies RollbackRequest, FlowRecord, ctx),
      cancelSchedule: (principal, baseId, version, ctx) =>
        send(RegistrySubject.flowScheduleCancel, { principal, baseId, version } satisfies ScheduleCancelRequest, FlowRecord, ctx),
    };
    this.groups = {
      create: (principal, body, ctx) => send(RegistrySubject.groupCreate, { principal, ...body } satisfies GroupCreateRequest, Group, ctx),
      get: (principal, groupId, ctx) => send(RegistrySubject.groupGet, { principal, groupId } satisfies GroupIdRequest, Group, ctx),
      update: (principal, groupId, body, ctx) =>
        send(RegistrySubject.groupUpdate, { principal, groupId, ...body } satisfies GroupUpdateRequest, Group, ctx),
      remove: async (principal, groupId, ctx) => {
        await send(RegistrySubject.groupDelete, { principal, groupId } satisfies GroupIdRequest, EmptyReply, ctx);
      },
      list: (principal, query, ctx) => send(RegistrySubject.groupList, { principal, ...query } satisfies ListRequest, GroupPage, ctx),
      addMember: (principal, groupId, body, ctx) =>
        send(RegistrySubject.groupMemberAdd, { principal, groupId, ...body } satisfies GroupMemberAddRequest, GroupMember, ctx),
      removeMember: async (principal, groupId, memberId, ctx) => {
        await send(RegistrySubject.groupMemberRemove, { principal, groupId, memberId } satisfies GroupMemberRemoveRequest, EmptyReply, ctx);
      },
      policies: (principal, groupId, query, ctx) =>
        send(RegistrySubject.groupPolicies, { principal, groupId, ...query } satisfies GroupMembersListRequest, PolicySummaryPage, ctx),
      flows: (principal, groupId, query, ctx) =>
        send(RegistrySubject.groupFlows, { principal, groupId, ...query } satisfies GroupMembersListRequest, FlowSummaryPage, ctx),
    };
  }

  exportPage(principal: Principal, section: ExportSection, cursor: string | undefined, ctx?: RegistryCallContext): Promise<ExportPage> {
    const request: ExportPageRequest = { principal, section, ...(cursor !== undefined ? { cursor } : {}) };
    return this.send(ExportSubject, request, ExportPage, ctx);
  }

  flowChecks(principal: Principal, definition: FlowDefinition, ctx?: RegistryCallContext): Promise<FlowChecksReply> {
    return this.send(RegistrySubject.flowChecks, { principal, definition } satisfies FlowChecksRequest, FlowChecksReply, ctx);
  }

  policyChecks(principal: Principal, rule: string, ctx?: RegistryCallContext): Promise<PolicyChecksReply> {
    return this.send(RegistrySubject.policyChecks, { principal, rule } satisfies PolicyChecksRequest, PolicyChecksReply, ctx);
  }

  importBundle(
    principal: Principal,
    bundle: ImportBundle,
    dryRun: boolean,
    ctx?: RegistryCallContext & { governed?: boolean },
  ): Promise<ImportReply> {
    const request: ImportRequest = { principal, bundle, dryRun, governed: ctx?.governed ?? false };
    return this.send(ImportSubject, request, ImportReply, ctx, this.importTimeoutMs);
  }

  /** A rollout act on a base (docs/api.md#staged-rollouts): `get`, `percent` (with `percent`), `promote`, `rollback`. */
  rollout(
    principal: Principal,
    kind: 'policy' | 'flow',
    baseId: string,
    action: 'get' | 'percent' | 'promote' | 'rollback',
    percent: number | undefined,
    ctx?: RegistryCallContext,
  ): Promise<RolloutState> {
    const request: RolloutRequest = { principal, baseId, action, ...(percent !== undefined ? { percent } : {}) };
    return this.send(RolloutSubject[kind], request, RolloutState, ctx);
  }

  private send<T>(
    subject: RegistrySubject | RolloutSubject | typeof ExportSubject | typeof ImportSubject,
    payload: unknown,
    reply: z.ZodType<T>,
    ctx: RegistryCallContext | undefined,
    timeoutMs: number = this.timeoutMs,
  ): Promise<T> {
    const opts: RequestOptions = { timeoutMs, ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}) };
    return this.bus.request(subject, payload, reply, opts);
  }
}
