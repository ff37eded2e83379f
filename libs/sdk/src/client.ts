import { ArbiterError } from '@arbiter/contracts/error-codes';
import type {
  RunFlags,
  ApiKey,
  ApiKeyListFilter,
  AuditEvent,
  AuditExportFilter,
  AuditListFilter,
  DecisionFilter,
  DecisionRecord,
  TestFromDecisionBody,
  Bundle,
  CreateApiKeyRequest,
  CreatedApiKey,
  CreateFlowInput,
  CreateGroupInput,
  CreatePolicyInput,
  DeletedListFilter,
  ExplainResponse,
  FlowDefinition,
  FlowRecord,
  FlowReview,
  FlowRunResponse,
  FlowSummary,
  Group,
  GroupListFilter,
  GroupMember,
  ImpactReport,
  TestRunReport,
  ImpactRequest,
  ImportBundleInput,
  ImportReply,
  MeResponse,
  Member,
  MemberType,
  OperatorsResponse,
  OrgSettings,
  OrgSettingsBody,
  PolicyRecord,
  PolicyReview,
  PolicySummary,
  RecordListFilter,
  ReviewDecisionBody,
  ReviewPublishBody,
  RolloutState,
  ReviewInboxItem,
  Role,
  RunBatchInput,
  RunBatchResponse,
  RunInput,
  RunnableQuery,
  RunnableSnapshot,
  RunReport,
  RunReportReply,
  RunResponse,
  ShadowBody,
  ShadowReport,
  StoredFlowBatchResponse,
  StoredFlowRunResponse,
  StoredPolicyBatchResponse,
  StoredPolicyRunResponse,
  UpdateFlowInput,
  UpdateGroupInput,
  UpdatePolicyInput,
  ValidateHttpResponse,
  Webhook,
  WebhookCreateBody,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookPatchBody,
  WebhookTestReply,
  WebhookWithSecret,
} from '@arbiter/contracts';
import { segment, Transport, type RetryOptions, type TransportOptions } from './http.js';
import { Paged, type Page } from './pages.js';
import { lines, serverSentEvents, type ServerSentEvent } from './streams.js';

/** Options of the client: the gateway's address and one credential. */
export type ArbiterOptions = {
  /** The gateway's address, e.g. `https://arbiter.example.com`. */
  baseUrl: string;
  /** Deadline of one attempt of a request (default 30 000 ms). */
  timeoutMs?: number;
  /** Retries of requests that are safe to repeat (default 2, with back-off). */
  retries?: RetryOptions;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Aborts every request of this client when it aborts (see {@link ArbiterClient.withOptions}). */
  signal?: AbortSignal;
} & ({ apiKey: string; token?: never } | { token: string | (() => string | Promise<string>); apiKey?: never });

/**
 * A run's switches: the trace (docs/design/trace-switch.md), on unless `trace: false`, and the run's
 * flags (contracts `RunFlags`): `reasons` (docs/LANGUAGE.md §10.4), off unless `reasons: true`.
 */
export type RunOptions = { trace?: boolean } & RunFlags;

/**
 * A run by base id's switches, and its instants (docs/api.md#scheduled-versions-as-of-runs-and-rollback):
 * `asOf` runs the version runnable at that instant, evaluated at it unless `now` is given; `now`
 * sets the evaluation clock and picks the version in effect at it. ISO 8601 with an offset.
 */
export interface BaseRunOptions extends RunOptions {
  asOf?: string;
  now?: string;
}

/** Page size of a list walk (`limit`, 1–200; default 50). */
export interface PageOptions {
  pageSize?: number;
}

/** What `PUT /policy/{id}` (or `/flow/{id}`) did: saved the draft, published it (a new version), or submitted it for review (governance on). */
export type UpdateResult<R, V> =
  { outcome: 'updated'; record: R } | { outcome: 'published'; record: R } | { outcome: 'submitted'; review: V };

/** Options of a saved-test run: `version` runs that version's saved tests instead of the draft's. */
export interface TestRunOptions {
  version?: number;
}

