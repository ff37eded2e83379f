/** End-to-end: MCP clients through the gateway: official SDK client, all key forms, auth, redaction. */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let viewKey: string;

const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';

async function connect(opts: { headers?: Record<string, string>; query?: string } = {}): Promise<Client> {
  const url = new URL(`${stack.baseUrl}/mcp${opts.query ?? ''}`);
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: opts.headers ?? {} } });
  const client = new Client({ name: 'arbiter-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function newKey(scopes: string[]): Promise<{ key: string; id: string }> {
  const res = await call(stack, 'POST', '/apikeys', {
    key: stack.adminKey,
    body: { name: `mcp-${scopes.join('-')}-${Date.now()}`, scopes },
  });
  expect(res.status).toBe(201);
  return { key: res.body.key, id: res.body.apiKeyId };
}

beforeAll(async () => {
  // Gateway at debug: its access lines (off the per-request path at info) carry the URLs this file checks are redacted.
  stack = await startStack({ services: ['execution', 'mcp', 'gateway'], serviceEnv: { gateway: { LOG_LEVEL: 'debug' } } });
  viewKey = (await newKey(['view'])).key;
});

afterAll(async () => {
  await stack?.stop();
});

describe('MCP over the gateway with the official SDK client', () => {
  it('initializes and lists the four tools with input and output schemas', async () => {
    const client = await connect({ headers: { 'x-mcp-api-key': viewKey } });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['evaluate_rules', 'explain_rule', 'list_operators', 'validate_rule']);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    await client.close();
  });

  it('accepts the key as x-mcp-api-key, x-api-key and the api_key query parameter', async () => {
    const ways: { headers?: Record<string, string>; query?: string }[] = [
      { headers: { 'x-mcp-api-key': viewKey } },
      { headers: { 'x-api-key': viewKey } },
      { query: `?api_key=${encodeURIComponent(viewKey)}` },
    ];
    for (const opts of ways) {
      const client = await connect(opts);
      const res = await client.callTool({ name: 'validate_rule', arguments: { rule: RULE } });
      expect(res.structuredContent).toEqual({ valid: true, error: null });
      await client.close();
    }
  });

  it('evaluate_rules returns result, outcomes, trace and error:null, with the same JSON as text', async () => {
    const client = await connect({ headers: { 'x-mcp-api-key': viewKey } });
    // One server per request and no session to notify: the tool list never changes under a client.
    expect(client.getServerCapabilities()?.tools?.listChanged).not.toBe(true);
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: RULE, data: { driver: { age: 40 } } } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ result: true, outcomes: { 'a licence': true }, error: null, errorCode: null });
    const text = (res.content as { type: string; text: string }[]).find((c) => c.type === 'text')!.text;
    expect(JSON.parse(text)).toEqual(res.structuredContent);
    await client.close();
  });

  it('reports a parse error as a tool result, and bad arguments as a tool error', async () => {
    const client = await connect({ headers: { 'x-mcp-api-key': viewKey } });
    const parse = await client.callTool({ name: 'evaluate_rules', arguments: { rule: 'A **x** is y if.', data: {} } });
    expect(parse.isError).toBeFalsy();
    expect(parse.structuredContent).toMatchObject({ result: false, outcomes: {} });
    expect((parse.structuredContent as { error: string }).error).toMatch(/^Parse error: line 1, column \d+: /);
    // The same errorCode as POST /run gives for the same rule and data.
    const run = await call(stack, 'POST', '/run', { key: viewKey, body: { rule: RULE, data: {} } });
    const missing = await client.callTool({ name: 'evaluate_rules', arguments: { rule: RULE, data: {} } });
    expect(parse.structuredContent).toMatchObject({ errorCode: 'parse_error' });
    expect(missing.structuredContent).toMatchObject({ error: run.body.error, errorCode: run.body.errorCode });
    expect(run.body.errorCode).toBe('missing_selector');
    const bad = await client.callTool({ name: 'evaluate_rules', arguments: { rule: RULE, data: 'not an object' } });
    expect(bad.isError).toBe(true);
    const explain = await client.callTool({ name: 'explain_rule', arguments: { rule: RULE } });
    expect(explain.structuredContent).toMatchObject({ rule_count: 1, error: null });
    const ops = await client.callTool({ name: 'list_operators', arguments: {} });
    expect(ops.isError).toBeFalsy();
    await client.close();
  });
});

