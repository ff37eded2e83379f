import { defineEndpoint, type Bus, type EvalClient } from '@arbiter/service-kit';
import { hasCapability, McpHttpRequest, McpSubject, type McpHttpResponse } from '@arbiter/contracts';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Logger } from 'pino';
import { describeRpc, RpcCode } from './rpc.js';
import { directAnswer, directCall } from './fast-path.js';
import { createToolServer, evaluateRules, type ToolDeps } from './tools.js';

/** What an MCP exchange needs (the `mcp.http` endpoint, the service's own port). */
export interface McpBusDeps {
  bus: Pick<Bus, 'request'>;
  evals: Pick<EvalClient, 'one'>;
  logger: Logger;
  timeoutMs: number;
  version: string;
  /** Serve a plain `evaluate_rules` call without the SDK's per-request server (`fast-path.ts`); default on. */
  direct?: boolean;
}

function rpcError(status: number, code: number, message: string, extra: Record<string, string> = {}): McpHttpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', ...extra },
    body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }),
  };
}

/**
 * One MCP exchange, whichever door it came through (the bus from the gateway, or this service's own
 * port): served by the SDK's Streamable HTTP transport (web-standard flavour, stateless, JSON
 * responses), a fresh server per request, so any replica answers. A plain `evaluate_rules` call,
 * the common one, is answered directly with the same bytes (`fast-path.ts`): the SDK's per-request
 * server and transport cost more than the call. The caller's `view` right is checked here too.
 */
export async function serveExchange(
  deps: McpBusDeps,
  req: McpHttpRequest,
  requestId: string,
  /** `req.body` already parsed by the door that read it (not parsed again); absent: parsed here. */
  parsedBody?: { value: unknown },
): Promise<McpHttpResponse> {
  if (!hasCapability(req.principal, 'view')) return rpcError(403, RpcCode.serverError, 'forbidden: the API key needs scope `view`');
  if (req.method !== 'POST') {
    return rpcError(405, RpcCode.serverError, 'method not allowed: this stateless server accepts only POST', { allow: 'POST' });
  }
  let parsed: unknown;
  if (parsedBody !== undefined && req.body !== undefined) parsed = parsedBody.value;
  else {
    try {
      parsed = JSON.parse(req.body ?? '');
    } catch {
      return rpcError(400, RpcCode.parseError, 'parse error: the body is not JSON');
    }
  }
  // JSON-RPC 2.0 answers an empty batch with one Invalid Request error; the SDK's transport
  // would take it for a batch of notifications (202, no body).
  if (Array.isArray(parsed) && parsed.length === 0) {
    return rpcError(400, RpcCode.invalidRequest, 'Invalid Request: an empty batch (a JSON-RPC batch needs at least one message)');
  }
  const toolDeps: ToolDeps = {
    bus: deps.bus,
    evals: deps.evals,
    principal: req.principal,
    logger: deps.logger,
    timeoutMs: deps.timeoutMs,
    requestId,
    version: deps.version,
  };
  const direct = deps.direct === false ? undefined : directCall(req, parsed);
  if (direct !== undefined) {
    const answer = directAnswer(direct, await evaluateRules(toolDeps)(direct.args));
    if (deps.logger.isLevelEnabled('debug')) {
      deps.logger.debug({ requestId, orgId: req.principal.orgId, rpc: describeRpc(parsed), status: answer.status }, 'mcp request');
    }
    return answer;
  }
  const server = createToolServer(toolDeps);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    // No body on the Request: the transport takes the already parsed one, and a body would
    // cost a web stream per call that nothing reads.
    const response = await transport.handleRequest(new Request('http://mcp.internal/mcp', { method: 'POST', headers: req.headers }), {
      parsedBody: parsed,
    });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = await response.text();
    if (deps.logger.isLevelEnabled('debug')) {
      deps.logger.debug({ requestId, orgId: req.principal.orgId, rpc: describeRpc(parsed), status: response.status }, 'mcp request');
    }
    return { status: response.status, headers, body };
  } finally {
    await transport.close();
    await server.close();
  }
}

/**
 * `mcp.http`: one MCP exchange forwarded by the gateway over the bus with the caller's principal
 * ({@link serveExchange}).
 */
export function mcpBusEndpoint(deps: McpBusDeps) {
  return defineEndpoint({
    subject: McpSubject.http,
    request: McpHttpRequest,
    handler: (req, ctx): Promise<McpHttpResponse> => serveExchange(deps, req, ctx.requestId ?? 'bus'),
  });
}