/** Options of an impact analysis: `limit` (1–10,000; default 1,000), `from`/`to` (ISO 8601) bound when the decisions were recorded. */
export type ImpactOptions = Partial<ImpactRequest>;

type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

/** The parts of the client each endpoint group uses. */
class Api {
  constructor(protected readonly http: Transport) {}

  protected async getJson<T>(path: string, query?: Query): Promise<T> {
    return (await this.http.request({ method: 'GET', path, ...(query ? { query } : {}), idempotent: true })).body as T;
  }

  protected async sendJson<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, query?: Query): Promise<T> {
    const answer = await this.http.request({
      method,
      path,
      ...(body !== undefined ? { body } : {}),
      ...(query ? { query } : {}),
      idempotent: false,
    });
    return answer.body as T;
  }

  /** A run: changes nothing, so it is retried like a GET. */
  protected async runAt<T>(path: string, body: unknown, opts?: BaseRunOptions): Promise<T> {
    let query: Record<string, string> | undefined;
    // The trace is on by default, so only `false` is sent; a flag that is a switch is off by default, so only `true` is;
    // the instants of a run by base id (`asOf`, `now`) go as they are.
    for (const [key, value] of Object.entries(opts ?? {})) {
      if (value === undefined || (key === 'trace' ? value !== false : value === false)) continue;
      (query ??= {})[key] = String(value);
    }
    return (await this.http.request({ method: 'POST', path, body, ...(query ? { query } : {}), idempotent: true })).body as T;
  }

  protected paged<T>(path: string, filter: PageOptions & object = {}, extra: Query = {}): Paged<T> {
    const { pageSize, ...rest } = filter;
    return new Paged((cursor) =>
      this.getJson<Page<T>>(path, {
        ...(rest as Query),
        ...extra,
        ...(pageSize !== undefined ? { limit: pageSize } : {}),
        ...(cursor ? { cursor } : {}),
      }),
    );
  }
}

/** Options of the calls made through {@link ArbiterClient.withOptions}. */
export interface CallOptions {
  /** Aborts the calls (their promise rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Deadline of one attempt of each call. */
  timeoutMs?: number;
}

/** The endpoints of one kind of record: policies (`/policy…`) or flows (`/flow…`). */
export class RecordsApi<R, S, C, U, V, Run, Batch> extends Api {
  constructor(
    http: Transport,
    private readonly noun: 'policy' | 'flow',
    private readonly plural: 'policies' | 'flows',
  ) {
    super(http);
  }

  /** `POST /{noun}`: a new base with its draft (editor and up). */
  create(body: C): Promise<R> {
    return this.sendJson('POST', `/${this.noun}`, body);
  }

  /** `GET /{noun}/{id}`: a record by id, or the base's current record by base id. */
  get(id: string): Promise<R> {
    return this.getJson(`/${this.noun}/${segment(id)}`);
  }

  /** `PUT /{noun}/{id}`: edits the draft (`status: "draft"`) or publishes it (`status: "published"`; under governance: submits it). */
  async update(id: string, body: U): Promise<UpdateResult<R, V>> {
    const answer = await this.http.request({ method: 'PUT', path: `/${this.noun}/${segment(id)}`, body, idempotent: false });
    if (answer.status === 202) return { outcome: 'submitted', review: answer.body as V };
    return { outcome: answer.status === 201 ? 'published' : 'updated', record: answer.body as R };
  }

  /** `DELETE /{noun}/{id}`: soft-deletes the whole base (admin). */
  async delete(id: string): Promise<void> {
    await this.sendJson('DELETE', `/${this.noun}/${segment(id)}`);
  }

  /** `POST /{noun}/{id}/restore`: brings a deleted base back (admin). */
  restore(id: string): Promise<R> {
    return this.sendJson('POST', `/${this.noun}/${segment(id)}/restore`, {});
  }

  /** `GET /{noun}/{baseId}/rollout`: the base's running staged rollout (`rollout: null` when none runs). */
  rollout(baseId: string): Promise<RolloutState> {
    return this.getJson(`/${this.noun}/${segment(baseId)}/rollout`);
  }

