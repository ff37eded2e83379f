/**
 * End-to-end: `/mcp` on the mcp service's own port (`MCP_HTTP_PORT`, where the Kubernetes ingress
 * routes it): the official SDK client, the same authentication, challenge, errors and answers as
 * the gateway's `/mcp`, and one rate limit per key over both doors.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let viewKey: string;

const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';
const HEADERS = { accept: 'application/json, text/event-stream' };
const CHALLENGE = 'ApiKey realm="arbiter", header="x-mcp-api-key"';
/** Requests per key per window on both doors (the admin's person limit is left high: it makes the keys). */
const LIMIT = 40;

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const evaluate = (id: number, age: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'evaluate_rules', arguments: { rule: RULE, data: { driver: { age } } } },
});

/** The mcp service's own port, as `call` takes a stack. */
const direct = () => ({ baseUrl: stack.mcpUrl() });

async function newKey(scopes: string[]): Promise<string> {
  const res = await call(stack, 'POST', '/apikeys', {
    key: stack.adminKey,
    body: { name: `direct-${scopes.join('-')}-${Date.now()}`, scopes },
  });
  expect(res.status).toBe(201);
  return res.body.key as string;
}

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'arbiter-e2e-direct', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.mcpUrl()}/mcp`), { requestInit: { headers } }));
  return client;
}

type Answer = Awaited<ReturnType<typeof call>>;

/** What must be the same on both doors: status, media type, the challenge, and the body without the request's own id. */
function shape(res: Answer) {
  const body = res.body !== null && typeof res.body === 'object' && 'instance' in res.body ? { ...res.body, instance: '…' } : res.body;
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    challenge: res.headers.get('www-authenticate'),
    allow: res.headers.get('allow'),
    body,
  };
}

/** The same request on the gateway and on the mcp service's own port. */
async function bothDoors(method: string, url: string, opts: Parameters<typeof call>[3]): Promise<[Answer, Answer]> {
  return [await call(stack, method, url, opts), await call(direct(), method, url, opts)];
}

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'mcp', 'gateway'],
    mcpHttp: true,
    env: { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_PERSON_MAX: '100000' },
  });
  viewKey = await newKey(['view']);
});

afterAll(async () => {
  await stack?.stop();
});

describe("the mcp service's own /mcp with the official SDK client", () => {
  it('initializes, lists the four tools and evaluates a rule', async () => {
    const client = await connect({ 'x-mcp-api-key': viewKey });
    expect(client.getServerVersion()?.name).toBeTruthy();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['evaluate_rules', 'explain_rule', 'list_operators', 'validate_rule']);
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: RULE, data: { driver: { age: 40 } } } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ result: true, outcomes: { 'a licence': true }, error: null, errorCode: null });
    await client.close();
  });

  it('answers evaluate_rules with the same bytes as the gateway door', async () => {
    const opts = { body: evaluate(7, 30), headers: { ...HEADERS, 'x-mcp-api-key': viewKey } };
    const [viaGateway, viaDirect] = await bothDoors('POST', '/mcp', opts);
    expect(viaDirect.status).toBe(200);
    expect(JSON.stringify(viaDirect.body)).toBe(JSON.stringify(viaGateway.body));
    expect(viaDirect.headers.get('content-type')).toBe(viaGateway.headers.get('content-type'));
    expect(viaDirect.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
    expect(viaDirect.headers.get('x-request-id')).toBeTruthy();
  });
});

describe("the mcp service's own port, operated", () => {
  it('counts its requests on the ops port, by route and status, as the gateway does', async () => {
    expect((await call(direct(), 'POST', '/mcp', { body: initialize, headers: { ...HEADERS, 'x-mcp-api-key': viewKey } })).status).toBe(
      200,
    );
    const text = await (await fetch(`${stack.opsUrl('mcp')}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('arbiter_http_requests_total{') && l.includes('route="/mcp"') && l.includes('status="200"'));
    expect(line, text.slice(0, 2000)).toBeDefined();
    expect(line).toContain('service="mcp"');
    expect(Number(line!.split(' ').at(-1))).toBeGreaterThan(0);
  });
});

