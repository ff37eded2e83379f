import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ImpactReport, ImpactRequest } from '@arbiter/contracts';
import { z } from 'zod';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { ImpactClient } from '../clients/impact-client.js';

/** Dependencies of {@link impactRoutes}. */
export interface ImpactRoutesOptions {
  readonly authenticator: Authenticator;
  readonly impact: ImpactClient;
}

/**
 * `POST /policy/{policyId}/impact` (issue 23, docs/decisions.md#impact-analysis): replays the base's
 * most recent recorded decisions through the record and reports what would change. The governance
 * service runs it and keeps the report for the draft's review summary.
 */
export const impactRoutes: FastifyPluginAsyncZod<ImpactRoutesOptions> = async (app, { authenticator, impact }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  app.post('/policy/:policyId/impact', {
    onRequest: requireCapability('edit'),
    schema: {
      tags: ['policies'],
      security: [{ apiKey: [] }, { bearer: [] }],
      summary: "Impact analysis: replays the base's recorded decisions through this record",
      description:
        'Editors may analyse drafts; publishers and admins any record of their org. Each decision is replayed at its own `now`; ' +
        'one whose replay read a masked value is `unreplayable`. The report becomes the `impact` of the draft’s review summary until the draft changes.',
      params: z.object({ policyId: z.uuid().describe('Policy record id (usually the draft under review)') }),
      body: ImpactRequest.optional().describe('Optional; an empty body is `{}`'),
      response: { 200: ImpactReport, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) =>
      impact.analyse(principalOf(request), request.params.policyId, ImpactRequest.parse(request.body ?? {}), { requestId: request.id }),
  });
};