  /** `POST /{noun}/{baseId}/rollout`: widens or narrows the running rollout to `percent` (publisher or admin). */
  setRollout(baseId: string, percent: number): Promise<RolloutState> {
    return this.sendJson('POST', `/${this.noun}/${segment(baseId)}/rollout`, { percent });
  }

  /** `POST /{noun}/{baseId}/rollout/promote`: the new version serves every run; the rollout ends. */
  promoteRollout(baseId: string): Promise<RolloutState> {
    return this.sendJson('POST', `/${this.noun}/${segment(baseId)}/rollout/promote`, {});
  }

  /** `POST /{noun}/{baseId}/rollout/rollback`: the previous version serves every run again; the rollout ends. */
  rollbackRollout(baseId: string): Promise<RolloutState> {
    return this.sendJson('POST', `/${this.noun}/${segment(baseId)}/rollout/rollback`, {});
  }

  /** `GET /{plural}`: the bases the caller sees, page by page. */
  list(filter: RecordListFilter & PageOptions = {}): Paged<S> {
    return this.paged(`/${this.plural}`, filter);
  }

  /** `GET /{plural}?deleted=true`: the org's deleted bases (admin). */
  listDeleted(filter: DeletedListFilter & PageOptions = {}): Paged<S> {
    return this.paged(`/${this.plural}`, filter, { deleted: 'true' });
  }

  /** `GET /{noun}/{id}/versions`: the draft, then the versions, newest first. */
  versions(id: string, opts: PageOptions = {}): Paged<R> {
    return this.paged(`/${this.noun}/${segment(id)}/versions`, opts);
  }

  /** `GET /{noun}/{id}/draft`: the base's draft, created from this version when there is none (`created`). */
  async draft(id: string): Promise<{ created: boolean; record: R }> {
    const answer = await this.http.request({ method: 'GET', path: `/${this.noun}/${segment(id)}/draft`, idempotent: false });
    return { created: answer.status === 201, record: answer.body as R };
  }

  /** `GET /{noun}/{id}/review`: the review summary of the draft. */
  review(id: string): Promise<V> {
    return this.getJson(`/${this.noun}/${segment(id)}/review`);
  }

  /** `POST /{noun}/{id}/review/approve` (publisher or admin, not the requester). */
  approve(id: string, body: ReviewDecisionBody = {}): Promise<V> {
    return this.sendJson('POST', `/${this.noun}/${segment(id)}/review/approve`, body);
  }

  /** `POST /{noun}/{id}/review/reject`. */
  reject(id: string, body: ReviewDecisionBody = {}): Promise<V> {
    return this.sendJson('POST', `/${this.noun}/${segment(id)}/review/reject`, body);
  }

  /** `POST /{noun}/{id}/review/publish`: publishes the approved draft as a new version. */
  publishReviewed(id: string, body: ReviewPublishBody = {}): Promise<R> {
    return this.sendJson('POST', `/${this.noun}/${segment(id)}/review/publish`, body);
  }

  /**
   * `POST /{noun}/{id}/impact`: replays the base's most recent recorded decisions through this
   * record (usually the draft under review), each at its own `now`, and reports what would change.
   * Editors may analyse drafts; publishers and admins any record of their org. It changes no record
   * (a repeat only makes a newer report), so it is retried like a run.
   */
  impact(recordId: string, opts: ImpactOptions = {}): Promise<ImpactReport> {
    return this.runAt(`/${this.noun}/${segment(recordId)}/impact`, opts);
  }

  /**
   * `GET /{noun}/{baseId}/shadow`: the base's shadow candidate, running or stopped, with its report
   * (docs/api.md#shadow-runs); its `examples` only for callers with the `audit` right. 404 without one.
   */
  shadow(baseId: string): Promise<ShadowReport> {
    return this.getJson(`/${this.noun}/${segment(baseId)}/shadow`);
  }