describe("authentication on the mcp service's own /mcp", () => {
  it('refuses a missing key with 401 and the API-key challenge, as the gateway does', async () => {
    const [viaGateway, viaDirect] = await bothDoors('POST', '/mcp', { body: initialize, headers: HEADERS });
    expect(viaDirect.status).toBe(401);
    expect(viaDirect.body.code).toBe('unauthenticated');
    expect(viaDirect.headers.get('www-authenticate')).toBe(CHALLENGE);
    expect(viaDirect.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(shape(viaDirect)).toEqual(shape(viaGateway));
    // The official client without an auth provider reports the 401 as it is.
    const refused = await connect({}).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
  });

  it('refuses a wrong key and a revoked one with 401 and the challenge', async () => {
    const [wrongGateway, wrongDirect] = await bothDoors('POST', '/mcp', {
      body: initialize,
      headers: { ...HEADERS, 'x-mcp-api-key': 'arb_not_a_key_of_this_stack' },
    });
    expect([wrongDirect.status, wrongDirect.body.detail, wrongDirect.headers.get('www-authenticate')]).toEqual([
      401,
      'the API key is not valid',
      CHALLENGE,
    ]);
    expect(shape(wrongDirect)).toEqual(shape(wrongGateway));
    const created = await call(stack, 'POST', '/apikeys', {
      key: stack.adminKey,
      body: { name: `revoked-${Date.now()}`, scopes: ['view'] },
    });
    const revoked = created.body.key as string;
    expect((await call(direct(), 'POST', '/mcp', { body: initialize, headers: { ...HEADERS, 'x-api-key': revoked } })).status).toBe(200);
    expect((await call(stack, 'DELETE', `/apikeys/${created.body.apiKeyId}`, { key: stack.adminKey })).status).toBe(204);
    const after = await call(direct(), 'POST', '/mcp', { body: initialize, headers: { ...HEADERS, 'x-api-key': revoked } });
    expect([after.status, after.body.detail, after.headers.get('www-authenticate')]).toEqual([
      401,
      'the API key has been revoked',
      CHALLENGE,
    ]);
  });

  it('refuses a key whose rights lack view with 403, as the gateway does', async () => {
    const auditOnly = await newKey(['audit']);
    const [viaGateway, viaDirect] = await bothDoors('POST', '/mcp', {
      body: initialize,
      headers: { ...HEADERS, 'x-mcp-api-key': auditOnly },
    });
    expect([viaDirect.status, viaDirect.body.code]).toEqual([403, 'forbidden']);
    expect(viaDirect.body.detail).toMatch(/scope `view`/);
    expect(shape(viaDirect)).toEqual(shape(viaGateway));
  });

  it('takes the key from x-api-key and the api_key query parameter too', async () => {
    const viaHeader = await call(direct(), 'POST', '/mcp', { body: initialize, headers: { ...HEADERS, 'x-api-key': viewKey } });
    expect(viaHeader.status).toBe(200);
    const viaQuery = await call(direct(), 'POST', `/mcp?api_key=${encodeURIComponent(viewKey)}`, { body: initialize, headers: HEADERS });
    expect(viaQuery.status).toBe(200);
    expect(viaQuery.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: expect.any(Object) } });
  });
});

