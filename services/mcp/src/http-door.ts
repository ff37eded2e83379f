import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  ArbiterError,
  checkUrl,
  isArbiterError,
  parseJsonBody,
  PROBLEM_CONTENT_TYPE,
  type McpHttpRequest,
  type McpHttpResponse,
  type Principal,
} from '@arbiter/contracts';
import {
  capabilityRefusal,
  limitExceeded,
  MCP_AUTH_CHALLENGE,
  MCP_BATCH_COUNTED,
  mcpKeyOf,
  mcpMessageCount,
  mcpRequestHeaders,
  mcpResponseHeaders,
  rateLimitHeaders,
  requestDeadlines,
  problemAnswer,
  type KeyAuthenticator,
  type RateCounter,
  trustProxyOption,
  type RateUse,
} from '@arbiter/key-auth';
import { instrumentRequests, isDatabaseUnavailable } from '@arbiter/service-kit';
import type { Logger } from 'pino';

/** What the own port authenticates and counts with: the gateway's key authentication, on the same Redis and database. */
export interface DoorAuth {
  readonly authenticator: Pick<KeyAuthenticator, 'byApiKey'>;
  readonly rates: Pick<RateCounter, 'chargeItems'>;
}

/** What {@link buildHttpDoor} needs. */
export interface HttpDoorDeps {
  /** The key authentication, made on first use (it needs the gateway's installation id, which its migrations write). */
  readonly auth: () => Promise<DoorAuth>;
  /** One MCP exchange, as the bus endpoint serves it (`serveExchange`). */
  readonly exchange: (req: McpHttpRequest, requestId: string, parsed: { value: unknown } | undefined) => Promise<McpHttpResponse>;
  readonly bodyLimitBytes: number;
  /** `BODY_TIMEOUT_MS`: the time a client has to send a whole request; later → 408 and the connection is closed. */
  readonly bodyTimeoutMs: number;
  /** fastify's `trustProxy` (`TRUST_PROXY`): which `X-Forwarded-For` hops give the client address. */
  readonly trustProxy: boolean | number | string[];
  readonly logger: Logger;
  /** Where its request counts and latencies go (`arbiter_http_requests_total`, `arbiter_http_request_duration_seconds`). */
  readonly metrics?: Parameters<typeof instrumentRequests>[1];
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** PostgreSQL's SQLSTATEs for a database, and a table, that do not exist. */
const UNDEFINED_DATABASE = '3D000';
const UNDEFINED_TABLE = '42P01';

/** A body whose text is not JSON: the exchange answers it with the JSON-RPC parse error (-32700). */
const NOT_JSON = Symbol('not JSON');

declare module 'fastify' {
  interface FastifyRequest {
    mcpCaller: { key: string; principal: Principal } | null;
    mcpRawBody: string | null;
  }
}

/**
 * The service's own `/mcp` (`MCP_HTTP_PORT`), where the Kubernetes ingress routes MCP clients: the
 * same door as the gateway's `/mcp` without the hop over the bus. The key is authenticated and
 * counted by `@arbiter/key-auth`, as on the gateway (same Redis cache and counters, so a key's
 * limit is one over both doors); no key or a bad one is 401 with `WWW-Authenticate`
 * ({@link MCP_AUTH_CHALLENGE}), a key without `view` 403, past the limit 429 with `retry-after`,
 * a body past `BODY_LIMIT_BYTES` 413 (problem documents, as the gateway's). JSON goes through the
 * same edge checks (`parseJsonBody`: depth, `__proto__`, U+0000 → 400 problems); a body that is
 * not JSON, a content type other than JSON, `GET` and `DELETE` are answered by the exchange with
 * its JSON-RPC errors (-32700, 415, 405). A JSON-RPC batch counts each message in the rate limit.
 */
export async function buildHttpDoor(deps: HttpDoorDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: deps.bodyLimitBytes,
    // A request must arrive within the body time-out, as on the gateway (fastify's default has none).
    ...requestDeadlines(deps.bodyTimeoutMs),
    trustProxy: trustProxyOption(deps.trustProxy),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  if (deps.metrics) instrumentRequests(app, deps.metrics);
  app.decorateRequest('mcpCaller', null);
  app.decorateRequest('mcpRawBody', null);
  app.setErrorHandler((err, request, reply) => sendProblem(deps.logger, request, reply, err));
  app.setNotFoundHandler((request, reply) =>
    sendProblem(deps.logger, request, reply, new ArbiterError('not_found', `no route \`${request.method} ${request.url.split('?')[0]}\``)),
  );
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    try {
      checkUrl(request.url);
      done();
    } catch (err) {
      done(err as Error);
    }
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (reply.statusCode === 401) reply.header('www-authenticate', MCP_AUTH_CHALLENGE);
    done(null, payload);
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    request.mcpRawBody = body as string;
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      if (err instanceof ArbiterError && err.code === 'bad_request') done(null, NOT_JSON);
      else done(err as Error, undefined);
    }
  });

  app.route({
    method: ['POST', 'GET', 'DELETE'],
    url: '/mcp',
    onRequest: async (request, reply) => {
      const key = mcpKeyOf(request.headers, request.query);
      const { authenticator } = await deps.auth();
      const caller = await authenticator.byApiKey(key, request.ip);
      request.mcpCaller = { key, principal: caller.principal };
      if (caller.rate !== null) holdToLimit(reply, caller.rate);
      const refusal = capabilityRefusal(caller.principal, 'view');
      if (refusal !== undefined) throw refusal;
    },
    handler: async (request, reply) => {
      const caller = request.mcpCaller as { key: string; principal: Principal };
      const messages = mcpMessageCount(request.body);
      if (messages > 1) {
        const use = await (await deps.auth()).rates.chargeItems(caller.key, caller.principal, messages);
        if (use !== undefined) holdToLimit(reply, use, MCP_BATCH_COUNTED);
      }
      const body = request.body === undefined ? undefined : (request.mcpRawBody ?? JSON.stringify(request.body));
      const res = await deps.exchange(
        {
          method: request.method as McpHttpRequest['method'],
          headers: mcpRequestHeaders(request.headers),
          principal: caller.principal,
          ...(request.method === 'POST' && body !== undefined ? { body } : {}),
        },
        request.id,
        request.body === undefined || request.body === NOT_JSON ? undefined : { value: request.body },
      );
      // The exchange's JSON-RPC text goes out as it is (no serializer, no charset added to its content type).
      return reply
        .status(res.status)
        .headers(mcpResponseHeaders(res.headers))
        .serializer((s: string) => s)
        .send(res.body);
    },
  });
  return app;
}