  /** `PUT /{noun}/{baseId}/shadow` (editor and up): starts, or replaces, the base's shadow candidate (a draft or version of the base). */
  startShadow(baseId: string, body: ShadowBody): Promise<ShadowReport> {
    return this.sendJson('PUT', `/${this.noun}/${segment(baseId)}/shadow`, body);
  }

  /** `DELETE /{noun}/{baseId}/shadow` (editor and up): stops the shadow; answers its final report. */
  stopShadow(baseId: string): Promise<ShadowReport> {
    return this.sendJson('DELETE', `/${this.noun}/${segment(baseId)}/shadow`);
  }

  /**
   * `POST /{noun}/{baseId}/tests/run`: runs the saved tests of the base's draft (or of `version`)
   * with their coverage (viewer and up): each test's expected and actual result, and what the tests
   * cover (a policy's conditions, a flow's table rows and edges) with what they leave uncovered.
   * It changes nothing, so it is retried like a run.
   */
  /** `POST /{noun}/{baseId}/rollback`: publishes version `toVersion`'s content again as the next version, at once or at `effectiveFrom`. */
  async rollback(baseId: string, toVersion: number, opts: { effectiveFrom?: string } = {}): Promise<R> {
    return this.sendJson<R>('POST', `/${this.noun}/${segment(baseId)}/rollback`, { toVersion, ...opts });
  }

  /** `DELETE /{noun}/{baseId}/schedule/{version}`: cancels a version's schedule before its instant; answers the version. */
  async cancelSchedule(baseId: string, version: number): Promise<R> {
    return this.sendJson<R>('DELETE', `/${this.noun}/${segment(baseId)}/schedule/${version}`);
  }

  async runTests(baseId: string, opts: TestRunOptions = {}): Promise<TestRunReport> {
    const query = opts.version !== undefined ? { version: opts.version } : undefined;
    const path = `/${this.noun}/${segment(baseId)}/tests/run`;
    return (await this.http.request({ method: 'POST', path, ...(query ? { query } : {}), idempotent: true })).body as TestRunReport;
  }

  /**
   * `POST /{noun}/{id}/tests/from-decision`: saves a recorded decision's (masked) input and its
   * answer as a test of the base's draft (made from the latest version when there is none); needs
   * the `edit` and the `audit` rights. Answers the draft as saved.
   */
  testFromDecision(id: string, body: TestFromDecisionBody): Promise<R> {
    return this.sendJson('POST', `/${this.noun}/${segment(id)}/tests/from-decision`, body);
  }

  /** `POST /run/{noun}/{baseId}`: runs the base's version in effect (at `opts.asOf` or `opts.now` when given). */
  run(baseId: string, data: Record<string, unknown>, opts?: BaseRunOptions): Promise<Run> {
    return this.runAt(`/run/${this.noun}/${segment(baseId)}`, data, opts);
  }

  /** `POST /run/{noun}_version/{id}`: runs the exact record (a version or the draft). */
  runVersion(recordId: string, data: Record<string, unknown>, opts?: RunOptions): Promise<Run> {
    return this.runAt(`/run/${this.noun}_version/${segment(recordId)}`, data, opts);
  }

  /** `POST /run/{noun}/{baseId}/batch`: each item as `run` would answer it, in order. */
  runBatch(baseId: string, items: Array<Record<string, unknown>>, opts?: BaseRunOptions): Promise<Batch> {
    return this.runAt(`/run/${this.noun}/${segment(baseId)}/batch`, { items }, opts);
  }

  /** `POST /run/{noun}_version/{id}/batch`. */
  runVersionBatch(recordId: string, items: Array<Record<string, unknown>>, opts?: RunOptions): Promise<Batch> {
    return this.runAt(`/run/${this.noun}_version/${segment(recordId)}/batch`, { items }, opts);
  }
}

/** Policies: `/policy…`, `/policies`, their reviews and runs. */
export class PoliciesApi extends RecordsApi<
  PolicyRecord,
  PolicySummary,
  CreatePolicyInput,
  UpdatePolicyInput,
  PolicyReview,
  StoredPolicyRunResponse,
  StoredPolicyBatchResponse
> {}