describe("malformed requests on the mcp service's own /mcp", () => {
  const key = () => ({ 'x-mcp-api-key': viewKey });

  it('answers a body that is not JSON, or none, with the JSON-RPC parse error (-32700), as the gateway does', async () => {
    for (const rawBody of ['{not json', '']) {
      const [viaGateway, viaDirect] = await bothDoors('POST', '/mcp', {
        rawBody,
        headers: { ...HEADERS, ...key(), 'content-type': 'application/json' },
      });
      expect(viaDirect.status, JSON.stringify(viaDirect.body)).toBe(400);
      expect(viaDirect.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      expect(shape(viaDirect)).toEqual(shape(viaGateway));
    }
  });

  it('answers another content type (415), GET (405), an empty batch (-32600) and JSON refused at the edge as the gateway does', async () => {
    const cases: Array<[string, Parameters<typeof call>[3], number]> = [
      ['POST', { rawBody: JSON.stringify(initialize), headers: { ...HEADERS, ...key(), 'content-type': 'text/plain' } }, 415],
      ['GET', { headers: { ...HEADERS, ...key() } }, 405],
      ['DELETE', { headers: { ...HEADERS, ...key() } }, 405],
      ['POST', { body: [], headers: { ...HEADERS, ...key() } }, 400],
      ['POST', { rawBody: '{"__proto__": {}}', headers: { ...HEADERS, ...key() } }, 400],
    ];
    for (const [method, opts, status] of cases) {
      const [viaGateway, viaDirect] = await bothDoors(method, '/mcp', opts);
      expect(viaDirect.status, `${method} ${JSON.stringify(viaDirect.body)}`).toBe(status);
      expect(shape(viaDirect)).toEqual(shape(viaGateway));
    }
  });

  it('refuses a body over the body limit with 413, and an unknown path with 404, as problem documents', async () => {
    const big = JSON.stringify({ ...evaluate(1, 1), pad: 'x'.repeat(1024 * 1024) });
    const [viaGateway, viaDirect] = await bothDoors('POST', '/mcp', {
      rawBody: big,
      headers: { ...HEADERS, ...key(), 'content-type': 'application/json' },
    });
    expect([viaDirect.status, viaDirect.body.code]).toEqual([413, 'payload_too_large']);
    expect(shape(viaDirect)).toEqual(shape(viaGateway));
    const unknown = await call(direct(), 'POST', '/run', { body: { rule: RULE, data: {} }, headers: key() });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
    // U+0000 in the URL is refused before anything reads it, as on every gateway route.
    const [nulGateway, nulDirect] = await bothDoors('POST', '/mcp?api_key=%00', { body: initialize, headers: HEADERS });
    expect([nulDirect.status, nulDirect.body.code]).toEqual([400, 'validation_failed']);
    expect(shape(nulDirect)).toEqual(shape(nulGateway));
  });
});

describe('one rate limit per key over both doors', () => {
  /** A batch of `n` evaluate_rules calls: it counts `n` requests. */
  const batchOf = (n: number) => Array.from({ length: n }, (_, i) => evaluate(i + 1, 20));
  const mcp = (at: { baseUrl: string }, key: string, body: unknown) =>
    call(at, 'POST', '/mcp', { body, headers: { ...HEADERS, 'x-mcp-api-key': key } });

  it('refuses on the mcp port a key the gateway door used up', async () => {
    const key = await newKey(['view']);
    const used = await mcp(stack, key, batchOf(LIMIT));
    expect(used.status).toBe(200);
    expect(used.headers.get('x-ratelimit-remaining')).toBe('0');
    const refused = await mcp(direct(), key, initialize);
    expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('refuses on the gateway a key the mcp port used up, on /mcp and on every other route', async () => {
    const key = await newKey(['view']);
    const first = await mcp(direct(), key, initialize);
    expect(first.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1));
    const used = await mcp(direct(), key, batchOf(LIMIT - 1));
    expect(used.status).toBe(200);
    expect(used.headers.get('x-ratelimit-remaining')).toBe('0');
    const refused = await mcp(stack, key, initialize);
    expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
    const run = await call(stack, 'POST', '/run', { key, body: { rule: RULE, data: { driver: { age: 20 } } } });
    expect(run.status).toBe(429);
  });

  it('refuses a batch past the limit on the mcp port, saying each message counted', async () => {
    const key = await newKey(['view']);
    const refused = await mcp(direct(), key, batchOf(LIMIT + 1));
    expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
    expect(refused.body.detail).toMatch(/a JSON-RPC batch counts each message/);
  });
});

describe('the mcp port before the gateway has ever started', () => {
  let alone: Stack | undefined;
  afterAll(async () => {
    await alone?.stop();
  });

  it('answers 503 with retry-after, not 500, while the identity database does not exist yet', async () => {
    alone = await startStack({ services: ['execution', 'mcp'], mcpHttp: true });
    const res = await call({ baseUrl: alone.mcpUrl() }, 'POST', '/mcp', {
      body: initialize,
      headers: { ...HEADERS, 'x-mcp-api-key': `arb_${'x'.repeat(40)}` },
    });
    expect([res.status, res.body.code]).toEqual([503, 'dependency_unavailable']);
    expect(res.body.detail).toMatch(/gateway creates its tables/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
