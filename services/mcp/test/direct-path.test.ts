/**
 * The direct path of `evaluate_rules` (`src/fast-path.ts`) answers exactly what the SDK's server
 * and transport answer: every case runs through the endpoint with the direct path on and off,
 * against a real execution service, and the replies (status, headers, body bytes) must be equal.
 */
import { McpHttpRequest, type McpHttpResponse } from '@arbiter/contracts';
import { EvalClient, type Bus } from '@arbiter/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpBusEndpoint } from '../src/bus-endpoint.js';
import { directCall } from '../src/fast-path.js';
import { captureLogger, clientBus, randomPrefix, startExecution, VIEWER, type ExecutionProcess } from './helpers.js';

const ADULT = 'A **user** is adult if the __age__ of the **user** is at least 18.';
const BROKEN = 'A **user** is adult if the __age__ of the **user** is at least.';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let execution: ExecutionProcess;
let bus: Bus;
let evals: EvalClient;

beforeAll(async () => {
  const prefix = randomPrefix();
  execution = await startExecution(prefix);
  bus = await clientBus(prefix);
  evals = new EvalClient(bus, { coalesce: true });
});

afterAll(async () => {
  await bus?.close();
  await execution?.stop();
});

function endpoint(direct: boolean) {
  return mcpBusEndpoint({ bus, evals, logger: captureLogger().logger, timeoutMs: 10_000, version: '1.2.3', direct });
}

const callOf = (args: unknown, id: unknown = 1, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'evaluate_rules', arguments: args }, ...extra });

function request(body: string, headers: Record<string, string> = HEADERS): McpHttpRequest {
  return McpHttpRequest.parse({ method: 'POST', headers, body, principal: VIEWER });
}

async function both(req: McpHttpRequest): Promise<[McpHttpResponse, McpHttpResponse]> {
  const ctx = { requestId: 'req-1' } as Parameters<ReturnType<typeof endpoint>['handler']>[1];
  const direct = (await endpoint(true).handler(req, ctx)) as McpHttpResponse;
  const sdk = (await endpoint(false).handler(req, ctx)) as McpHttpResponse;
  return [direct, sdk];
}

const nested = (depth: number): Record<string, unknown> => {
  let v: Record<string, unknown> = { age: 1 };
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

describe('evaluate_rules without the SDK server', () => {
  it.each([
    ['a true result, numeric id', callOf({ rule: ADULT, data: { user: { age: 30 } } }, 7)],
    [
      'a false result, string id, UTF-8 and escapes in the data',
      callOf({ rule: ADULT, data: { user: { age: 3, name: 'Zoë 🎉 "q" \\' } } }, 'a-1'),
    ],
    ['a parse error', callOf({ rule: BROKEN, data: { user: { age: 30 } } })],
    ['a missing property', callOf({ rule: ADULT, data: { user: {} } })],
    ['data the execution service refuses (too deep)', callOf({ rule: ADULT, data: nested(80) })],
    ['extra argument keys (stripped as the SDK strips them)', callOf({ rule: ADULT, data: { user: { age: 18 } }, extra: 1 }, 0)],
  ])('answers %s with the bytes the SDK writes', async (_what, body) => {
    const req = request(body);
    expect(directCall(req, JSON.parse(body))).toBeDefined();
    const [direct, sdk] = await both(req);
    expect(direct).toEqual(sdk);
    expect(direct.status).toBe(200);
  });

  it('takes a supported mcp-protocol-version header', async () => {
    const body = callOf({ rule: ADULT, data: { user: { age: 30 } } });
    const req = request(body, { ...HEADERS, 'mcp-protocol-version': '2025-06-18' });
    expect(directCall(req, JSON.parse(body))).toBeDefined();
    const [direct, sdk] = await both(req);
    expect(direct).toEqual(sdk);
  });

  it.each([
    ['invalid arguments', callOf({ rule: ADULT, data: [1] })],
    ['no arguments', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'evaluate_rules' } })],
    [
      'another tool',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'validate_rule', arguments: { rule: ADULT } } }),
    ],
    [
      'params with _meta',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'evaluate_rules', arguments: { rule: ADULT, data: {} }, _meta: { progressToken: 1 } },
      }),
    ],
    ['a fractional id', callOf({ rule: ADULT, data: {} }, 1.5)],
    ['a null id', callOf({ rule: ADULT, data: {} }, null)],
    ['a batch', `[${callOf({ rule: ADULT, data: {} })}]`],
    ['a wrong jsonrpc version', callOf({ rule: ADULT, data: {} }, 1, { jsonrpc: '1.0' })],
    ['an extra message key', callOf({ rule: ADULT, data: {} }, 1, { extra: true })],
  ])('leaves %s to the SDK', async (_what, body) => {
    const req = request(body);
    expect(directCall(req, JSON.parse(body))).toBeUndefined();
    const [direct, sdk] = await both(req);
    expect(direct).toEqual(sdk);
  });

  it.each([
    ['no accept header', { 'content-type': 'application/json' }],
    ['an accept without event streams', { ...HEADERS, accept: 'application/json' }],
    ['a content type with parameters', { ...HEADERS, 'content-type': 'application/json; charset=utf-8' }],
    ['an unsupported protocol version', { ...HEADERS, 'mcp-protocol-version': '1999-01-01' }],
    ['a session id', { ...HEADERS, 'mcp-session-id': 'abc' }],
  ])('leaves a request with %s to the SDK', async (_what, headers) => {
    const body = callOf({ rule: ADULT, data: { user: { age: 30 } } });
    const req = request(body, headers);
    expect(directCall(req, JSON.parse(body))).toBeUndefined();
    const [direct, sdk] = await both(req);
    expect(direct).toEqual(sdk);
  });
});
