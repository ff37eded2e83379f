import { isArbiterError, McpHttpResponse, McpSubject, type McpHttpRequest } from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningMcp } from '../src/service.js';
import {
  captureLogger,
  clientBus,
  connectClient,
  exchange,
  firstText,
  randomPrefix,
  startTestMcp,
  VIEWER,
  type LogCapture,
} from './helpers.js';

// No execution service listens on this prefix: every tool call finds it down.
let mcp: RunningMcp;
let bus: Bus;
let logs: LogCapture;

beforeAll(async () => {
  logs = captureLogger();
  const prefix = randomPrefix();
  mcp = await startTestMcp(prefix, logs.logger);
  bus = await clientBus(prefix);
});

afterAll(async () => {
  await bus?.close();
  await mcp?.close();
});

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function post(body: string, principal = VIEWER): Promise<McpHttpResponse> {
  return exchange(bus, { method: 'POST', headers: HEADERS, body, principal });
}

function rpcError(res: McpHttpResponse): { code: number; message: string } {
  const body = JSON.parse(res.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
  expect(body).toMatchObject({ jsonrpc: '2.0', id: null });
  return body.error;
}

describe('the caller (checked before any MCP processing)', () => {
  it('refuses a message without a principal as a bad request, naming the field', async () => {
    const message = { method: 'POST', headers: HEADERS, body: JSON.stringify(INITIALIZE) };
    const err = await bus.request(McpSubject.http, message, McpHttpResponse).catch((e: unknown) => e);
    expect(isArbiterError(err, 'bad_request')).toBe(true);
    expect((err as Error).message).toMatch(/^invalid request to `mcp\.http`: principal: /);
  });

  it.each([
    ['an unknown role', { ...VIEWER, role: 'root' }],
    ['no org', { userId: 'mara', role: 'viewer' }],
  ])('refuses a principal with %s as a bad request', async (_what, principal) => {
    const message = { method: 'POST', headers: HEADERS, body: JSON.stringify(INITIALIZE), principal };
    const err = await bus.request(McpSubject.http, message, McpHttpResponse).catch((e: unknown) => e);
    expect(isArbiterError(err, 'bad_request')).toBe(true);
  });

  it('refuses a principal without the `view` right with 403, before it reads the body', async () => {
    const res = await post('{not json', { ...VIEWER, scopes: ['edit'] });
    expect(res.status).toBe(403);
    expect(rpcError(res)).toEqual({ code: -32000, message: 'forbidden: the API key needs scope `view`' });
  });

  it('answers a raw initialize with plain JSON and no session id', async () => {
    const res = await post(JSON.stringify(INITIALIZE));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect((JSON.parse(res.body) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('arbiter');
  });
});

describe('the exchange', () => {
  it.each(['GET', 'DELETE'] as const)('answers %s with 405 and a JSON-RPC error', async (method) => {
    const res = await exchange(bus, { method, headers: HEADERS, principal: VIEWER } satisfies McpHttpRequest);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(rpcError(res).code).toBe(-32000);
  });

  it('answers a body that is not JSON with 400 and a JSON-RPC parse error', async () => {
    const res = await post('{not json');
    expect(res.status).toBe(400);
    expect(rpcError(res)).toEqual({ code: -32700, message: 'parse error: the body is not JSON' });
  });

  it('answers an empty JSON-RPC batch with 400 and one Invalid Request error (-32600), not 202', async () => {
    const res = await post('[]');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(rpcError(res)).toEqual({
      code: -32600,
      message: 'Invalid Request: an empty batch (a JSON-RPC batch needs at least one message)',
    });
  });

  it('answers a batch with one answer per request', async () => {
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
    const res = await post(JSON.stringify([call(1), call(2), call(3)]));
    expect(res.status).toBe(200);
    const answers = JSON.parse(res.body) as Array<{ id: number; result: { tools: unknown[] } }>;
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
    for (const a of answers) expect(a.result.tools).toHaveLength(4);
  });
});

describe('execution service down', () => {
  it('turns every tool call into a clear tool error, without hanging', async () => {
    const client = await connectClient(bus);
    try {
      const calls = [
        client.callTool({
          name: 'evaluate_rules',
          arguments: { rule: 'A **user** is adult if the __age__ of the **user** is at least 18.', data: {} },
        }),
        client.callTool({ name: 'validate_rule', arguments: { rule: 'x' } }),
        client.callTool({ name: 'explain_rule', arguments: { rule: 'x' } }),
        client.callTool({ name: 'list_operators', arguments: {} }),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.isError).toBe(true);
        expect(res.structuredContent).toBeUndefined();
        expect(firstText(res)).toMatch(/^execution service unavailable: no service answers `exec\.(eval|validate|explain|operators)`$/);
      }
    } finally {
      await client.close();
    }
  });
});

describe('logs', () => {
  it('name the methods and tools with the request id and caller ids, never arguments', async () => {
    const before = logs.lines.length;
    const secret = 'ARGUMENTSECRET0123456789';
    const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'evaluate_rules', arguments: { rule: secret, data: {} } } };
    const res = await exchange(bus, { method: 'POST', headers: HEADERS, body: JSON.stringify(call), principal: VIEWER }, 'req-log-1');
    expect(res.status).toBe(200);
    const written = logs.lines.slice(before).join('');
    expect(written).toContain('"rpc":["tools/call:evaluate_rules"]');
    expect(written).toContain('"requestId":"req-log-1"');
    expect(written).toContain('"orgId":"acme"');
    expect(written).not.toContain(secret);
  });
});
