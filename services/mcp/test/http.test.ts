import { encodePrincipalHeader, McpHeader } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningMcp } from '../src/start.js';
import {
  captureLogger,
  connectClient,
  firstText,
  gatewayHeaders,
  INTERNAL_TOKEN,
  mcpUrl,
  randomPrefix,
  startTestMcp,
  VIEWER,
  type LogCapture,
} from './helpers.js';

// No execution service listens on this prefix: every tool call finds it down.
let mcp: RunningMcp;
let logs: LogCapture;

beforeAll(async () => {
  logs = captureLogger();
  mcp = await startTestMcp(randomPrefix(), logs.logger);
});

afterAll(async () => {
  await mcp?.stop();
});

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const CALL = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_operators', arguments: {} } };

function post(body: string, headers: Record<string, string>, query = ''): Promise<Response> {
  return fetch(mcpUrl(mcp, query), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

async function rpcError(res: Response): Promise<{ code: number; message: string }> {
  const body = (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
  expect(body).toMatchObject({ jsonrpc: '2.0', id: null });
  return body.error;
}

describe('authentication (before any MCP processing)', () => {
  it('refuses a request without a principal header with 401', async () => {
    const res = await post(JSON.stringify(CALL), { [McpHeader.internalToken]: INTERNAL_TOKEN });
    expect(res.status).toBe(401);
    expect(await rpcError(res)).toEqual({ code: -32000, message: 'unauthenticated: missing or invalid `x-arbiter-principal` header' });
  });

  it('checks the principal before it reads the body: malformed JSON still gets 401, not 400', async () => {
    const res = await post('{not json', { [McpHeader.internalToken]: INTERNAL_TOKEN });
    expect(res.status).toBe(401);
    const withAuth = await post('{not json', gatewayHeaders());
    expect(withAuth.status).toBe(400);
    expect((await rpcError(withAuth)).code).toBe(-32700);
  });

  it.each([
    ['not base64url', '***'],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['not a principal', Buffer.from(JSON.stringify({ orgId: 'acme' })).toString('base64url')],
  ])('refuses a principal header that is %s with 401', async (_what, value) => {
    const res = await post(JSON.stringify(INITIALIZE), { [McpHeader.principal]: value, [McpHeader.internalToken]: INTERNAL_TOKEN });
    expect(res.status).toBe(401);
  });

  it('refuses a wrong or missing internal token with 401', async () => {
    const wrong = await post(JSON.stringify(INITIALIZE), gatewayHeaders(VIEWER, 'wrong-token-wrong-token'));
    expect(wrong.status).toBe(401);
    const error = await rpcError(wrong);
    expect(error.message).toBe('unauthenticated: missing or wrong `x-arbiter-internal-token` header');
    expect(error.message).not.toContain('wrong-token');
    const missing = await post(JSON.stringify(INITIALIZE), gatewayHeaders(VIEWER, null));
    expect(missing.status).toBe(401);
  });

  it('refuses a principal without the `view` right with 403', async () => {
    const res = await post(JSON.stringify(INITIALIZE), gatewayHeaders({ ...VIEWER, scopes: ['edit'] }));
    expect(res.status).toBe(403);
    expect((await rpcError(res)).message).toBe('forbidden: the API key needs scope `view`');
  });

  it('makes the official client fail to connect without a principal', async () => {
    await expect(connectClient(mcpUrl(mcp), { [McpHeader.internalToken]: INTERNAL_TOKEN })).rejects.toMatchObject({ code: 401 });
  });

  it('answers an authenticated raw initialize with plain JSON and no session id', async () => {
    const res = await post(JSON.stringify(INITIALIZE), gatewayHeaders());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = (await res.json()) as { result: { serverInfo: { name: string } } };
    expect(body.result.serverInfo.name).toBe('arbiter');
  });
});

describe('HTTP surface', () => {
  it.each(['GET', 'DELETE'])('answers %s /mcp with 405 and a JSON-RPC error', async (method) => {
    const res = await fetch(mcpUrl(mcp), { method, headers: gatewayHeaders() });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect((await rpcError(res)).code).toBe(-32000);
  });

  it('answers other paths with 404', async () => {
    const res = await fetch(new URL(`http://127.0.0.1:${mcp.port}/other`), { method: 'POST', headers: gatewayHeaders() });
    expect(res.status).toBe(404);
  });

  it('refuses a body over the limit with 413', async () => {
    const res = await post(JSON.stringify({ ...CALL, pad: 'x'.repeat(1024 * 1024) }), gatewayHeaders());
    expect(res.status).toBe(413);
  });

  it('echoes a caller request id', async () => {
    const res = await post(JSON.stringify(INITIALIZE), { ...gatewayHeaders(), 'x-request-id': 'req-123' });
    expect(res.headers.get('x-request-id')).toBe('req-123');
  });
});

describe('execution service down', () => {
  it('turns every tool call into a clear tool error, without hanging', async () => {
    const client = await connectClient(mcpUrl(mcp), gatewayHeaders());
    try {
      const calls = [
        client.callTool({ name: 'evaluate_rules', arguments: { rule: 'A **user** is adult if the __age__ of the **user** is at least 18.', data: {} } }),
        client.callTool({ name: 'validate_rule', arguments: { rule: 'x' } }),
        client.callTool({ name: 'explain_rule', arguments: { rule: 'x' } }),
        client.callTool({ name: 'list_operators', arguments: {} }),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.isError).toBe(true);
        expect(res.structuredContent).toBeUndefined();
        expect(firstText(res)).toMatch(/^execution service unavailable: no service answers `exec\.(run|validate|explain|operators)`$/);
      }
    } finally {
      await client.close();
    }
  });
});

describe('logs', () => {
  it('never contain the api_key query value or key headers', async () => {
    const secrets = {
      query: 'QUERYSECRET0123456789abcdef',
      mcpHeader: 'MCPHEADERSECRET0123456789',
      apiHeader: 'APIHEADERSECRET0123456789',
      bearer: 'BEARERSECRET0123456789',
    };
    const keyHeaders = {
      'x-mcp-api-key': secrets.mcpHeader,
      'x-api-key': secrets.apiHeader,
      authorization: `Bearer ${secrets.bearer}`,
    };
    const query = `?api_key=${secrets.query}&x=1`;
    const before = logs.lines.length;

    // A full client session (initialize, tools/list, a tool call that fails downstream and logs a warning) ...
    const client = await connectClient(mcpUrl(mcp, query), { ...gatewayHeaders(), ...keyHeaders });
    await client.listTools();
    await client.callTool({ name: 'evaluate_rules', arguments: { rule: 'x', data: {} } });
    await client.close();
    // ... and refusals: no principal, wrong token, bad body, wrong method.
    await post(JSON.stringify(CALL), keyHeaders, query);
    await post(JSON.stringify(CALL), { ...gatewayHeaders(VIEWER, 'nope-nope-nope-nope'), ...keyHeaders }, query);
    await post('{', { ...gatewayHeaders(), ...keyHeaders }, query);
    await fetch(mcpUrl(mcp, query), { method: 'GET', headers: { ...gatewayHeaders(), ...keyHeaders } });

    const written = logs.lines.slice(before).join('');
    expect(logs.lines.length - before).toBeGreaterThanOrEqual(8);
    for (const secret of Object.values(secrets)) expect(written).not.toContain(secret);
    expect(written).toContain('api_key=[REDACTED]&x=1');
    expect(written).toContain('"refused":"unauthenticated"');
    expect(written).toContain('"rpc":["tools/call:evaluate_rules"]');
    expect(written).toContain('execution request failed');
    // The principal header is not a key, but it is not logged either: only its ids are.
    expect(written).not.toContain(encodePrincipalHeader(VIEWER));
    expect(written).toContain('"apiKeyId":"key-1"');
  });
});
