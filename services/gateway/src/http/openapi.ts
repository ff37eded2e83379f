import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ExplainedCondition, ProblemDetails, Reason } from '@arbiter/contracts';
import { PROBLEM_CONTENT_TYPE } from './problem.js';

const WHY: Record<number, string> = {
  400:
    'Malformed JSON, or a body, query or path that does not match the schema (`errors` lists the fields); ' +
    'JSON nested deeper than 256 levels (`too_deep`), U+0000 in any text or the URL (`nul_character`), an unpaired UTF-16 surrogate (`unpaired_surrogate`), ' +
    'a `__proto__` key (`forbidden_key`); a list `cursor` this list did not make (`invalid_cursor`)',
  401: 'No credential, or an unknown, revoked or expired API key, or an invalid bearer token',
  403: 'The role or the API key scopes do not allow this',
  404: 'Unknown, or in another org',
  409: 'Conflicts with the current state',
  413: 'Request body larger than the limit',
  415: 'Request body is not `application/json`',
  422: 'Publishing checks failed (`cannot_publish`), or the answer is larger than the bus allows (`result_too_large`)',
  429: 'Rate limit of the key (or user) exceeded, or too many of its evaluations in progress; see `retry-after`',
  503: 'A dependency (execution service, database, Redis, NATS) is unavailable; see `retry-after`',
  504: 'The execution service did not answer in time',
};

/** OpenAPI response entries (RFC 9457 problem documents) for the given statuses. */
export function errorResponses(...statuses: Array<keyof typeof WHY>) {
  const out: Record<number, { description: string; content: Record<string, { schema: typeof ProblemDetails }> }> = {};
  for (const s of statuses) out[s] = { description: WHY[s] ?? 'Error', content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemDetails } } };
  return out;
}

