import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { RecordIdParam, ShadowBody, ShadowReport } from '@arbiter/contracts';
import { z } from 'zod';
import type { ShadowClient } from '../clients/shadow-client.js';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';

/** Dependencies of {@link shadowRoutes}. */
export interface ShadowRoutesOptions {
  readonly authenticator: Authenticator;
  readonly shadows: ShadowClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/**
 * Shadow runs (docs/api.md#shadow-runs): `PUT`, `GET` and `DELETE` `/policy/{baseId}/shadow` and
 * `/flow/{baseId}/shadow`. Routes only: the registry checks rights, tenancy and the candidate.
 */
export const shadowRoutes: FastifyPluginAsyncZod<ShadowRoutesOptions> = async (app, { authenticator, shadows }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  const canEdit = requireCapability('edit');
  for (const k of [
    { kind: 'policy', plural: 'policies' },
    { kind: 'flow', plural: 'flows' },
  ] as const) {
    const path = `/${k.kind}/:baseId/shadow`;
    const params = z.object({ baseId: RecordIdParam });
    const reportDoc =
      'Counts for every reader of the base; `examples` (the latest changed runs, inputs masked as decision records are) only for ' +
      'callers with the `audit` right, as `GET /decisions`: others get `examplesHidden: true` and no `examples`.';
    app.put(path, {
      onRequest: canEdit,
      schema: {
        tags: [k.plural],
        security,
        summary: `Starts (or replaces) the shadow candidate of a ${k.kind} base`,
        description:
          `Editors, publishers and admins. \`recordId\` is a draft or version of this base (not its current record); a record of ` +
          `another base is 400 \`validation_failed\`, an unknown or deleted one 404. \`sampleRate\` of the runs by base id also run ` +
          `the candidate after their answer is sent; \`until\` (future) stops it by itself. Replacing a shadow starts its counts from zero. ` +
          `Audited as \`shadow started\`. ${reportDoc}`,
        params,
        body: ShadowBody,
        response: { 200: ShadowReport, ...errorResponses(400, 401, 403, 404, 415, 429, 503, 504) },
      },
      handler: async (request) => shadows.set(principalOf(request), k.kind, request.params.baseId, request.body, { requestId: request.id }),
    });
    app.get(path, {
      schema: {
        tags: [k.plural],
        security,
        summary: `The shadow of a ${k.kind} base, running or stopped, with its report`,
        description: `Any member who can read the base. 404 when the base has no shadow (or is deleted). ${reportDoc}`,
        params,
        response: { 200: ShadowReport, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
      },
      handler: async (request) => shadows.get(principalOf(request), k.kind, request.params.baseId, { requestId: request.id }),
    });
    app.delete(path, {
      onRequest: canEdit,
      schema: {
        tags: [k.plural],
        security,
        summary: `Stops the shadow of a ${k.kind} base`,
        description:
          'Editors, publishers and admins. Answers the final report; it stays readable (`state: "stopped"`) until a new shadow ' +
          'replaces it. 404 when no shadow runs. Audited as `shadow stopped`.',
        params,
        response: { 200: ShadowReport, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
      },
      handler: async (request) => shadows.stop(principalOf(request), k.kind, request.params.baseId, { requestId: request.id }),
    });
  }
};
