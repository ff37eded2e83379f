import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ArbiterError, ProblemDetails } from '@arbiter/contracts';
import { authenticateApiKey, principalOf, requireCapability } from '../http/auth.js';
import { parseJsonBody, rawBodyOf } from '../http/json-body.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { McpForwarder } from '../clients/mcp-forwarder.js';
import { MCP_AUTH_CHALLENGE, MCP_BATCH_COUNTED, mcpKeyOf, mcpMessageCount, type RateCounter } from '@arbiter/key-auth';
import { applyRateLimit } from '../http/rate-limit.js';

/** Dependencies of {@link mcpRoutes}. */
export interface McpRoutesOptions {
  readonly authenticator: Authenticator;
  readonly forwarder: McpForwarder;
  /** Counts each message of a JSON-RPC batch in the rate limit. */
  readonly rates: RateCounter;
}

const JsonRpcId = z.union([z.string(), z.number(), z.null()]);
/** A JSON-RPC 2.0 response: a `result`, or an `error`. */
const JsonRpcResponse = z.object({
  jsonrpc: z.literal('2.0'),
  id: JsonRpcId,
  result: z.unknown().optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});
const JsonRpcAnswer = z.union([JsonRpcResponse, z.array(JsonRpcResponse)]);

/** The parsed body of a request whose text is not JSON: forwarded as it came, for the mcp service's JSON-RPC parse error. */
const NOT_JSON = Symbol('not JSON');

/**
 * `/mcp` (docs/api.md#mcp-rules-for-ai-agents) on the gateway, for single-host setups: the API key is checked here,
 * before any MCP processing, then the request is carried to the mcp service over the bus. The mcp
 * service's own port (`MCP_HTTP_PORT`, where the Kubernetes ingress routes `/mcp`) serves the same
 * exchange with the same authentication, rate counters and answers (both use `@arbiter/key-auth`). A JSON-RPC batch counts each
 * of its messages in the rate limit, as a batch run counts its items (nothing is forwarded past it).
 */
export const mcpRoutes: FastifyPluginAsyncZod<McpRoutesOptions> = async (app, { authenticator, forwarder, rates }) => {
  app.addHook('onRequest', (request, reply) => authenticateApiKey(request, reply, authenticator, mcpKeyOf(request.headers, request.query)));
  app.addHook('onSend', async (_request, reply) => {
    if (reply.statusCode === 401) reply.header('www-authenticate', MCP_AUTH_CHALLENGE);
  });
  // Any body is read as text; one that is not JSON (or none) goes on to the mcp service, which
  // answers it as JSON-RPC does (-32700 Parse error), and a content type other than JSON gets the
  // transport's JSON-RPC 415. JSON is checked as on every route (depth, keys, text: 400 problems).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    request.rawJson = body as string;
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      if (err instanceof ArbiterError && err.code === 'bad_request') done(null, NOT_JSON);
      else done(err as Error, undefined);
    }
  });
  const canView = requireCapability('view');

  app.route({
    method: ['POST', 'GET', 'DELETE'],
    url: '/mcp',
    onRequest: canView,
    schema: {
      tags: ['mcp'],
      security: [{ mcpApiKey: [] }, { apiKey: [] }],
      summary: 'Model Context Protocol endpoint (Streamable HTTP, stateless)',
      description:
        'JSON-RPC over Streamable HTTP with the tools evaluate_rules, validate_rule, explain_rule and list_operators. ' +
        'Needs an API key with scope `view` in `x-mcp-api-key`, `x-api-key` or the `api_key` query parameter (not recommended: it ends up in URLs). ' +
        'A JSON-RPC batch (an array of messages) counts each message in the rate limit, as a batch run counts its items: past it 429, nothing run; ' +
        'an empty batch is a JSON-RPC error (-32600 Invalid Request, HTTP 400).',
      querystring: z.object({ api_key: z.string().optional() }),
      response: {
        200: {
          description: 'The JSON-RPC answer (a batch gets an array of answers)',
          content: { 'application/json': { schema: JsonRpcAnswer } },
        },
        400: {
          description:
            'A body that is not JSON (-32700 Parse error) or not a JSON-RPC request, or an empty batch (-32600): a JSON-RPC error. ' +
            'JSON nested too deep or carrying U+0000 or a `__proto__` key is a problem document, as on every route',
          content: { 'application/json': { schema: JsonRpcResponse }, 'application/problem+json': { schema: ProblemDetails } },
        },
        405: {
          description: '`GET` and `DELETE`: this stateless server accepts only `POST` (`allow: POST`)',
          content: { 'application/json': { schema: JsonRpcResponse } },
        },
        406: {
          description: '`accept` names neither `application/json` nor `text/event-stream`: a JSON-RPC error',
          content: { 'application/json': { schema: JsonRpcResponse } },
        },
        401: {
          description: `No API key, or an unknown, revoked or expired one, with \`www-authenticate: ${MCP_AUTH_CHALLENGE}\``,
          content: { 'application/problem+json': { schema: ProblemDetails } },
        },
        415: {
          description: 'A body whose `content-type` is not `application/json`: a JSON-RPC error (-32000)',
          content: { 'application/json': { schema: JsonRpcResponse } },
        },
        ...errorResponses(403, 413, 429, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const messages = mcpMessageCount(request.body);
      if (messages > 1) {
        const use = await rates.chargeItems(mcpKeyOf(request.headers, request.query), request.principal, messages);
        if (use !== undefined) applyRateLimit(reply, use, MCP_BATCH_COUNTED);
      }
      const res = await forwarder.forward(principalOf(request), {
        method: request.method,
        headers: request.headers,
        body: request.body === undefined ? undefined : rawBodyOf(request),
        requestId: request.id,
      });
      // The mcp service's JSON-RPC body goes out as is, not through a response schema: the typed
      // reply only knows the problem bodies documented above.
      const raw = reply as unknown as FastifyReply;
      return raw
        .status(res.status)
        .headers(res.headers)
        .serializer((s: string) => s)
        .send(res.body);
    },
  });
};