/**
 * Registers the OpenAPI 3.1 generator (fed by the routes' zod schemas), `GET /openapi.json`
 * and the interactive docs at `/docs`. Must run before the routes are registered.
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  nameComponent(ExplainedCondition, 'ExplainedCondition'); // recursive: needs a named component to be referenced
  nameComponent(Reason, 'Reason'); // recursive too
  nameComponent(ProblemDetails, 'Problem');
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Arbiter policy service',
        description:
          'Policy rules as a service. Errors are RFC 9457 problem documents (`application/problem+json`) with a stable `code`. ' +
          'Request bodies reject unknown fields; query strings ignore unknown parameters.',
        version,
      },
      // Relative: the API is served by the server that serves this document.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Personal API key' },
          mcpApiKey: { type: 'apiKey', in: 'header', name: 'x-mcp-api-key', description: 'Personal API key, for /mcp' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Token of the organization identity provider' },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: (input) => finishDocument(jsonSchemaTransformObject(input)),
  });
  // Encapsulated, so the headers hook applies to the docs' routes (page, scripts, styles, spec) only.
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_request, reply) => {
      reply.headers(DOCS_SECURITY_HEADERS);
    });
    // No validator badge: it would load an image from validator.swagger.io, which the CSP refuses.
    await docs.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { validatorUrl: null } });
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/**
 * The `operationId` of every operation, by method and path: client generators name
 * their functions after them, so they never change once published. A route missing here has no
 * operationId, which the OpenAPI test refuses.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /me': 'getMe',
  'GET /users': 'listUsers',
  'GET /users/{userId}': 'getUser',
  'PUT /users/{userId}': 'putUser',
  'DELETE /users/{userId}': 'deleteUser',
  'GET /users/{userId}/apikeys': 'listUserApiKeys',
  'POST /users/{userId}/apikeys': 'createUserApiKey',
  'GET /apikeys': 'listApiKeys',
  'POST /apikeys': 'createApiKey',
  'DELETE /apikeys/{apiKeyId}': 'revokeApiKey',
  'GET /org/settings': 'getOrgSettings',
  'PUT /org/settings': 'putOrgSettings',
  'POST /run': 'runRule',
  'POST /validate': 'validateRule',
  'POST /explain': 'explainRule',
  'GET /operators': 'listOperators',
  'POST /mcp': 'postMcp',
  'GET /mcp': 'getMcp',
  'DELETE /mcp': 'deleteMcp',
  'POST /run/policy/{baseId}': 'runPolicy',
  'POST /run/policy_version/{policyId}': 'runPolicyVersion',
  'POST /run/flow/{baseId}': 'runFlow',
  'POST /run/flow_version/{flowId}': 'runFlowVersion',
  'POST /flow/test': 'testFlow',
  'POST /run/batch': 'runRuleBatch',
  'POST /run/policy/{baseId}/batch': 'runPolicyBatch',
  'POST /run/policy_version/{policyId}/batch': 'runPolicyVersionBatch',
  'POST /run/flow/{baseId}/batch': 'runFlowBatch',
  'POST /run/flow_version/{flowId}/batch': 'runFlowVersionBatch',
  'POST /policy': 'createPolicy',
  'GET /policy/{policyId}': 'getPolicy',
  'PUT /policy/{policyId}': 'updatePolicy',
  'DELETE /policy/{policyId}': 'deletePolicy',
  'GET /policy/{policyId}/versions': 'listPolicyVersions',
  'GET /policy/{policyId}/draft': 'getPolicyDraft',
  'GET /policies': 'listPolicies',
  'POST /policy/{baseId}/tests/run': 'runPolicyTests',
  'POST /policy/{baseId}/rollback': 'rollbackPolicy',
  'DELETE /policy/{baseId}/schedule/{version}': 'cancelPolicySchedule',
  'POST /flow': 'createFlow',
  'GET /flow/{flowId}': 'getFlow',
  'PUT /flow/{flowId}': 'updateFlow',
  'DELETE /flow/{flowId}': 'deleteFlow',
  'GET /flow/{flowId}/versions': 'listFlowVersions',
  'GET /flow/{flowId}/draft': 'getFlowDraft',
  'GET /flows': 'listFlows',
  'POST /flow/{baseId}/tests/run': 'runFlowTests',
  'POST /flow/{baseId}/rollback': 'rollbackFlow',
  'DELETE /flow/{baseId}/schedule/{version}': 'cancelFlowSchedule',
  'GET /reviews': 'listReviews',
  'GET /policy/{policyId}/review': 'getPolicyReview',
  'POST /policy/{policyId}/review/approve': 'approvePolicyReview',
  'POST /policy/{policyId}/review/reject': 'rejectPolicyReview',
  'POST /policy/{policyId}/review/publish': 'publishPolicyReview',
  'GET /flow/{flowId}/review': 'getFlowReview',
  'POST /flow/{flowId}/review/approve': 'approveFlowReview',
  'POST /flow/{flowId}/review/reject': 'rejectFlowReview',
  'POST /flow/{flowId}/review/publish': 'publishFlowReview',
  'POST /policy/{policyId}/restore': 'restorePolicy',
  'POST /flow/{flowId}/restore': 'restoreFlow',
  'PUT /policy/{baseId}/shadow': 'putPolicyShadow',
  'GET /policy/{baseId}/shadow': 'getPolicyShadow',
  'DELETE /policy/{baseId}/shadow': 'stopPolicyShadow',
  'PUT /flow/{baseId}/shadow': 'putFlowShadow',
  'GET /flow/{baseId}/shadow': 'getFlowShadow',
  'DELETE /flow/{baseId}/shadow': 'stopFlowShadow',
  'GET /policy/{baseId}/rollout': 'getPolicyRollout',
  'POST /policy/{baseId}/rollout': 'setPolicyRollout',
  'POST /policy/{baseId}/rollout/promote': 'promotePolicyRollout',
  'POST /policy/{baseId}/rollout/rollback': 'rollbackPolicyRollout',
  'GET /flow/{baseId}/rollout': 'getFlowRollout',
  'POST /flow/{baseId}/rollout': 'setFlowRollout',
  'POST /flow/{baseId}/rollout/promote': 'promoteFlowRollout',
  'POST /flow/{baseId}/rollout/rollback': 'rollbackFlowRollout',
  'GET /export': 'exportBundle',
  'POST /import': 'importBundle',
  'POST /group': 'createGroup',
  'GET /group/{groupId}': 'getGroup',
  'PUT /group/{groupId}': 'updateGroup',
  'DELETE /group/{groupId}': 'deleteGroup',
  'GET /groups': 'listGroups',
  'POST /group/{groupId}/member': 'addGroupMember',
  'DELETE /group/{groupId}/member/{memberId}': 'removeGroupMember',
  'GET /group/{groupId}/policies': 'listGroupPolicies',
  'GET /group/{groupId}/flows': 'listGroupFlows',
  'GET /runnable': 'getRunnable',
  'GET /runnable/changes': 'watchRunnableChanges',
  'POST /runnable/reports': 'reportRunnableRuns',
  'GET /audit': 'listAuditEvents',
  'GET /audit/export': 'exportAuditEvents',
  'POST /webhooks': 'createWebhook',
  'GET /webhooks': 'listWebhooks',
  'GET /webhooks/{id}': 'getWebhook',
  'PATCH /webhooks/{id}': 'updateWebhook',
  'DELETE /webhooks/{id}': 'deleteWebhook',
  'POST /webhooks/{id}/secret': 'rotateWebhookSecret',
  'POST /webhooks/{id}/test': 'testWebhook',
  'GET /webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'POST /webhooks/{id}/deliveries/{deliveryId}/retry': 'retryWebhookDelivery',
  'GET /decisions': 'listDecisions',
  'GET /decisions/settings': 'getDecisionSettings',
  'PUT /decisions/settings': 'putDecisionSettings',
  'PUT /decisions/settings/{baseId}': 'putBaseDecisionSettings',
  'DELETE /decisions/settings/{baseId}': 'deleteBaseDecisionSettings',
  'GET /decisions/stats/{baseId}': 'getDecisionStats',
  'GET /decisions/{id}': 'getDecision',
  'POST /policy/{policyId}/impact': 'analysePolicyImpact',
  'POST /flow/{flowId}/impact': 'analyseFlowImpact',
  'POST /policy/{policyId}/tests/from-decision': 'addPolicyTestFromDecision',
  'POST /flow/{flowId}/tests/from-decision': 'addFlowTestFromDecision',
};

const JSON_RPC_REQUEST = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'number', 'null'], description: 'Absent for a notification' },
    method: { type: 'string', description: 'e.g. `initialize`, `tools/list`, `tools/call`' },
    params: { type: 'object' },
  },
};

/**
 * Request bodies the document declares without the route validating them: `POST /mcp` is proxied as
 * is to the mcp service, which answers a malformed message with a JSON-RPC error of its own.
 */
