import { z } from 'zod';
import type { FastifyTypeProviderDefault } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { RecordIdParam, RolloutPercentBody, RolloutState } from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { RegistryClient } from '../clients/registry-client.js';
import { acceptEmptyBodies } from '../http/json-body.js';

/** Dependencies of {@link rolloutRoutes}. */
export interface RolloutRoutesOptions {
  readonly authenticator: Authenticator;
  readonly registry: RegistryClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/**
 * Staged rollouts (docs/api.md#staged-rollouts, docs/design/canary.md): `GET /{kind}/{baseId}/rollout`
 * (any member), `POST /{kind}/{baseId}/rollout` `{percent}`, `POST .../rollout/promote` and
 * `POST .../rollout/rollback` (publisher or admin). A rollout starts with a publish (`rollout` of
 * the publishing `PUT`, or of `.../review/publish` in a governed org).
 */
export const rolloutRoutes: FastifyPluginAsyncZod<RolloutRoutesOptions> = async (zodApp, { authenticator, registry }) => {
  acceptEmptyBodies(zodApp);
  authenticate(zodApp, authenticator, 'api-key-or-bearer');
  const app = zodApp.withTypeProvider<FastifyTypeProviderDefault>();
  for (const k of [
    { noun: 'policy', plural: 'policies' },
    { noun: 'flow', plural: 'flows' },
  ] as const) {
    const path = `/${k.noun}/:baseId/rollout`;
    const params = z.object({ baseId: RecordIdParam });
    const tags = [k.plural];
    const call = (request: { id: string; params: unknown }, action: 'get' | 'percent' | 'promote' | 'rollback', percent?: number) =>
      registry.rollout(principalOf(request as never), k.noun, (request.params as { baseId: string }).baseId, action, percent, {
        requestId: request.id,
      });

    app.get<{ Params: { baseId: string } }>(path, {
      onRequest: requireCapability('view'),
      schema: {
        tags,
        security,
        summary: `The ${k.noun} base's running staged rollout (\`rollout: null\` when none runs)`,
        description: `404 for unknown, deleted or other-org base ids.`,
        params,
        response: { 200: RolloutState, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
      },
      handler: async (request) => call(request, 'get'),
    });

    app.post<{ Params: { baseId: string }; Body: RolloutPercentBody }>(path, {
      onRequest: requireCapability('publish'),
      schema: {
        tags,
        security,
        summary: `Widen or narrow the running rollout of a ${k.noun} base (publisher or admin)`,
        description:
          `\`percent\` (0–100, two decimals at most) of the runs by base id get the new version from the next run on, on every execution ` +
          `replica; SDK runtimes follow at their next sync (the runnable revision moves). 409 \`conflict\` when no rollout runs; ` +
          `audited as \`rollout changed\`.`,
        params,
        body: RolloutPercentBody,
        response: { 200: RolloutState, ...errorResponses(400, 401, 403, 404, 409, 415, 429, 503, 504) },
      },
      handler: async (request) => call(request, 'percent', request.body.percent),
    });

    for (const [verb, summary, description] of [
      [
        'promote',
        'Promote the rollout: the new version serves every run and the rollout ends',
        'The base keeps the new version as its current one.',
      ],
      [
        'rollback',
        'Roll the rollout back: the previous version serves every run again and the rollout ends',
        'The new version stays in the base’s history (pinned runs, `?version=`, still reach it); the previous version is the base’s current record again.',
      ],
    ] as const) {
      app.post<{ Params: { baseId: string } }>(`${path}/${verb}`, {
        onRequest: requireCapability('publish'),
        schema: {
          tags,
          security,
          summary: `${summary} (publisher or admin)`,
          description: `${description} 409 \`conflict\` when no rollout runs; audited as \`rollout changed\`. An empty body is accepted.`,
          params,
          body: z.strictObject({}).optional().describe('Optional; an empty body (any content type) is `{}`'),
          response: { 200: RolloutState, ...errorResponses(400, 401, 403, 404, 409, 415, 429, 503, 504) },
        },
        handler: async (request) => call(request, verb),
      });
    }
  }
};
