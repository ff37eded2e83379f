/** JSON-RPC error codes used outside the MCP layer (parse error, and the server-error range). */
export const RpcCode = { parseError: -32700, invalidRequest: -32600, serverError: -32000, internal: -32603 } as const;

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
