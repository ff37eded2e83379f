import { z } from 'zod';
import type { FastifyTypeProviderDefault } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  ArbiterError,
  CreateFlowBody,
  CreatePolicyBody,
  FlowRecord,
  FlowRecordPage,
  FlowSummaryPage,
  hasCapability,
  ListQuery,
  PolicyRecord,
  PolicyRecordPage,
  PolicySummaryPage,
  RecordIdParam,
  UpdateFlowBody,
  UpdatePolicyBody,
  VersionsQuery,
  type Principal,
  type RecordStatus,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { Page, RecordsClient, RegistryCallContext, RegistryClient } from '../registry-client.js';

/** Dependencies of {@link registryRoutes}. */
export interface RegistryRoutesOptions {
  readonly authenticator: Authenticator;
  readonly registry: RegistryClient;
  /** Whether the org's `governanceApproval` setting is on (publishing then needs a review). */
  readonly governanceApproval: (orgId: string) => Promise<boolean>;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/**
 * The stored policy and flow endpoints of spec §4.1 and §4.2 (without the review endpoints):
 * API key or bearer JWT. Authorization, ownership and tenancy are decided by the registry; the
 * capability hooks here only save it a round trip.
 */
export const registryRoutes: FastifyPluginAsyncZod<RegistryRoutesOptions> = async (app, { authenticator, registry, governanceApproval }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  recordRoutes(app, governanceApproval, {
    noun: 'policy',
    plural: 'policies',
    idParam: 'policyId',
    record: PolicyRecord,
    recordPage: PolicyRecordPage,
    summaryPage: PolicySummaryPage,
    createBody: CreatePolicyBody,
    updateBody: UpdatePolicyBody,
    client: registry.policies,
  });
  recordRoutes(app, governanceApproval, {
    noun: 'flow',
    plural: 'flows',
    idParam: 'flowId',
    record: FlowRecord,
    recordPage: FlowRecordPage,
    summaryPage: FlowSummaryPage,
    createBody: CreateFlowBody,
    updateBody: UpdateFlowBody,
    client: registry.flows,
  });
};

/** What differs between the policy and the flow routes. */
interface KindRoutes<R extends { status: RecordStatus }, S, C, U extends { status: RecordStatus }> {
  noun: 'policy' | 'flow';
  plural: 'policies' | 'flows';
  idParam: 'policyId' | 'flowId';
  record: z.ZodType<R>;
  recordPage: z.ZodType<Page<R>>;
  summaryPage: z.ZodType<Page<S>>;
  createBody: z.ZodType<C>;
  updateBody: z.ZodType<U>;
  client: RecordsClient<R, S, C, U>;
}

type ZodApp = Parameters<FastifyPluginAsyncZod>[0];

/** Route generics of one record id in the path. */
type IdParams = { Params: Record<string, string> };

/** Registers the seven routes of one kind (`/policy...` or `/flow...`). */
function recordRoutes<R extends { status: RecordStatus }, S, C, U extends { status: RecordStatus }>(
  zodApp: ZodApp,
  governanceApproval: (orgId: string) => Promise<boolean>,
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
  const idOf = (p: Record<string, string>): string => p[idParam]!;
  const ctx = (request: { id: string }): RegistryCallContext => ({ requestId: request.id });

  app.post<{ Body: C }>(`/${noun}`, {
    onRequest: requireCapability('edit'),
    schema: {
      tags,
      security,
      summary: `Create a ${noun}: its base and its draft (editor and up)`,
      description: `The draft is owned by its creator until it is first published: only the creator lists it, any member of the org can load it by id.`,
      body: k.createBody,
      response: { 201: k.record, ...errorResponses(400, 401, 403, 413, 415, 429, 503, 504) },
    },
    handler: async (request, reply) => reply.status(201).send(await client.create(principalOf(request), request.body as C, ctx(request))),
  });

  app.put<IdParams & { Body: U }>(one, {
    schema: {
      tags,
      security,
      summary: `Update the draft (\`status:"draft"\`, 200) or publish it as a new version (\`status:"published"\`, 201)`,
      description:
        `Given fields are applied first. Publishing (publisher or admin) consumes the draft: the record becomes the next version. ` +
        `A version is immutable (409 \`version_immutable\`). Publishing checks every problem at once (422 \`cannot_publish\`, nothing changed). ` +
        `When the org has governance approval on, publishing needs a review, which this version does not offer: 409 \`not_approved\`, nothing changed.`,
      params,
      body: k.updateBody,
      response: { 200: k.record, 201: k.record, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const recordId = idOf(request.params);
      const body = request.body as U;
      if (body.status !== 'draft' && (await governanceApproval(principal.orgId))) {
        await refuseUnreviewedPublish(principal, noun, await client.get(principal, recordId, ctx(request)), recordId);
      }
      const out = await client.update(principal, recordId, body, ctx(request));
      return reply.status(out.outcome === 'published' ? 201 : 200).send(out.record);
    },
  });

  app.get<IdParams>(one, {
    onRequest: requireCapability('view'),
    schema: {
      tags,
      security,
      summary: `A ${noun} draft or version by its record id`,
      params,
      response: { 200: k.record, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => client.get(principalOf(request), idOf(request.params), ctx(request)),
  });

  app.get<IdParams & { Querystring: VersionsQuery }>(`${one}/versions`, {
    onRequest: requireCapability('view'),
    schema: {
      tags,
      security,
      summary: `The draft and the versions of the ${noun}'s base, given any of its record ids`,
      description: 'The draft comes first, then the versions, newest first.',
      params,
      querystring: VersionsQuery,
      response: { 200: k.recordPage, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => client.versions(principalOf(request), idOf(request.params), request.query, ctx(request)),
  });

  app.get<IdParams>(`${one}/draft`, {
    onRequest: requireCapability('edit'),
    schema: {
      tags,
      security,
      summary: `The base's draft: the existing one (200) or a new one copied from this version (201)`,
      description: 'Never overwrites unsaved work: when the base already has a draft, that draft is returned.',
      params,
      response: { 200: k.record, 201: k.record, ...errorResponses(400, 401, 403, 404, 409, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      const out = await client.draft(principalOf(request), idOf(request.params), ctx(request));
      return reply.status(out.created ? 201 : 200).send(out.record);
    },
  });

  app.get<{ Querystring: ListQuery }>(`/${plural}`, {
    onRequest: requireCapability('view'),
    schema: {
      tags,
      security,
      summary: `List the ${plural} the caller sees, newest first`,
      description: `Published ${plural} of the org, plus the never-published ones the caller created. Deleted ones never.`,
      querystring: ListQuery,
      response: { 200: k.summaryPage, ...errorResponses(400, 401, 403, 429, 503, 504) },
    },
    handler: async (request) => client.list(principalOf(request), request.query, ctx(request)),
  });

  app.delete<IdParams>(one, {
    onRequest: requireCapability('admin'),
    schema: {
      tags,
      security,
      summary: `Soft-delete the whole base of any of its record ids (admin)`,
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
 * (spec §3). The review workflow is not part of this version, so the request is refused as a
 * whole, after the same checks the registry would make first: the record exists (404), the caller
 * may submit (403), it is a draft (409 `version_immutable`).
 */
async function refuseUnreviewedPublish(principal: Principal, noun: string, record: { status: RecordStatus }, recordId: string): Promise<never> {
  if (!hasCapability(principal, 'edit')) {
    throw new ArbiterError('forbidden', `role \`${principal.role}\`${principal.scopes ? ' with this key' : ''} may not submit ${noun} publish requests: it needs the \`edit\` right`);
  }
  if (record.status !== 'draft') {
    throw new ArbiterError('version_immutable', `\`${recordId}\` is a published version: versions are immutable, edit the base's draft instead`);
  }
  throw new ArbiterError(
    'not_approved',
    `org \`${principal.orgId}\` requires governance approval to publish, and the review workflow is not available in this version: nothing was published`,
  );
}
