import type { Bus } from '@arbiter/service-kit';
import { mcpRequestHeaders, mcpResponseHeaders } from '@arbiter/key-auth';
import { McpHttpResponse, McpSubject, type McpHttpRequest, type Principal } from '@arbiter/contracts';

/**
 * Forwards an authenticated `/mcp` request to the mcp service over the bus (`mcp.http`, queue
 * group `mcp`, so replicas share load and any of them answers). The caller's principal travels
 * with it; the API key never does. No mcp replica → 503, no answer in time → 504 (from the bus).
 */
export class McpForwarder {
  constructor(
    private readonly bus: Pick<Bus, 'request'>,
    private readonly timeoutMs: number,
  ) {}

  async forward(
    principal: Principal,
    request: {
      method: string;
      headers: Record<string, string | string[] | undefined>;
      /** The JSON body's text, as it came (never parsed and written again on the way). */
      body: string | undefined;
      requestId: string;
    },
  ): Promise<McpHttpResponse> {
    const headers = mcpRequestHeaders(request.headers);
    const message: McpHttpRequest = {
      method: request.method as McpHttpRequest['method'],
      headers,
      principal,
      ...(request.method === 'POST' && request.body !== undefined ? { body: request.body } : {}),
    };
    const res = await this.bus.request(McpSubject.http, message, McpHttpResponse, {
      timeoutMs: this.timeoutMs,
      requestId: request.requestId,
    });
    return { ...res, headers: mcpResponseHeaders(res.headers) };
  }
}
