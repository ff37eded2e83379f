import { z } from 'zod';
import type { FastifyTypeProviderDefault } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { FlowRecord, PolicyRecord, RecordIdParam, RestoreBody } from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { RegistryClient } from '../clients/registry-client.js';
import { acceptEmptyBodies } from '../http/json-body.js';

/** Dependencies of {@link restoreRoutes}. */
export interface RestoreRoutesOptions {
  readonly authenticator: Authenticator;
  readonly registry: RegistryClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/**
 * `POST /policy/{policyId}/restore` and `POST /flow/{flowId}/restore` (admin): bring a
 * soft-deleted base back with all its records. The body is optional: an empty one is accepted
 * whatever its `content-type`; a non-empty one must be the JSON `{}`.
 */
export const restoreRoutes: FastifyPluginAsyncZod<RestoreRoutesOptions> = async (zodApp, { authenticator, registry }) => {
  acceptEmptyBodies(zodApp);
  authenticate(zodApp, authenticator, 'api-key-or-bearer');
  const app = zodApp.withTypeProvider<FastifyTypeProviderDefault>();
  for (const k of [
    { noun: 'policy', plural: 'policies', idParam: 'policyId', record: PolicyRecord, client: registry.policies },
    { noun: 'flow', plural: 'flows', idParam: 'flowId', record: FlowRecord, client: registry.flows },
  ] as const) {
    app.post<{ Params: Record<string, string> }>(`/${k.noun}/:${k.idParam}/restore`, {
      onRequest: requireCapability('admin'),
      schema: {
        tags: [k.plural],
        security,
        summary: `Restore a soft-deleted ${k.noun} base with all its versions and its draft (admin)`,
        description:
          `Given the base id or any record id of the base (see \`GET /${k.plural}?deleted=true\`). Answers the base's current ` +
          `record (latest version, else the draft). 409 \`conflict\` when the base is not deleted; 404 for unknown or other-org ids. ` +
          `Its group memberships come back with it. An empty body is accepted whatever its content type.`,
        params: z.object({ [k.idParam]: RecordIdParam }),
        body: RestoreBody.optional().describe('Optional; an empty body (any content type) is `{}`'),
        response: { 200: k.record, ...errorResponses(400, 401, 403, 404, 409, 415, 429, 503, 504) },
      },
      handler: async (request) => k.client.restore(principalOf(request), request.params[k.idParam], { requestId: request.id }),
    });
  }
};
