import type { IncomingMessage, ServerResponse } from 'node:http';

/** JSON-RPC error codes used outside the MCP layer (parse error, and the server-error range). */
export const RpcCode = { parseError: -32700, invalidRequest: -32600, serverError: -32000, internal: -32603 } as const;

/** Answers with a JSON-RPC error object (`id: null`), as the MCP transport does for HTTP-level refusals. */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  rpcCode: number,
  message: string,
  extraHeaders: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: rpcCode, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...extraHeaders }).end(body);
}

/** Thrown by {@link readBody} when the body exceeds the limit. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/** Reads the request body as UTF-8 text, refusing more than `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLargeError(`body is ${declared} bytes: the limit is ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > maxBytes) throw new BodyTooLargeError(`body exceeds the limit of ${maxBytes} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Names of the JSON-RPC methods (and tools) in a parsed body, for the access log; never arguments. */
export function describeRpc(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.slice(0, 10).map((m) => {
    if (m === null || typeof m !== 'object') return '?';
    const { method, params } = m as { method?: unknown; params?: { name?: unknown } };
    if (typeof method !== 'string') return 'response';
    const tool = method === 'tools/call' && typeof params?.name === 'string' ? `:${params.name.slice(0, 64)}` : '';
    return `${method.slice(0, 64)}${tool}`;
  });
}