/** Flows: `/flow…`, `/flows`, their reviews and runs, and `POST /flow/test`. */
export class FlowsApi extends RecordsApi<
  FlowRecord,
  FlowSummary,
  CreateFlowInput,
  UpdateFlowInput,
  FlowReview,
  StoredFlowRunResponse,
  StoredFlowBatchResponse
> {
  /** `POST /flow/test`: runs a definition that is not stored. */
  test(definition: FlowDefinition, data: Record<string, unknown>, opts?: RunOptions): Promise<FlowRunResponse> {
    return this.runAt('/flow/test', { definition, data }, opts);
  }
}

/** Rules that are not stored: `POST /run`, `/run/batch`, `/validate`, `/explain`, `GET /operators`. */
export class RulesApi extends Api {
  /** `POST /run`: evaluates a rule on data. */
  evaluate(body: RunInput): Promise<RunResponse> {
    return this.runAt('/run', body);
  }

  /** `POST /run/batch`: one rule on many data objects. */
  evaluateBatch(body: RunBatchInput): Promise<RunBatchResponse> {
    return this.runAt('/run/batch', body);
  }

  /** `POST /validate`. */
  validate(rule: string): Promise<ValidateHttpResponse> {
    return this.runAt('/validate', { rule });
  }

  /** `POST /explain`. */
  explain(rule: string): Promise<ExplainResponse> {
    return this.runAt('/explain', { rule });
  }

  /** `GET /operators`. */
  operators(): Promise<OperatorsResponse> {
    return this.getJson('/operators');
  }
}

/** Groups of bases: `/group…`, `/groups`. */
export class GroupsApi extends Api {
  /** `POST /group` (editor and up). */
  create(body: CreateGroupInput): Promise<Group> {
    return this.sendJson('POST', '/group', body);
  }

  /** `GET /group/{groupId}`. */
  get(groupId: string): Promise<Group> {
    return this.getJson(`/group/${segment(groupId)}`);
  }

  /** `PUT /group/{groupId}` (creator or admin). */
  update(groupId: string, body: UpdateGroupInput): Promise<Group> {
    return this.sendJson('PUT', `/group/${segment(groupId)}`, body);
  }

  /** `DELETE /group/{groupId}` (creator or admin). */
  async delete(groupId: string): Promise<void> {
    await this.sendJson('DELETE', `/group/${segment(groupId)}`);
  }

  /** `GET /groups`. */
  list(filter: GroupListFilter & PageOptions = {}): Paged<Group> {
    return this.paged('/groups', filter);
  }

  /** `POST /group/{groupId}/member`: adds a base. */
  addMember(groupId: string, member: { memberId: string; memberType: MemberType }): Promise<GroupMember> {
    return this.sendJson('POST', `/group/${segment(groupId)}/member`, member);
  }

  /** `DELETE /group/{groupId}/member/{memberId}`. */
  async removeMember(groupId: string, memberId: string): Promise<void> {
    await this.sendJson('DELETE', `/group/${segment(groupId)}/member/${segment(memberId)}`);
  }

  /** `GET /group/{groupId}/policies`. */
  policies(groupId: string, opts: PageOptions = {}): Paged<PolicySummary> {
    return this.paged(`/group/${segment(groupId)}/policies`, opts);
  }

  /** `GET /group/{groupId}/flows`. */
  flows(groupId: string, opts: PageOptions = {}): Paged<FlowSummary> {
    return this.paged(`/group/${segment(groupId)}/flows`, opts);
  }
}

/** Recorded decisions: `GET /decisions`, `GET /decisions/{id}` (the `audit` right: admins, auditors). */
export class DecisionsApi extends Api {
  /** `GET /decisions`: the org's recorded decisions, newest first, filtered, page by page. */
  list(filter: Partial<DecisionFilter> & PageOptions = {}): Paged<DecisionRecord> {
    return this.paged('/decisions', filter);
  }

  /** `GET /decisions/{id}`: one recorded decision (its masked input, answer and reasons when the run asked for them). */
  get(decisionId: string): Promise<DecisionRecord> {
    return this.getJson(`/decisions/${segment(decisionId)}`);
  }
}

