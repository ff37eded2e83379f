import { EvaluateRulesArgs, EvaluateRulesResult, McpToolName, type McpHttpRequest, type McpHttpResponse } from '@arbiter/contracts';
import { getParseErrorMessage } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { ErrorCode, McpError, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * The common MCP exchange, answered without the SDK's per-request server and transport: a single
 * JSON-RPC `tools/call` of `evaluate_rules` with valid arguments and the headers the Streamable
 * HTTP transport accepts. {@link directCall} picks such a request out (anything else, however
 * slightly different, goes to the SDK, which stays the reference), {@link directAnswer} writes the
 * bytes the SDK writes for it: `{"result":…,"jsonrpc":"2.0","id":…}`, 200, `content-type:
 * application/json`. The SDK cannot serve this more cheaply itself: a stateless transport refuses
 * a second request, and a server is bound to one transport. Tests compare both paths' answers.
 */

/** A request the direct path serves: its JSON-RPC id and the tool's arguments as the SDK would pass them. */
export interface DirectCall {
  readonly id: string | number;
  readonly args: EvaluateRulesArgs;
}

const MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAM_KEYS = new Set(['name', 'arguments']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key of Object.keys(value)) if (!keys.has(key)) return false;
  return true;
}

/** The headers the transport checks, as it checks them (a content type with parameters goes to the SDK). */
function headersPass(headers: Record<string, string>): boolean {
  const accept = headers['accept'];
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (headers['content-type']?.trim().toLowerCase() !== 'application/json') return false;
  if (headers['mcp-session-id'] !== undefined) return false;
  const version = headers['mcp-protocol-version'];
  return version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

/** `parsed` (the request's JSON body) as a call the direct path serves, or undefined for the SDK. */
export function directCall(req: McpHttpRequest, parsed: unknown): DirectCall | undefined {
  if (req.method !== 'POST' || !headersPass(req.headers)) return undefined;
  if (!isPlainObject(parsed) || !onlyKeys(parsed, MESSAGE_KEYS)) return undefined;
  const { jsonrpc, id, method, params } = parsed;
  if (jsonrpc !== '2.0' || method !== 'tools/call') return undefined;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  if (!isPlainObject(params) || !onlyKeys(params, PARAM_KEYS) || params['name'] !== McpToolName.evaluateRules) return undefined;
  const args = params['arguments'];
  if (!isPlainObject(args)) return undefined;
  const checked = EvaluateRulesArgs.safeParse(args);
  return checked.success ? { id, args: checked.data } : undefined;
}

/**
 * The SDK's answer to `call` given the tool's result: the result as its schema checks it (an
 * output that fails `EvaluateRulesResult` becomes the SDK's tool error), in the SDK's key order.
 */
export function directAnswer(call: DirectCall, result: CallToolResult): McpHttpResponse {
  let out: CallToolResult = result;
  if (!result.isError) {
    const checked = EvaluateRulesResult.safeParse(result.structuredContent);
    if (!checked.success) {
      const message = `Output validation error: Invalid structured content for tool ${McpToolName.evaluateRules}: ${getParseErrorMessage(checked.error)}`;
      out = { content: [{ type: 'text', text: new McpError(ErrorCode.InvalidParams, message).message }], isError: true };
    }
  }
  const ordered = out.isError
    ? { content: out.content, isError: out.isError }
    : { content: out.content, structuredContent: out.structuredContent };
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: ordered, jsonrpc: '2.0', id: call.id }),
  };
}