const DOCUMENTED_BODIES: Readonly<Record<string, object>> = {
  'POST /mcp': {
    required: true,
    description: 'A JSON-RPC 2.0 request or notification, or a batch (an array) of them',
    content: { 'application/json': { schema: { oneOf: [JSON_RPC_REQUEST, { type: 'array', items: JSON_RPC_REQUEST }] } } },
  },
};

/** Response headers of a path's 401 the route schemas cannot carry (the zod transform drops `headers`). */
const DOCUMENTED_401_HEADERS: Readonly<Record<string, object>> = {
  '/mcp': {
    'www-authenticate': {
      description: 'The challenge `ApiKey realm="arbiter", header="x-mcp-api-key"`: send an API key, not an OAuth token',
      schema: { type: 'string' },
    },
  },
};

/**
 * Sets each operation's {@link OPERATION_IDS} entry (`/mcp`, one route for three methods, gets one
 * per method), {@link DOCUMENTED_BODIES} and {@link DOCUMENTED_401_HEADERS}.
 */
function finishDocument<T>(doc: T): T {
  const paths = (doc as { paths?: Record<string, Record<string, unknown>> }).paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== 'object' || operation === null) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const operationId = OPERATION_IDS[key];
      const requestBody = DOCUMENTED_BODIES[key];
      const headers401 = DOCUMENTED_401_HEADERS[path];
      const responses = (operation as { responses?: Record<string, object> }).responses;
      // A copy: the methods of one route share one operation object.
      item[method] = {
        ...operation,
        ...(operationId !== undefined ? { operationId } : {}),
        ...(requestBody !== undefined ? { requestBody } : {}),
        ...(headers401 !== undefined && responses?.['401'] !== undefined
          ? { responses: { ...responses, 401: { ...responses['401'], headers: headers401 } } }
          : {}),
      };
    }
  }
  return doc;
}

/**
 * The interactive docs share the console's origin, whose credential sits in session storage: they
 * run no inline script and load nothing from elsewhere (swagger-ui's page loads its bundle, its
 * initializer and the spec from `/docs`; its logo is a `data:` image), and may not be framed.
 * Styles allow inline: swagger-ui adds `<style>` elements from its bundle.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': DOCS_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** Lists `schema` under `components.schemas` as `id` (the zod global registry feeds the transform). */
function nameComponent(schema: z.ZodType, id: string): void {
  if (!z.globalRegistry.has(schema)) z.globalRegistry.add(schema, { id });
}