/** The `x-ratelimit-*` headers of `use`, and past the limit the 429 refusal. */
function holdToLimit(reply: FastifyReply, use: RateUse, counted = ''): void {
  reply.headers(rateLimitHeaders(use));
  if (use.current > use.max) throw limitExceeded(use, counted);
}

/** Anything thrown as the gateway answers it: a problem document with its status (and `retry-after` on 429 and 503). */
function sendProblem(logger: Logger, request: FastifyRequest, reply: FastifyReply, thrown: unknown): FastifyReply {
  const err = toArbiterError(thrown);
  if (err.status >= 500) logger.error({ err: thrown, code: err.code, requestId: request.id }, `mcp request failed: ${err.code}`);
  const answer = problemAnswer(err, String(request.id));
  return reply.status(answer.status).headers(answer.headers).type(PROBLEM_CONTENT_TYPE).send(answer.body);
}

/** Our errors as they are; fastify's body errors with their catalogue codes; anything else `internal` (the cause logged). */
function toArbiterError(err: unknown): ArbiterError {
  if (isArbiterError(err)) return err;
  if (isDatabaseUnavailable(err)) {
    return new ArbiterError('dependency_unavailable', 'the database is unavailable; retry later', undefined, { cause: err });
  }
  switch ((err as Partial<FastifyError>).code) {
    // The identity database and its tables are the gateway's (it creates them when it first
    // starts): this door may start before the gateway ever has.
    case UNDEFINED_DATABASE:
    case UNDEFINED_TABLE:
      return new ArbiterError(
        'dependency_unavailable',
        'the identity database is not set up yet: the gateway creates its tables when it first starts; retry later',
        undefined,
        { cause: err },
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ArbiterError('payload_too_large', 'request body is larger than the limit', undefined, { cause: err });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ArbiterError('bad_request', 'request body size does not match `content-length`', undefined, { cause: err });
    case 'FST_ERR_BAD_URL':
      return new ArbiterError('bad_request', 'the URL is not valid (a bad percent-encoding?)', undefined, { cause: err });
    default:
      return new ArbiterError('internal', 'internal error; the request id is logged with the cause', undefined, { cause: err });
  }
}
