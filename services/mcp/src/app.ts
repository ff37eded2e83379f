import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '@arbiter/contracts';
import { redactUrl, type Bus } from '@arbiter/service-kit';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Logger } from './logger.js';
import { authenticate } from './auth.js';
import type { McpConfig } from './config.js';
import { BodyTooLargeError, describeRpc, readBody, RpcCode, sendRpcError } from './http-util.js';
import { createToolServer } from './tools.js';

/** What {@link buildMcpHandler} needs; tests pass a real bus and a capturing logger. */
export interface McpAppDeps {
  bus: Pick<Bus, 'request'>;
  logger: Logger;
  config: Pick<McpConfig, 'MCP_INTERNAL_TOKEN' | 'MCP_TIMEOUT_MS' | 'MCP_MAX_BODY_BYTES'>;
  /** Reported as the MCP server version. */
  version: string;
}

/** The path of the one MCP endpoint. */
export const MCP_PATH = '/mcp';

const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The node:http request listener of the service: `POST /mcp` (Streamable HTTP, stateless: a fresh
 * MCP server and transport per request, so any replica answers), `GET`/`DELETE /mcp` → 405. Every
 * request to `/mcp` is authenticated from the gateway's headers first (401/403 before any MCP
 * processing). One access-log line per request, with the URL redacted and no headers.
 */
export function buildMcpHandler(deps: McpAppDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = process.hrtime.bigint();
    const given = req.headers[REQUEST_ID_HEADER];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const log: AccessLog = { requestId, method: req.method, url: redactUrl(req.url ?? '/') };
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      deps.logger.info({ ...log, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request completed');
    });
    handle(req, res, deps, requestId, log).catch((err: unknown) => {
      deps.logger.error({ err, requestId }, 'request failed');
      sendRpcError(res, 500, RpcCode.internal, 'internal error');
    });
  };
}

/** Fields of the access-log line; never a header or a query value. */
interface AccessLog {
  requestId: string;
  method: string | undefined;
  url: string;
  orgId?: string;
  userId?: string;
  apiKeyId?: string;
  rpc?: string[];
  refused?: string;
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: McpAppDeps, requestId: string, log: AccessLog): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== MCP_PATH) return sendRpcError(res, 404, RpcCode.invalidRequest, `not found: the MCP endpoint is \`POST ${MCP_PATH}\``);

  const auth = authenticate(req.headers, deps.config.MCP_INTERNAL_TOKEN);
  if (!auth.ok) {
    log.refused = auth.code;
    req.resume();
    return sendRpcError(res, auth.status, RpcCode.serverError, `${auth.code}: ${auth.message}`);
  }
  noteCaller(log, auth.principal);

  if (req.method !== 'POST') {
    req.resume();
    return sendRpcError(res, 405, RpcCode.serverError, 'method not allowed: this stateless server accepts only POST', { allow: 'POST' });
  }

  let body: unknown;
  try {
    body = JSON.parse(await readBody(req, deps.config.MCP_MAX_BODY_BYTES));
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      req.resume();
      return sendRpcError(res, 413, RpcCode.invalidRequest, `payload too large: ${err.message}`, { connection: 'close' });
    }
    return sendRpcError(res, 400, RpcCode.parseError, 'parse error: the body is not JSON');
  }
  log.rpc = describeRpc(body);

  const logger = deps.logger.child({ requestId, orgId: auth.principal.orgId, userId: auth.principal.userId });
  const server = createToolServer({
    bus: deps.bus,
    principal: auth.principal,
    logger,
    timeoutMs: deps.config.MCP_TIMEOUT_MS,
    requestId,
    version: deps.version,
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

function noteCaller(log: AccessLog, principal: Principal): void {
  log.orgId = principal.orgId;
  log.userId = principal.userId;
  if (principal.apiKeyId !== undefined) log.apiKeyId = principal.apiKeyId;
}
