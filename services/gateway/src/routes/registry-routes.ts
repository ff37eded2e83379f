import { z } from 'zod';
import type { FastifyRequest, FastifyTypeProviderDefault } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  ArbiterError,
  CreateFlowBody,
  CreatePolicyBody,
  FlowRecord,
  FlowRecordPage,
  FlowReview,
  FlowSummaryPage,
  hasCapability,
  RecordListHttpQuery,
  PolicyRecord,
  PolicyRecordPage,
  PolicyReview,
  PolicySaveAnswer,
  FlowSaveAnswer,
  PolicySummaryPage,
  RecordIdParam,
  RollbackBody,
  ScheduleParams,
  type RecordListQuery,
  TestRunQuery,
  TestRunReport,
  UpdateFlowBody,
  UpdatePolicyBody,
  VersionsQuery,
  type ListQuery,
  type Principal,
  type RecordReview,
  type RecordStatus,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { Page, RecordsClient, RegistryCallContext, RegistryClient } from '../clients/registry-client.js';
import { reviewBody, type GovernanceClient } from '../clients/governance-client.js';
import { bestEffort, checksFor, type PolicyChecker } from '../http/policy-checks.js';

/** Dependencies of {@link registryRoutes}. */
export interface RegistryRoutesOptions {
  readonly authenticator: Authenticator;
  readonly registry: RegistryClient;
  /**
   * The org's settings a publish follows: `governanceApproval` (publishing then needs a review) and
   * `minCoverage` (sent with a publish and a submission; the registry refuses less coverage).
   */
  readonly orgSettings: (orgId: string) => Promise<{ governanceApproval: boolean; minCoverage: number }>;
  /**
   * The governance service: with it, a publish under governance is submitted for review (202) and
   * drafts in record bodies carry their `review`; without it such a publish is refused (409 `not_approved`).
   */
  readonly governance?: GovernanceClient;
  /** The static checks a saved policy's answer carries; without it they are left out (`checks: []`, `checksComplete: false`). */
  readonly checks?: PolicyChecker;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/** What a flow draft's save checks beyond its schema, for the OpenAPI descriptions. */
const FLOW_REFERENCES =
  ` A flow draft (created, or updated with \`status:"draft"\`) whose policy node names a missing, deleted or other-org policy, or a ` +
  `missing pinned version, is refused with 400 \`validation_failed\` (reasons \`unknown_policy\`, \`unknown_version\`, path ` +
  `\`definition.nodes.<id>.baseId|policyId|version\`). The answer (201, and a \`PUT\`'s 200 or 201) is the record with its decision ` +
  `tables' static checks: \`checks\` (each \`{check, severity, message, path, rules, example?}\`: overlaps and conflicts are errors that ` +
  `also refuse a publish; gaps, rules never chosen and rules that never match are warnings; docs/tables.md) and \`checksComplete\`.`;

/** What a policy's save and publish answers carry, for the OpenAPI descriptions. */
const POLICY_CHECKS =
  ` The answer (201, and a \`PUT\`'s 200 or 201) is the record with the rule's static checks: \`checks\` (warnings: conditions always ` +
  `true or false, conditions joined by \`and\` that cannot all hold, each with line, column and text; docs/api.md, "Static checks") and ` +
  `\`checksComplete\` (false when they stopped at their bound or did not run). Warnings never block a save or a publish.`;

/**
 * The stored policy and flow endpoints of docs/api.md#policies-and-flows (without the review endpoints):
 * API key or bearer JWT. Authorization, ownership and tenancy are decided by the registry; the
 * capability hooks here only save it a round trip.
 */
export const registryRoutes: FastifyPluginAsyncZod<RegistryRoutesOptions> = async (
  app,
  { authenticator, registry, orgSettings, governance, checks },
) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  recordRoutes(app, orgSettings, governance, {
    noun: 'policy',
    plural: 'policies',
    idParam: 'policyId',
    record: PolicyRecord,
    review: PolicyReview,
    recordPage: PolicyRecordPage,
    summaryPage: PolicySummaryPage,
    createBody: CreatePolicyBody,
    updateBody: UpdatePolicyBody,
    client: registry.policies,
    saved: { answer: PolicySaveAnswer, checks: (request, record) => checksFor(request, checks, principalOf(request), record.rule) },
  });
  recordRoutes(app, orgSettings, governance, {
    noun: 'flow',
    plural: 'flows',
    idParam: 'flowId',
    record: FlowRecord,
    review: FlowReview,
    recordPage: FlowRecordPage,
    summaryPage: FlowSummaryPage,
    createBody: CreateFlowBody,
    updateBody: UpdateFlowBody,
    client: registry.flows,
    saved: {
      answer: FlowSaveAnswer,
      checks: (request, record) =>
        bestEffort(request, () => registry.flowChecks(principalOf(request), record.definition, { requestId: request.id })),
    },
  });
};

