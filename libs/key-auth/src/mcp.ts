import { ArbiterError } from '@arbiter/contracts';

/**
 * The challenge of a 401 on `/mcp` (RFC 9110 §11.6.1 asks one of every 401), on every door that
 * serves it. Not `Bearer`: the key is no OAuth token and there is no protected-resource metadata,
 * so MCP clients that start an OAuth discovery on a Bearer challenge (the MCP spec's authorization
 * flow) are told to send a key instead (services/mcp/README.md, "Authentication").
 */
export const MCP_AUTH_CHALLENGE = 'ApiKey realm="arbiter", header="x-mcp-api-key"';

const KEY_SOURCES = 'send it in `x-mcp-api-key` (recommended), `x-api-key` or the `api_key` query parameter';

/**
 * The API key of an MCP request (docs/api.md#mcp-rules-for-ai-agents), from the first source that
 * has one: `x-mcp-api-key`, `x-api-key`, the `api_key` query parameter. None, or one sent twice:
 * `unauthenticated`.
 */
export function mcpKeyOf(headers: Record<string, unknown>, query: unknown): string {
  const candidates = [headers['x-mcp-api-key'], headers['x-api-key'], (query as Record<string, unknown> | undefined)?.api_key];
  for (const value of candidates) {
    if (Array.isArray(value)) throw new ArbiterError('unauthenticated', `send exactly one API key: ${KEY_SOURCES}`);
    if (typeof value === 'string' && value !== '') return value;
  }
  throw new ArbiterError('unauthenticated', `this endpoint requires an API key: ${KEY_SOURCES}`);
}

/** Messages of a JSON-RPC body: each element of a batch (an array), or the one message. Each counts in the rate limit. */
export function mcpMessageCount(body: unknown): number {
  return Array.isArray(body) ? body.length : 1;
}

/** What a JSON-RPC batch's refusal says counted, past the rate limit. */
export const MCP_BATCH_COUNTED = ' (a JSON-RPC batch counts each message, for the key and for its owner over all their keys)';

/** Request headers of an MCP client that the mcp service reads; credentials are never among them. */
const MCP_REQUEST_HEADERS = ['content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];
/** Answer headers of the mcp service passed back to the client. */
const MCP_RESPONSE_HEADERS = ['content-type', 'mcp-session-id', 'mcp-protocol-version', 'allow', 'cache-control'];

/** The headers of a client's request that an MCP exchange carries (single-valued ones only). */
export function mcpRequestHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of MCP_REQUEST_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

/** The headers of an MCP exchange's answer that go back to the client. */
export function mcpResponseHeaders(headers: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of MCP_RESPONSE_HEADERS) {
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
