import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  BaseDecisionSettings,
  DecisionBaseStats,
  DecisionIdParams,
  DecisionPage,
  DecisionQuery,
  DecisionRecord,
  DecisionSettings,
  DecisionSettingsParams,
  DecisionStatsParams,
  FlowRecord,
  PolicyRecord,
  RecordIdParam,
  TestFromDecisionBody,
  DECISION_READ_RIGHT,
  MAX_DECISION_SETTINGS_BASES,
  MAX_DECISION_SETTINGS_BYTES,
  OrgDecisionSettings,
} from '@arbiter/contracts';
import { z } from 'zod';
import { requireBase, type DecisionsClient } from '../clients/decisions-client.js';
import type { RegistryClient } from '../clients/registry-client.js';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import { addTestFromDecision } from '../tests-from-decisions.js';

/** Dependencies of {@link decisionRoutes}. */
export interface DecisionRoutesOptions {
  readonly authenticator: Authenticator;
  readonly decisions: DecisionsClient;
  /** Where bases live: settings are accepted only for a base of the caller's org. */
  readonly registry: RegistryClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];
const tags = ['decisions'];
const readers = 'Admins and auditors (a key needs the `audit` scope); only the caller org.';

/**
 * Decision records (docs/decisions.md): `GET /decisions` pages the caller org's recorded
 * decisions newest first, `GET /decisions/{id}` reads one; the settings routes choose what is
 * recorded and masked. The audit service answers and re-checks every right; without it these
 * routes are 503.
 */