describe('MCP authentication at the gateway', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const mcpHeaders = { accept: 'application/json, text/event-stream' };

  const CHALLENGE = 'ApiKey realm="arbiter", header="x-mcp-api-key"';

  it('refuses no key with 401 before any MCP processing, challenging for an API key (not OAuth)', async () => {
    const res = await call(stack, 'POST', '/mcp', { body: initialize, headers: mcpHeaders });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthenticated');
    expect(res.headers.get('www-authenticate')).toBe(CHALLENGE);
    const notJson = await call(stack, 'POST', '/mcp', { rawBody: '{not json', headers: mcpHeaders });
    expect(notJson.status).toBe(401);
    expect(notJson.headers.get('www-authenticate')).toBe(CHALLENGE);
    const wrong = await call(stack, 'POST', '/mcp', { body: initialize, headers: { ...mcpHeaders, 'x-mcp-api-key': 'arb_wrong' } });
    expect([wrong.status, wrong.headers.get('www-authenticate')]).toEqual([401, CHALLENGE]);
    // The official client without an auth provider reports the 401 as it is (no OAuth discovery is started).
    const refused = await connect().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
    // Only /mcp challenges so: other routes' 401s are unchanged.
    expect((await call(stack, 'POST', '/run', { body: { rule: RULE, data: {} } })).headers.get('www-authenticate')).toBeNull();
  });

  it('answers a body that is not JSON with a JSON-RPC parse error (-32700), not a problem document', async () => {
    const key = { 'x-mcp-api-key': viewKey };
    for (const rawBody of ['{not json', '']) {
      const res = await call(stack, 'POST', '/mcp', { rawBody, headers: { ...mcpHeaders, ...key, 'content-type': 'application/json' } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    }
    const textPlain = await call(stack, 'POST', '/mcp', {
      rawBody: JSON.stringify(initialize),
      headers: { ...mcpHeaders, ...key, 'content-type': 'text/plain' },
    });
    expect(textPlain.status).toBe(415);
    expect(textPlain.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    // JSON past the gateway's edge checks stays a problem document, as on every route.
    const proto = await call(stack, 'POST', '/mcp', { rawBody: '{"__proto__": {}}', headers: { ...mcpHeaders, ...key } });
    expect([proto.status, proto.body.code]).toEqual([400, 'validation_failed']);
  });

  it('refuses a revoked key (401) and a key without view (403)', async () => {
    const revoked = await newKey(['view']);
    expect((await call(stack, 'DELETE', `/apikeys/${revoked.id}`, { key: stack.adminKey })).status).toBe(204);
    const r1 = await call(stack, 'POST', '/mcp', { body: initialize, headers: { ...mcpHeaders, 'x-mcp-api-key': revoked.key } });
    expect(r1.status).toBe(401);
    const auditOnly = await newKey(['audit']);
    const r2 = await call(stack, 'POST', '/mcp', { body: initialize, headers: { ...mcpHeaders, 'x-mcp-api-key': auditOnly.key } });
    expect(r2.status).toBe(403);
  });

  it('never writes a query-parameter key to the logs', async () => {
    const secret = (await newKey(['view'])).key;
    const res = await call(stack, 'POST', `/mcp?api_key=${encodeURIComponent(secret)}`, { body: initialize, headers: mcpHeaders });
    expect(res.status).toBe(200);
    const bad = await call(stack, 'POST', `/mcp?api_key=${encodeURIComponent(`${secret}x`)}`, { body: initialize, headers: mcpHeaders });
    expect(bad.status).toBe(401);
    expect(JSON.stringify(bad.body)).not.toContain(secret);
    // Both requests' log lines arrive from the processes' pipes: wait for them, then look at all of it.
    const logs = await eventually(() => {
      const text = stack.logs('gateway') + stack.logs('mcp');
      expect(text.split('/mcp?api_key=[REDACTED]').length - 1).toBeGreaterThanOrEqual(2);
      return text;
    }, 10_000);
    expect(logs).not.toContain(secret);
  });
});

describe('MCP routing through the bus', () => {
  it('answers GET with 405 (stateless server), and 503 while no mcp replica runs', async () => {
    const get = await call(stack, 'GET', '/mcp', { headers: { 'x-mcp-api-key': viewKey, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    await stack.stopService('mcp');
    const down = await call(stack, 'POST', '/mcp', {
      headers: { 'x-mcp-api-key': viewKey, accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(down.status).toBe(503);
    await stack.startService('mcp');
    const client = await connect({ headers: { 'x-mcp-api-key': viewKey } });
    expect((await client.listTools()).tools).toHaveLength(4);
    await client.close();
  });
});