/** What differs between the policy and the flow routes. */
interface KindRoutes<R extends StoredRecord, S, C, U extends { status: RecordStatus }> {
  noun: 'policy' | 'flow';
  plural: 'policies' | 'flows';
  idParam: 'policyId' | 'flowId';
  record: z.ZodType<R>;
  review: z.ZodType;
  recordPage: z.ZodType<Page<R>>;
  summaryPage: z.ZodType<Page<S>>;
  createBody: z.ZodType<C>;
  updateBody: z.ZodType<U>;
  client: RecordsClient<R, S, C, U>;
  /** The answer of a save or publish (200, 201): the record with its static checks (docs/api.md#static-checks). */
  saved?: { answer: z.ZodType; checks: (request: FastifyRequest, record: R) => Promise<object> };
}

type ZodApp = Parameters<FastifyPluginAsyncZod>[0];

/** What the routes read of a record: its status and what names its review. */
type StoredRecord = { status: RecordStatus; baseId: string; contentHash?: string | undefined; review?: RecordReview | undefined };

/** Route generics of one record id in the path. */
type IdParams = { Params: Record<string, string> };

/** Registers the seven routes of one kind (`/policy...` or `/flow...`). */
function recordRoutes<R extends StoredRecord, S, C, U extends { status: RecordStatus }>(
  zodApp: ZodApp,
  orgSettings: RegistryRoutesOptions['orgSettings'],
  governance: GovernanceClient | undefined,
  k: KindRoutes<R, S, C, U>,
): void {
  // The zod schemas still validate and document every route at run time; the request types come
  // from the route generics because the zod type provider cannot resolve generic schemas (nor can
  // fastify's body type, hence the two `as` below: the body was parsed by exactly that schema).
  const app = zodApp.withTypeProvider<FastifyTypeProviderDefault>();
  const { noun, plural, idParam, client } = k;
  const tags = [plural];
  const params = z.object({ [idParam]: RecordIdParam });
  const one = `/${noun}/:${idParam}`;
  const idOf = (p: Record<string, string>): string => p[idParam];
  const ctx = (request: { id: string }): RegistryCallContext => ({ requestId: request.id });
  const recordIdOf = (r: R): string => (r as unknown as Record<string, string>)[idParam];
  const savedSchema = k.saved?.answer ?? k.record;
  /** The answer of a save or publish: the record, with its static checks for policies. */
  const savedAnswer = async <T extends R>(request: FastifyRequest, record: T): Promise<T> =>
    k.saved === undefined ? record : { ...record, ...(await k.saved.checks(request, record)) };

  /**
   * Adds `review` to the drafts among `records` (one governance call). Best effort: when the
   * governance service does not answer, the records go out without it and the request succeeds.
   */
  const withReviews = async (request: FastifyRequest, records: R[]): Promise<R[]> => {
    const drafts = records.filter((r) => r.status === 'draft' && r.contentHash !== undefined);
    if (governance === undefined || drafts.length === 0) return records;
    try {
      const refs = drafts.map((r) => ({ recordId: recordIdOf(r), baseId: r.baseId, contentHash: r.contentHash! }));
      const found = new Map((await governance.summaries(principalOf(request), noun, refs, ctx(request))).map((s) => [s.recordId, s]));
      return records.map((r) => {
        const s = found.get(recordIdOf(r));
        return s === undefined || r.status !== 'draft' ? r : { ...r, review: { state: s.state, requestId: s.requestId, stale: s.stale } };
      });
    } catch (err) {
      request.log.warn({ err }, 'review states left out: the governance service did not answer');
      return records;
    }
  };

  app.post<{ Body: C }>(`/${noun}`, {
    onRequest: requireCapability('edit'),
    schema: {
      tags,
      security,
      summary: `Create a ${noun}: its base and its draft (editor and up)`,
      description:
        `The draft is owned by its creator until it is first published: only the creator lists it, any member of the org can load it by id.` +
        (noun === 'flow' ? FLOW_REFERENCES : POLICY_CHECKS),
      body: k.createBody,
      response: { 201: savedSchema, ...errorResponses(400, 401, 403, 413, 415, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      const created = await client.create(principalOf(request), request.body as C, ctx(request));
      // A new draft was never submitted: its review state is known without asking.
      const review: RecordReview = { state: 'draft', requestId: null, stale: false };
      return reply.status(201).send(await savedAnswer(request, governance === undefined ? created : { ...created, review }));
    },
  });

  app.put<IdParams & { Body: U }>(one, {
    schema: {
      tags,
      security,
      summary: `Update the draft (\`status:"draft"\`, 200) or publish it (\`status:"published"\`: 201 new version, or 202 submitted for review)`,
      description:
        `Given a base id, edits the base's draft (409 \`version_immutable\` when it has none). Given fields are applied first. Publishing (publisher or admin) consumes the draft: the record becomes the next version. ` +
        `A version is immutable (409 \`version_immutable\`). Publishing checks every problem at once (422 \`cannot_publish\`, nothing changed); ` +
        `when they pass and the org's \`minCoverage\` setting is above 0, a draft whose saved tests cover less than that percent is refused ` +
        `with 422 \`coverage_below_minimum\` (the percent, the minimum and the first uncovered parts; nothing changed; the same at a submission for review).` +
        (noun === 'flow' ? FLOW_REFERENCES : POLICY_CHECKS) +
        ` ` +
        `When the org has governance approval on, publishing needs a review: the given fields are saved, then the draft is submitted for approval ` +
        `(editor and up) and the answer is its review summary (202, state \`pending_approval\`, \`checks\` passed). The submission runs the publish checks first: ` +
        `422 \`cannot_publish\` with every reason and nothing submitted (the given fields stay saved). 409 \`conflict\` when it is already pending or approved ` +
        `as it is; 503 when the governance service is down. Then \`POST .../review/approve\` and \`.../review/publish\`.`,
      params,
      body: k.updateBody,
      response: {
        200: savedSchema,
        201: savedSchema,
        202: k.review,
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const recordId = idOf(request.params);
      const body = request.body as U;
      const settings = body.status !== 'draft' ? await orgSettings(principal.orgId) : undefined;
      // Sent only when set: a publish without it is checked as before.
      const gate = settings !== undefined && settings.minCoverage > 0 ? { minCoverage: settings.minCoverage } : {};
      if (settings?.governanceApproval) {
        if ((body as { rollout?: unknown }).rollout !== undefined) {
          throw new ArbiterError(
            'not_approved',
            `org \`${principal.orgId}\` requires governance approval to publish: a rollout starts when the approved draft is published ` +
              `(\`POST /${noun}/{id}/review/publish\` with \`rollout\`); nothing was saved or submitted`,
          );
        }
        if (governance === undefined) {
          await refuseUnreviewedPublish(principal, noun, await client.get(principal, recordId, ctx(request)), recordId);
        } else {
          // A governed publish is scheduled when it is published, at `…/review/publish` (docs/design/timeline.md).
          if ((body as { effectiveFrom?: string }).effectiveFrom !== undefined) {
            throw new ArbiterError('validation_failed', 'with governance approval on, give `effectiveFrom` to `…/review/publish`', [
              { code: 'governed_schedule', message: 'give it to `…/review/publish`', path: 'body.effectiveFrom' },
            ]);
          }
          // Given fields are saved first (as a draft edit), then the draft as saved is submitted.
          if (Object.keys(body).some((key) => key !== 'status')) {
            await client.update(principal, recordId, { ...body, status: 'draft' }, ctx(request));
          }
          const summary = await governance.submit(principal, noun, recordId, ctx(request), settings.minCoverage);
          return reply.status(202).send(reviewBody(summary));
        }
      }
      const out = await client.update(principal, recordId, { ...body, ...gate }, ctx(request));
      if (out.outcome === 'published') return reply.status(201).send(await savedAnswer(request, out.record));
      return reply.status(200).send(await savedAnswer(request, (await withReviews(request, [out.record]))[0]));
    },
  });

  app.get<IdParams>(one, {
    onRequest: requireCapability('view'),
    schema: {
      tags,
      security,
      summary: `A ${noun} draft or version by its record id, or the base's current record by its base id`,
      description:
        `Given a base id (as flows, groups and run URLs name a ${noun}), the answer is the base's latest version, ` +
        `else its draft when it was never published. 404 for unknown, deleted or other-org ids.`,
      params,
      response: { 200: k.record, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) =>
      (await withReviews(request, [await client.get(principalOf(request), idOf(request.params), ctx(request))]))[0],
  });

  app.get<IdParams & { Querystring: VersionsQuery }>(`${one}/versions`, {
    onRequest: requireCapability('view'),
    schema: {
      tags,
      security,
      summary: `The draft and the versions of the ${noun}'s base, given its base id or any of its record ids`,
      description: 'The draft comes first, then the versions, newest first.',
      params,
      querystring: VersionsQuery,
      response: { 200: k.recordPage, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => {
      const page = await client.versions(principalOf(request), idOf(request.params), request.query, ctx(request));
      return { items: await withReviews(request, page.items), nextCursor: page.nextCursor };
    },
  });

  app.get<IdParams>(`${one}/draft`, {
    onRequest: requireCapability('edit'),
    schema: {
      tags,
      security,
      summary: `The base's draft: the existing one (200) or a new one copied from this version (201)`,
      description:
        'Never overwrites unsaved work: when the base already has a draft, that draft is returned. Given a base id without a draft, the copy is of its latest version.',
      params,
      response: { 200: k.record, 201: k.record, ...errorResponses(400, 401, 403, 404, 409, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      const out = await client.draft(principalOf(request), idOf(request.params), ctx(request));
      return reply.status(out.created ? 201 : 200).send((await withReviews(request, [out.record]))[0]);
    },
  });

  app.get<{ Querystring: RecordListHttpQuery }>(`/${plural}`, {
    onRequest: requireCapability('view'),
    schema: {
      tags,
      security,
      summary: `List the ${plural} the caller sees, newest first or by \`sort\``,
      description:
        `Published ${plural} of the org, plus the never-published ones the caller created (every one with \`all=true\`, admins only: ` +
        `403 otherwise). Filters \`q\` (name), \`status\` (of the current record: \`draft\` means never published), ` +
        `\`createdBy\`, \`group\`; \`sort\` \`name\`, \`-name\`, \`updatedAt\`, \`-updatedAt\`. A cursor only continues the order it was ` +
        `made for (400 otherwise). Unknown parameters answer 400. Deleted ones never, except with ` +
        `\`deleted=true\` (admin only, else 403; with \`limit\`, \`cursor\` and \`q\` only): then the org's soft-deleted ${plural}, most recently deleted first, with ` +
        `\`deletedAt\` and \`deletedBy\`; \`POST /${noun}/{${idParam}}/restore\` brings one back.`,
      querystring: RecordListHttpQuery,
      response: { 200: k.summaryPage, ...errorResponses(400, 401, 403, 429, 503, 504) },
    },
    handler: async (request) =>
      listOrDeleted(
        request.query,
        (query) => client.list(principalOf(request), query, ctx(request)),
        (query) => client.listDeleted(principalOf(request), query, ctx(request)),
      ),
  });

  app.post<{ Params: { baseId: string }; Querystring: TestRunQuery }>(`/${noun}/:baseId/tests/run`, {
    onRequest: requireCapability('view'),
    schema: {
      tags,
      security,
      summary: `Run the saved tests of the ${noun}'s draft, or of a version, with their coverage (viewer and up)`,
      description:
        `Runs every saved test of the base's draft (given its base id or any of its record ids; the latest version when the base has no draft), ` +
        `or of version \`version\`, as a publish would, off the registry's serving thread: each test's expected and actual result ` +
        `(a test whose data breaks the schema or whose run stops with an error fails with \`error\`), and what the tests cover: ` +
        (noun === 'policy'
          ? `each condition seen both true and false, each quantifier both holding and failing, each reference followed`
          : `each decision-table row matched at least once, each edge (node to node) taken at least once`) +
        `, with the percent and every uncovered part. Nothing is stored. 404 for unknown, deleted or other-org ids and for a version the base does not have; ` +
        `400 for a \`version\` that is not a positive integer; 504 when the tests run past the publish checks' deadline.`,
      params: z.object({ baseId: RecordIdParam }),
      querystring: TestRunQuery,
      response: { 200: TestRunReport, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => client.testRun(principalOf(request), request.params.baseId, request.query, ctx(request)),
  });

  app.post<{ Params: { baseId: string }; Body: RollbackBody }>(`/${noun}/:baseId/rollback`, {
    onRequest: requireCapability('publish'),
    schema: {
      tags,
      security,
      summary: `Make an earlier version's content runnable again as a new version (publisher or admin)`,
      description:
        `Given the base id (or any record id), publishes version \`toVersion\`'s content as the next version, which records \`rollbackOf\` ` +
        `(a flow's pinned versions kept), at once or at \`effectiveFrom\` (a future instant, else 400). No review is needed, even with ` +
        `governance approval on: the content was published before (docs/design/governance.md). The base's draft is left as it is. ` +
        `Audited as \`published\` with \`rollbackOf\`. 404 for an unknown base or version; 403 for editors and viewers. ` +
        `docs/api.md#scheduled-versions-as-of-runs-and-rollback.`,
      params: z.object({ baseId: RecordIdParam }),
      body: RollbackBody,
      response: { 201: k.record, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 503, 504) },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await client.rollback(principalOf(request), request.params.baseId, request.body, ctx(request))),
  });

  app.delete<{ Params: { baseId: string; version: number } }>(`/${noun}/:baseId/schedule/:version`, {
    onRequest: requireCapability('publish'),
    schema: {
      tags,
      security,
      summary: `Cancel a scheduled version before its instant (publisher or admin)`,
      description:
        `The version stays (immutable, reachable by its record id and pinned runs) but never becomes the runnable version. ` +
        `409 \`conflict\` when it has started (or was published without a schedule), or was cancelled already; 404 for an unknown base or version. ` +
        `Audited as \`schedule cancelled\`. Answers the version.`,
      params: ScheduleParams,
      response: { 200: k.record, ...errorResponses(400, 401, 403, 404, 409, 429, 503, 504) },
    },
    handler: async (request) => client.cancelSchedule(principalOf(request), request.params.baseId, request.params.version, ctx(request)),
  });

  app.delete<IdParams>(one, {
    onRequest: requireCapability('admin'),
    schema: {
      tags,
      security,
      summary: `Soft-delete the whole base, given its base id or any of its record ids (admin)`,
      description: `The base disappears from lists and groups and cannot be loaded or run, not even by exact version id.`,
      params,
      response: { 204: z.undefined().describe('Deleted'), ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      await client.remove(principalOf(request), idOf(request.params), ctx(request));
      return reply.status(204).send();
    },
  });
}

/**
 * With governance approval on, a `PUT` with a non-draft status must become a publish request
 * (docs/api.md#governance-review). The review workflow is not part of this version, so the request is refused as a
 * whole, after the same checks the registry would make first: the record exists (404), the caller
 * may submit (403), it is a draft (409 `version_immutable`).
 */
async function refuseUnreviewedPublish(
  principal: Principal,
  noun: string,
  record: { status: RecordStatus },
  recordId: string,
): Promise<never> {
  if (!hasCapability(principal, 'edit')) {
    throw new ArbiterError(
      'forbidden',
      `role \`${principal.role}\`${principal.scopes ? ' with this key' : ''} may not submit ${noun} publish requests: it needs the \`edit\` right`,
    );
  }
  if (record.status !== 'draft') {
    throw new ArbiterError(
      'version_immutable',
      `\`${recordId}\` is a published version: versions are immutable, edit the base's draft instead`,
    );
  }
  throw new ArbiterError(
    'not_approved',
    `org \`${principal.orgId}\` requires governance approval to publish, and the review workflow is not available in this version: nothing was published`,
  );
}

/** `GET /policies` / `GET /flows`: the ordinary list, or with `deleted=true` the deleted bases. */
function listOrDeleted<T>(
  query: RecordListHttpQuery,
  list: (q: RecordListQuery) => Promise<T>,
  listDeleted: (q: ListQuery) => Promise<T>,
): Promise<T> {
  const { deleted, ...rest } = query;
  if (deleted !== 'true') return list(rest);
  const { limit, cursor, q, ...others } = rest;
  const unsupported = Object.keys(others).filter((name) => others[name as keyof typeof others] !== undefined);
  if (unsupported.length > 0) {
    throw new ArbiterError(
      'validation_failed',
      `\`deleted=true\` lists deleted bases by \`limit\`, \`cursor\` and \`q\` only`,
      unsupported.map((name) => ({
        code: 'not_with_deleted',
        message: 'does not apply to the list of deleted bases',
        path: `querystring.${name}`,
      })),
    );
  }
  return listDeleted({ limit, ...(cursor !== undefined ? { cursor } : {}), ...(q !== undefined ? { q } : {}) });
}