export const decisionRoutes: FastifyPluginAsyncZod<DecisionRoutesOptions> = async (app, { authenticator, decisions, registry }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  // The one right that reads decision data, wherever it shows (impact examples check it too).
  const canAudit = requireCapability(DECISION_READ_RIGHT);
  const canPublish = requireCapability('publish');
  const bounds =
    `An org's settings stay within ${MAX_DECISION_SETTINGS_BASES} bases with settings of their own and ${MAX_DECISION_SETTINGS_BYTES} bytes ` +
    '(as `GET /decisions/settings` answers them): a change past either is 413 `payload_too_large` (reason `decision_settings_limit`) and changes nothing.';

  app.get('/decisions', {
    onRequest: canAudit,
    schema: {
      tags,
      security,
      summary: 'Recorded decisions of the caller org, newest first',
      description: `${readers} Filters combine with AND.`,
      querystring: DecisionQuery,
      response: { 200: DecisionPage, ...errorResponses(400, 401, 403, 429, 503, 504) },
    },
    handler: async (request) => decisions.query(principalOf(request), request.query, { requestId: request.id }),
  });

  app.get('/decisions/settings', {
    schema: {
      tags,
      security,
      summary: 'Decision settings of the caller org: the org masks and each base with settings of its own',
      description: 'Admins, auditors and publishers.',
      response: { 200: DecisionSettings, ...errorResponses(401, 403, 429, 503, 504) },
    },
    handler: async (request) => decisions.settings(principalOf(request), { requestId: request.id }),
  });

  app.put('/decisions/settings', {
    schema: {
      tags,
      security,
      summary: 'Replaces the org-wide masks',
      description: `Admins. The masks apply to every base of the org; execution replicas use them within \`DECISIONS_SETTINGS_TTL_MS\`. ${bounds}`,
      body: OrgDecisionSettings,
      response: { 200: DecisionSettings, ...errorResponses(400, 401, 403, 413, 429, 503, 504) },
    },
    handler: async (request) => decisions.putOrgSettings(principalOf(request), request.body, { requestId: request.id }),
  });

  app.put('/decisions/settings/:baseId', {
    onRequest: canPublish,
    schema: {
      tags,
      security,
      summary: "Replaces one base's decision settings",
      description:
        'Admins and publishers. `enabled`, `sampleRate`, `perSecond` and `masks` of a policy or flow base of the org; ' +
        `an id that is no live base of the org (a record id, another org's base, a deleted one) is 404. ${bounds}`,
      params: DecisionSettingsParams,
      body: BaseDecisionSettings,
      response: { 200: DecisionSettings, ...errorResponses(400, 401, 403, 404, 413, 429, 503, 504) },
    },
    handler: async (request) => {
      const principal = principalOf(request);
      await requireBase(registry, principal, request.params.baseId, { requestId: request.id });
      return decisions.putBaseSettings(principal, request.params.baseId, request.body, { requestId: request.id });
    },
  });

  app.delete('/decisions/settings/:baseId', {
    onRequest: canPublish,
    schema: {
      tags,
      security,
      summary: "Removes one base's decision settings of its own",
      description:
        'Admins and publishers. The base is recorded with the defaults (and the org masks) again. 404 when the org has no settings ' +
        "for that id; a deleted base's settings can be removed too.",
      params: DecisionSettingsParams,
      response: { 204: z.undefined().describe('Removed'), ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      await decisions.deleteBaseSettings(principalOf(request), request.params.baseId, { requestId: request.id });
      return reply.status(204).send();
    },
  });

  app.get('/decisions/stats/:baseId', {
    schema: {
      tags,
      security,
      summary: "One base's recording stats: records stored and records dropped, by reason",
      description:
        'Admins, auditors and publishers. `recorded` counts the records stored now; `dropped` the records the execution replicas dropped ' +
        '(outbox full or unwritable, buffer full, settings unreadable, record too large for the bus: `tooLarge`) as they reported them. ' +
        'A base never recorded has zeros.',
      params: DecisionStatsParams,
      response: { 200: DecisionBaseStats, ...errorResponses(400, 401, 403, 429, 503, 504) },
    },
    handler: async (request) => decisions.stats(principalOf(request), request.params.baseId, { requestId: request.id }),
  });

  const canEdit = requireCapability('edit');
  for (const kind of ['policy', 'flow'] as const) {
    const idParam = kind === 'policy' ? 'policyId' : 'flowId';
    app.post<{ Params: Record<string, string>; Body: TestFromDecisionBody }>(`/${kind}/:${idParam}/tests/from-decision`, {
      onRequest: [canEdit, canAudit],
      schema: {
        tags: [kind === 'policy' ? 'policies' : 'flows'],
        security,
        summary: `Saves a recorded decision of the ${kind} as a saved test of its draft`,
        description:
          `Needs both the \`edit\` right and the right to read decisions (\`audit\`): in practice admins, or keys with both scopes. ` +
          `Given a base id or any record id of the base, appends \`{name, data: the decision's input, expect: its result}\` to the base's ` +
          `draft, made from the latest version when there is none (as \`GET /${kind}/{id}/draft\`), and answers the draft (201). ` +
          'A masked input stays masked (`"***"`) and the test\'s name says so (" (masked input)"). 400 `validation_failed` when the ' +
          'decision was made by another base (reason `decision_of_other_base`) or ended in an error (`decision_error`); 404 for an ' +
          "unknown, deleted or other org's base or decision.",
        params: z.object({ [idParam]: RecordIdParam }),
        body: TestFromDecisionBody,
        response: { 201: kind === 'policy' ? PolicyRecord : FlowRecord, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 503, 504) },
      },
      handler: async (request, reply) => {
        const record = await addTestFromDecision(
          { registry, decisions },
          principalOf(request),
          kind,
          request.params[idParam],
          request.body,
          { requestId: request.id },
        );
        return reply.status(201).send(record);
      },
    });
  }

  app.get('/decisions/:id', {
    onRequest: canAudit,
    schema: {
      tags,
      security,
      summary: 'One recorded decision',
      description: `${readers} Another org's decision is 404.`,
      params: DecisionIdParams,
      response: { 200: DecisionRecord, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => decisions.get(principalOf(request), request.params.id, { requestId: request.id }),
  });
};
