import { z } from 'zod';
import type { FastifyRequest, FastifyTypeProviderDefault } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  FlowRecord,
  FlowReview,
  PolicyRecord,
  PolicyReview,
  RecordIdParam,
  ReviewDecisionBody,
  ReviewInboxPage,
  ReviewInboxQuery,
  ReviewPublishBody,
  type RunnableKind,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { acceptEmptyBodies } from '../http/json-body.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import { reviewBody, type GovernanceClient } from '../clients/governance-client.js';

/** Dependencies of {@link reviewRoutes}. */
export interface ReviewRoutesOptions {
  readonly authenticator: Authenticator;
  readonly governance: GovernanceClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/**
 * The review endpoints (docs/api.md#governance-review), thin: the governance service decides. Their
 * POSTs take an optional body, and an empty body is accepted whatever its `content-type` (clients
 * commonly send `content-type: application/json` on every call); a non-empty body must be JSON.
 */
export const reviewRoutes: FastifyPluginAsyncZod<ReviewRoutesOptions> = async (app, { authenticator, governance }) => {
  acceptEmptyBodies(app);
  authenticate(app, authenticator, 'api-key-or-bearer');
  inboxRoute(app, governance);
  kindRoutes(app, governance, 'policy', 'policyId', PolicyReview, PolicyRecord);
  kindRoutes(app, governance, 'flow', 'flowId', FlowReview, FlowRecord);
};

type ZodApp = Parameters<FastifyPluginAsyncZod>[0];

/** `GET /reviews`: the review inbox of publishers and admins, policies and flows together. */
function inboxRoute(app: ZodApp, governance: GovernanceClient): void {
  app.get('/reviews', {
    onRequest: requireCapability('publish'),
    schema: {
      tags: ['reviews'],
      security,
      summary: 'Drafts of the org waiting for approval (publisher or admin)',
      description:
        'Policy and flow drafts whose latest publish request is `pending_approval`, oldest request first: each the review summary ' +
        "(`kind`, `recordId`, `baseId`, who asked and when, `checks` run at submission) with the draft's `name`. Drafts changed since they were " +
        'submitted (stale) and deleted ones wait for nobody and are left out, so a page may hold fewer than `limit` items while `nextCursor` is set. ' +
        '403 for viewers and editors.',
      querystring: ReviewInboxQuery,
      response: { 200: ReviewInboxPage, ...errorResponses(400, 401, 403, 429, 503, 504) },
    },
    handler: async (request) => governance.inbox(principalOf(request), request.query, { requestId: request.id }),
  });
}

function kindRoutes(
  zodApp: ZodApp,
  governance: GovernanceClient,
  kind: RunnableKind,
  idParam: 'policyId' | 'flowId',
  review: z.ZodType,
  record: z.ZodType,
): void {
  const app = zodApp.withTypeProvider<FastifyTypeProviderDefault>();
  const tags = [kind === 'policy' ? 'policies' : 'flows'];
  const params = z.object({ [idParam]: RecordIdParam });
  const path = `/${kind}/:${idParam}/review`;
  type Params = { Params: Record<string, string> };
  const idOf = (request: FastifyRequest<Params>): string => request.params[idParam];
  const ctx = (request: { id: string }) => ({ requestId: request.id });
  const decision = ReviewDecisionBody.optional().describe('Optional; an empty body (any content type) is `{}`');

  app.get<Params>(path, {
    onRequest: requireCapability('view'),
    schema: {
      tags,
      security,
      summary: `The review summary of the ${kind}'s draft (a base id or a version id answers for its base's draft)`,
      description:
        'State `draft` (never submitted, or changed since its latest request: then `stale: true`), `pending_approval`, `approved`, ' +
        '`rejected` or `published`. 404 when the record is a version and its base has no draft, unless that version was published through review. ' +
        '`impact` is the latest impact report of the draft as it is now; its `examples` (recorded inputs) only for callers with the `audit` right. ' +
        "`shadow` holds the counts of the base's shadow runs when the draft is their candidate (absent otherwise).",
      params,
      response: { 200: review, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => reviewBody(await governance.get(principalOf(request), kind, idOf(request), ctx(request))),
  });

  for (const verb of ['approve', 'reject'] as const) {
    app.post<Params & { Body: ReviewDecisionBody | undefined }>(`${path}/${verb}`, {
      onRequest: requireCapability('publish'),
      schema: {
        tags,
        security,
        summary: `${verb === 'approve' ? 'Approve' : 'Reject'} the latest publish request of the ${kind}'s draft (publisher or admin, never its requester or an author)`,
        description:
          `403 \`separation_of_duties\` for the requester and for any author of the draft's content since its last published version (its \`authors\`). 409 \`conflict\` when the latest request is not pending, or is not the given \`requestId\`; ` +
          `409 \`review_stale\` when the draft changed since it was submitted; 409 \`not_approved\` when it was never submitted. ` +
          `422 \`cannot_publish\` (reason \`unreviewed_policy\`) when approving a flow whose policy node would run a draft: ` +
          `a flow version runs reviewed text only, its nodes that name a base are pinned to that base's latest version when it is published.`,
        params,
        body: decision,
        response: { 200: review, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503, 504) },
      },
      handler: async (request) => {
        const body = request.body ?? {};
        const p = principalOf(request);
        const out =
          verb === 'approve'
            ? await governance.approve(p, kind, idOf(request), body, ctx(request))
            : await governance.reject(p, kind, idOf(request), body, ctx(request));
        return reviewBody(out);
      },
    });
  }

  app.post<Params & { Body: ReviewPublishBody | undefined }>(`${path}/publish`, {
    onRequest: requireCapability('publish'),
    schema: {
      tags,
      security,
      summary: `Publish the ${kind}'s approved, unchanged draft as a new version (publisher or admin, never the requester or an author)`,
      description:
        'Runs the same publish checks as a `PUT` publish (422 `cannot_publish` with every reason); a flow also needs every policy node to run a published ' +
        'version (`unreviewed_policy`), and its version records the version each node naming a base runs (`pinnedVersions`). 409 `not_approved` unless the latest request is approved; ' +
        '409 `review_stale` when the draft changed since (compared inside the registry’s publishing transaction); 409 `conflict` when it was already published. ' +
        'Answers the new version (201), whose `review` shows state `published`.',
      params,
      body: ReviewPublishBody.optional().describe('Optional; an empty body (any content type) is `{}`'),
      response: { 201: record, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      const out = await governance.publish(principalOf(request), kind, idOf(request), request.body ?? {}, ctx(request));
      const rev = { state: out.review.state, requestId: out.review.requestId, stale: out.review.stale };
      return reply.status(201).send({ ...out.record, review: rev });
    },
  });
}
