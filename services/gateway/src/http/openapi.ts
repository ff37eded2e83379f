import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ExplainedCondition, ProblemDetails } from '@arbiter/contracts';
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
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Personal API key' },
          mcpApiKey: { type: 'apiKey', in: 'header', name: 'x-mcp-api-key', description: 'Personal API key, for /mcp' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Token of the organization identity provider' },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
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