/** The audit trail: `GET /audit`, `GET /audit/export` (admin, auditor). */
export class AuditApi extends Api {
  /** `GET /audit`: newest first, page by page. */
  list(filter: AuditListFilter & PageOptions = {}): Paged<AuditEvent> {
    return this.paged('/audit', filter);
  }

  /** `GET /audit/export`: every event of the filter, streamed (NDJSON); a failure midway is thrown. */
  async *export(filter: AuditExportFilter = {}, opts: { signal?: AbortSignal } = {}): AsyncGenerator<AuditEvent> {
    const res = await this.http.stream({
      method: 'GET',
      path: '/audit/export',
      query: filter,
      accept: 'application/x-ndjson',
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (res.body === null) return;
    for await (const line of lines(res.body)) {
      if (line.trim() === '') continue;
      const parsed = JSON.parse(line) as AuditEvent | { error: { code: ArbiterError['code']; detail: string; instance?: string } };
      if ('error' in parsed) {
        throw new ArbiterError(parsed.error.code, parsed.error.detail, undefined, {
          ...(parsed.error.instance !== undefined ? { requestId: parsed.error.instance } : {}),
        });
      }
      yield parsed;
    }
  }
}

/** The review inbox: `GET /reviews` (publisher, admin). */
export class ReviewsApi extends Api {
  /** `GET /reviews`: the org's policy and flow drafts waiting for approval, oldest request first. */
  inbox(opts: PageOptions = {}): Paged<ReviewInboxItem> {
    return this.paged('/reviews', opts, { state: 'pending_approval' });
  }
}

/** Personal API keys: `/apikeys`. */
export class ApiKeysApi extends Api {
  /** `POST /apikeys`: the answer is the only time the secret `key` is shown. */
  create(body: CreateApiKeyRequest): Promise<CreatedApiKey> {
    return this.sendJson('POST', '/apikeys', body);
  }

  /** `GET /apikeys`: own keys (every key of the org with `all: true`, admin). */
  list(filter: ApiKeyListFilter & PageOptions = {}): Paged<ApiKey> {
    return this.paged('/apikeys', filter);
  }

  /** `DELETE /apikeys/{apiKeyId}`: revokes a key. */
  async revoke(apiKeyId: string): Promise<void> {
    await this.sendJson('DELETE', `/apikeys/${segment(apiKeyId)}`);
  }
}

/** Members of the org: `/users` (admin). */
export class UsersApi extends Api {
  /** `GET /users`. */
  list(opts: PageOptions = {}): Paged<Member> {
    return this.paged('/users', opts);
  }

  /** `GET /users/{userId}`. */
  get(userId: string): Promise<Member> {
    return this.getJson(`/users/${segment(userId)}`);
  }

  /** `PUT /users/{userId}`: sets the role (adds the member when new: `created`). */
  async setRole(userId: string, role: Role): Promise<{ created: boolean; member: Member }> {
    const answer = await this.http.request({ method: 'PUT', path: `/users/${segment(userId)}`, body: { role }, idempotent: false });
    return { created: answer.status === 201, member: answer.body as Member };
  }

  /** `GET /users/{userId}/apikeys`: the member's live keys (never the secrets). */
  keys(userId: string, opts: PageOptions = {}): Paged<ApiKey> {
    return this.paged(`/users/${segment(userId)}/apikeys`, opts);
  }

  /** `POST /users/{userId}/apikeys`: issues a key owned by the member, within its role; the answer is the only time `key` is shown. */
  issueKey(userId: string, body: CreateApiKeyRequest): Promise<CreatedApiKey> {
    return this.sendJson('POST', `/users/${segment(userId)}/apikeys`, body);
  }

  /** `DELETE /users/{userId}`: removes the member (and its keys stop working). */
  async remove(userId: string): Promise<void> {
    await this.sendJson('DELETE', `/users/${segment(userId)}`);
  }
}

/** The org's webhook endpoints and their deliveries: `/webhooks` (admin; docs/webhooks.md). */
export class WebhooksApi extends Api {
  /** `POST /webhooks`: the answer is the only time the signing `secret` is shown. */
  create(body: WebhookCreateBody): Promise<WebhookWithSecret> {
    return this.sendJson('POST', '/webhooks', body);
  }

  /** `GET /webhooks`: oldest first. */
  list(opts: PageOptions = {}): Paged<Webhook> {
    return this.paged('/webhooks', opts);
  }

  /** `GET /webhooks/{id}`. */
  get(id: string): Promise<Webhook> {
    return this.getJson(`/webhooks/${segment(id)}`);
  }

  /** `PATCH /webhooks/{id}`: `enabled: true` turns a disabled endpoint back on. */
  update(id: string, body: WebhookPatchBody): Promise<Webhook> {
    return this.sendJson('PATCH', `/webhooks/${segment(id)}`, body);
  }

  /** `DELETE /webhooks/{id}`: with its deliveries. */
  async remove(id: string): Promise<void> {
    await this.sendJson('DELETE', `/webhooks/${segment(id)}`);
  }

  /** `POST /webhooks/{id}/secret`: a new secret (shown this once); the old one keeps signing for 24 h. */
  rotateSecret(id: string): Promise<WebhookWithSecret> {
    return this.sendJson('POST', `/webhooks/${segment(id)}/secret`);
  }

  /** `POST /webhooks/{id}/test`: sends a `ping`. */
  test(id: string): Promise<WebhookTestReply> {
    return this.sendJson('POST', `/webhooks/${segment(id)}/test`);
  }

  /** `GET /webhooks/{id}/deliveries`: newest first, each with its attempts. */
  deliveries(id: string, filter: { status?: WebhookDeliveryStatus } & PageOptions = {}): Paged<WebhookDelivery> {
    return this.paged(`/webhooks/${segment(id)}/deliveries`, filter);
  }

  /** `POST /webhooks/{id}/deliveries/{deliveryId}/retry`: sends it again now. */
  retry(id: string, deliveryId: string): Promise<WebhookDelivery> {
    return this.sendJson('POST', `/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}/retry`);
  }
}

/** The org's settings: `/org/settings` (admin). */
export class OrgApi extends Api {
  /** `GET /org/settings`. */
  settings(): Promise<OrgSettings> {
    return this.getJson('/org/settings');
  }

  /** `PUT /org/settings` (`minCoverage` left out keeps its value). */
  updateSettings(body: OrgSettingsBody): Promise<OrgSettings> {
    return this.sendJson('PUT', '/org/settings', body);
  }
}

/** Export and import of an org's policies, flows and groups (admin). */
export class BundlesApi extends Api {
  /** `GET /export`: the org as one bundle. */
  export(): Promise<Bundle> {
    return this.getJson('/export');
  }

  /** `POST /import`: loads a bundle, or with `dryRun` answers the plan only. */
  import(bundle: ImportBundleInput, opts: { dryRun?: boolean } = {}): Promise<ImportReply> {
    return this.sendJson('POST', '/import', bundle, { dryRun: opts.dryRun === true });
  }
}

/** Local evaluation's endpoints; {@link Arbiter.local} uses them. */
export class RunnableApi extends Api {
  /** `GET /runnable`: the runnable records of a selection (whole, or what changed after `since`). */
  snapshot(query: Partial<RunnableQuery>, opts: { signal?: AbortSignal } = {}): Promise<RunnableSnapshot> {
    return this.http
      .request({
        method: 'GET',
        path: '/runnable',
        query: {
          ...(query.bases !== undefined ? { bases: query.bases.join(',') } : {}),
          ...(query.group !== undefined ? { group: query.group } : {}),
          ...(query.all === true ? { all: 'true' } : {}),
          ...(query.since !== undefined ? { since: query.since } : {}),
        },
        idempotent: true,
        ...(opts.signal ? { signal: opts.signal } : {}),
      })
      .then((a) => a.body as RunnableSnapshot);
  }

  /** `GET /runnable/changes`: the server-sent events announcing new revisions (until `signal` aborts or the stream ends). */
  async *changes(since: number, opts: { heartbeatMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<ServerSentEvent> {
    const res = await this.http.stream({
      method: 'GET',
      path: '/runnable/changes',
      query: { since, ...(opts.heartbeatMs !== undefined ? { heartbeatMs: opts.heartbeatMs } : {}) },
      accept: 'text/event-stream',
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (res.body === null) return;
    yield* serverSentEvents(res.body);
  }

  /** `POST /runnable/reports`: run counts, turned into `executed` events (retried: a report id counts once). */
  async report(report: RunReport): Promise<RunReportReply> {
    return (await this.http.request({ method: 'POST', path: '/runnable/reports', body: report, idempotent: true })).body as RunReportReply;
  }
}

/**
 * The Arbiter client: one method per endpoint, request and answer types from
 * `@arbiter/contracts`, list methods as async iterators over the cursor pages, and every problem
 * answer thrown as one `ArbiterError` (`status`, `code`, `detail`, `requestId`). It runs in
 * browsers as in Node (`@arbiter/sdk/client` holds it without the local runtime); `Arbiter`
 * (`@arbiter/sdk`) adds local evaluation.
 *
 * ```ts
 * const arbiter = new ArbiterClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.ARBITER_API_KEY! });
 * for await (const p of arbiter.policies.list({ status: 'published' })) console.log(p.name);
 * ```
 */
export class ArbiterClient {
  readonly policies: PoliciesApi;
  readonly flows: FlowsApi;
  readonly rules: RulesApi;
  readonly groups: GroupsApi;
  readonly audit: AuditApi;
  readonly decisions: DecisionsApi;
  readonly reviews: ReviewsApi;
  readonly apiKeys: ApiKeysApi;
  readonly users: UsersApi;
  readonly org: OrgApi;
  readonly bundles: BundlesApi;
  readonly runnable: RunnableApi;
  readonly webhooks: WebhooksApi;
  private readonly http: Transport;

  constructor(private readonly options: ArbiterOptions) {
    const transport: TransportOptions = {
      baseUrl: options.baseUrl,
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
      ...(options.token !== undefined ? { token: options.token } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.retries !== undefined ? { retries: options.retries } : {}),
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    };
    this.http = new Transport(transport);
    this.policies = new PoliciesApi(this.http, 'policy', 'policies');
    this.flows = new FlowsApi(this.http, 'flow', 'flows');
    this.rules = new RulesApi(this.http);
    this.groups = new GroupsApi(this.http);
    this.audit = new AuditApi(this.http);
    this.decisions = new DecisionsApi(this.http);
    this.reviews = new ReviewsApi(this.http);
    this.apiKeys = new ApiKeysApi(this.http);
    this.users = new UsersApi(this.http);
    this.org = new OrgApi(this.http);
    this.bundles = new BundlesApi(this.http);
    this.runnable = new RunnableApi(this.http);
    this.webhooks = new WebhooksApi(this.http);
  }

  /** The gateway address requests go to. */
  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /**
   * The same client (credential, retries, `fetch`) for calls with their own options: a `signal`
   * that aborts them (joined to this client's), a `timeoutMs` per attempt.
   *
   * ```ts
   * const page = await arbiter.withOptions({ signal: controller.signal }).policies.list({ q: 'age' }).page(cursor);
   * ```
   */
  withOptions(call: CallOptions): this {
    const own = this.options.signal;
    const signal = call.signal === undefined ? own : own === undefined ? call.signal : AbortSignal.any([own, call.signal]);
    const options: ArbiterOptions = {
      ...this.options,
      ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
      ...(signal !== undefined ? { signal } : {}),
    };
    const Self = this.constructor as new (options: ArbiterOptions) => this;
    return new Self(options);
  }

  /** `GET /me`: who the credential is. */
  async me(): Promise<MeResponse> {
    return (await this.http.request({ method: 'GET', path: '/me', idempotent: true })).body as MeResponse;
  }
}
