import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ImpactReport, ImpactRequest } from '@arbiter/contracts';
import { z } from 'zod';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import { acceptEmptyBodies } from '../http/json-body.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { ImpactClient } from '../clients/impact-client.js';

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/** Dependencies of {@link impactRoutes}. */
export interface ImpactRoutesOptions {
  readonly authenticator: Authenticator;
  readonly impact: ImpactClient;
}

/**
 * `POST /policy/{policyId}/impact` and `POST /flow/{flowId}/impact`
 * (docs/decisions.md#impact-analysis): replay the base's most recent recorded decisions through the
 * record and report what would change. The governance service runs them and keeps the report for
 * the draft's review summary.
 */
export const impactRoutes: FastifyPluginAsyncZod<ImpactRoutesOptions> = async (app, { authenticator, impact }) => {
  acceptEmptyBodies(app);
  authenticate(app, authenticator, 'api-key-or-bearer');
  const body = ImpactRequest.optional().describe('Optional; no body or an empty one (any content type) is `{}`');
  const response = { 200: ImpactReport, ...errorResponses(400, 401, 403, 404, 415, 429, 503, 504) };
  const access =
    "Editors may analyse drafts; publishers and admins any record of their org; another org's record is 404. " +
    '`examples` (recorded inputs) only for callers with the `audit` right (admins, auditors): the others get the counts.';

  app.post('/policy/:policyId/impact', {
    onRequest: requireCapability('edit'),
    schema: {
      tags: ['policies'],
      security,
      summary: "Impact analysis: replays the base's recorded decisions through this policy record",
      description:
        `${access} Each decision is replayed at its own \`now\`; one whose replay read a masked value is \`unreplayable\`. ` +
        'The report (`policyId` set) becomes the `impact` of the draft’s review summary until the draft changes.',
      params: z.object({ policyId: z.uuid().describe('Policy record id (usually the draft under review)') }),
      body,
      response,
    },
    handler: async (request) =>
      impact.analyse(principalOf(request), 'policy', request.params.policyId, ImpactRequest.parse(request.body ?? {}), {
        requestId: request.id,
      }),
  });

  app.post('/flow/:flowId/impact', {
    onRequest: requireCapability('edit'),
    schema: {
      tags: ['flows'],
      security,
      summary: "Impact analysis: replays the base's recorded decisions through this flow record",
      description:
        `${access} Each decision is replayed at its own \`now\`, through the flow's policy and table nodes; a decision whose result, ` +
        'error or path changed is `changed`; one whose replay read a masked value (in a policy node or a table cell) is `unreplayable`. ' +
        'The report (`flowId` set) becomes the `impact` of the draft’s review summary until the draft changes.',
      params: z.object({ flowId: z.uuid().describe('Flow record id (usually the draft under review)') }),
      body,
      response,
    },
    handler: async (request) =>
      impact.analyse(principalOf(request), 'flow', request.params.flowId, ImpactRequest.parse(request.body ?? {}), {
        requestId: request.id,
      }),
  });
};
