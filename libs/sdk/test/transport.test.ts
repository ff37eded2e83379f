/**
 * The client's HTTP side against a small scripted HTTP server (a real socket, answers chosen per
 * test): problems become one ArbiterError, retries happen only where safe and honour
 * `retry-after`, time-outs and unreachable servers are errors of their own.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Arbiter, ArbiterError } from '../src/index.js';
import { retryAfterMs } from '../src/http.js';

type Reply = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let server: Server;
let baseUrl: string;
let script: Reply[] = [];
let seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string; at: number }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() });
      const reply = script.shift();
      if (reply) reply(req, res, body);
      else json(500, { code: 'internal', detail: 'unscripted' })(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  script = [];
  seen = [];
});

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const problem = (status: number, code: string, detail: string, headers: Record<string, string> = {}) =>
  json(status, { type: `urn:arbiter:error:${code}`, title: code, status, detail, code, instance: 'req-from-server' }, headers);

const client = (opts: Partial<ConstructorParameters<typeof Arbiter>[0]> = {}) =>
  new Arbiter({ baseUrl, apiKey: 'arb_test', retries: { baseDelayMs: 5, maxDelayMs: 20 }, ...opts } as ConstructorParameters<
    typeof Arbiter
  >[0]);

async function failure(call: Promise<unknown>): Promise<ArbiterError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ArbiterError) return err;
    throw err;
  }
  throw new Error('expected an ArbiterError');
}

describe('problems', () => {
  it.each([
    [401, 'unauthenticated'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [409, 'version_immutable'],
    [413, 'payload_too_large'],
    [422, 'cannot_publish'],
  ])('a %i problem is one ArbiterError with status, code, detail and the request id', async (status, code) => {
    script = [problem(status, code, `it went ${code}`)];
    const err = await failure(client().policies.get('p1'));
    expect(err).toMatchObject({
      name: 'ArbiterError',
      status,
      code,
      detail: `it went ${code}`,
      message: `it went ${code}`,
      requestId: 'req-from-server',
    });
    expect(seen).toHaveLength(1);
  });

  it('keeps the reasons of a 422 and names the request id it sent when the body names none', async () => {
    script = [
      json(422, { code: 'cannot_publish', detail: 'no', errors: [{ code: 'test_failed', message: 'a test failed', path: 'tests.0' }] }),
    ];
    const err = await failure(client().policies.update('p1', { status: 'published' }));
    expect(err.errors).toEqual([{ code: 'test_failed', message: 'a test failed', path: 'tests.0' }]);
    expect(err.requestId).toBe(seen[0].headers['x-request-id']);
  });

  it('an answer that is not a problem gets the code of its status', async () => {
    script = [
      (_req, res) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html>bad gateway</html>');
      },
    ];
    const err = await failure(client({ retries: { max: 0 } }).me());
    expect(err).toMatchObject({ status: 503, code: 'dependency_unavailable' });
    expect(err.detail).toContain('HTTP 502');
  });
});

describe('retries', () => {
  it('a 429 is sent again after its retry-after, whatever the method', async () => {
    script = [problem(429, 'rate_limited', 'slow down', { 'retry-after': '1' }), json(201, { policyId: 'p' })];
    const created = await client().policies.create({ name: 'x', rule: 'r' });
    expect(created).toEqual({ policyId: 'p' });
    expect(seen.map((s) => s.method)).toEqual(['POST', 'POST']);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(900);
    // the same request id on both attempts
    expect(seen[1].headers['x-request-id']).toBe(seen[0].headers['x-request-id']);
  });

  it('a retry-after longer than maxRetryAfterMs is not waited for', async () => {
    script = [problem(429, 'rate_limited', 'later', { 'retry-after': '120' })];
    const err = await failure(client().policies.list().toArray());
    expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(seen).toHaveLength(1);
  });

  it('a 503 is retried for GETs and runs, never for changes', async () => {
    script = [problem(503, 'dependency_unavailable', 'down'), json(200, { items: [{ name: 'a' }], nextCursor: null })];
    expect(await client().policies.list().toArray()).toEqual([{ name: 'a' }]);
    script = [problem(503, 'dependency_unavailable', 'down'), json(200, { result: true })];
    expect(await client().policies.run('b1', {})).toEqual({ result: true });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /policies',
      'GET /policies',
      'POST /run/policy/b1',
      'POST /run/policy/b1',
    ]);
    seen = [];
    script = [problem(503, 'dependency_unavailable', 'down'), json(201, {})];
    expect(await failure(client().policies.create({ name: 'x', rule: 'r' }))).toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
  });

  it('gives up after `max` retries with the last problem', async () => {
    script = [
      problem(503, 'dependency_unavailable', 'one'),
      problem(503, 'dependency_unavailable', 'two'),
      problem(503, 'dependency_unavailable', 'three'),
    ];
    expect(await failure(client({ retries: { max: 2, baseDelayMs: 1 } }).me())).toMatchObject({ detail: 'three' });
    expect(seen).toHaveLength(3);
  });

  it('reads retry-after in seconds or as a date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(new Date(Date.now() + 60_000).toUTCString())).toBeGreaterThan(50_000);
  });
});

describe('time-outs and unreachable servers', () => {
  it('an answer later than timeoutMs is a `timeout` error', async () => {
    script = [(_req, res) => setTimeout(() => json(200, {})(_req, res, ''), 500)];
    const err = await failure(client({ timeoutMs: 100, retries: { max: 0 } }).me());
    expect(err).toMatchObject({ status: 504, code: 'timeout' });
  });

  it('a server that cannot be reached is `dependency_unavailable`; safe requests are retried first', async () => {
    const err = await failure(new Arbiter({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', retries: { max: 1, baseDelayMs: 1 } }).me());
    expect(err).toMatchObject({ status: 503, code: 'dependency_unavailable' });
    expect(err.detail).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:9\/me: /);
  });

  it('an aborted signal stops at once', async () => {
    // The server takes the request before the abort, so a late arrival cannot eat the next test's script.
    const { promise: arrived, resolve: arrive } = Promise.withResolvers<void>();
    script = [
      (_req, res) => {
        arrive();
        setTimeout(() => json(200, {})(_req, res, ''), 300);
      },
    ];
    const controller = new AbortController();
    const pending = client().audit.export({}, { signal: controller.signal }).next();
    await arrived;
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});

describe('requests', () => {
  it('sends the API key, or a bearer token asked for each request; never both', async () => {
    script = [json(200, {}), json(200, {})];
    await client().me();
    let n = 0;
    await new Arbiter({ baseUrl, token: async () => `t${++n}` }).me();
    expect(seen[0].headers['x-api-key']).toBe('arb_test');
    expect(seen[1].headers.authorization).toBe('Bearer t1');
    expect(() => new Arbiter({ baseUrl } as never)).toThrow('give exactly one of `apiKey` and `token`');
    expect(() => new Arbiter({ baseUrl: 'ftp://x', apiKey: 'k' })).toThrow('baseUrl must be http:// or https://');
  });

  it('walks cursor pages lazily, with filters and page size', async () => {
    script = [json(200, { items: [1, 2], nextCursor: 'c1' }), json(200, { items: [3], nextCursor: null })];
    const seenItems: unknown[] = [];
    for await (const item of client().policies.list({ status: 'published', pageSize: 2 })) seenItems.push(item);
    expect(seenItems).toEqual([1, 2, 3]);
    expect(seen.map((s) => s.url)).toEqual(['/policies?status=published&limit=2', '/policies?status=published&limit=2&cursor=c1']);
  });

  it('tells the outcome of a PUT by its status', async () => {
    script = [json(200, { policyId: 'd' }), json(201, { policyId: 'v' }), json(202, { state: 'pending_approval' })];
    const api = client().policies;
    expect(await api.update('d', { status: 'draft', name: 'n' })).toEqual({ outcome: 'updated', record: { policyId: 'd' } });
    expect(await api.update('d', { status: 'published' })).toEqual({ outcome: 'published', record: { policyId: 'v' } });
    expect(await api.update('d', { status: 'published' })).toEqual({ outcome: 'submitted', review: { state: 'pending_approval' } });
  });

  it('streams the audit export and throws an error line', async () => {
    script = [
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write('{"eventId":"e1"}\n{"eventId":"e2"}\n');
        res.end('{"error":{"code":"dependency_unavailable","status":503,"detail":"audit went away","instance":"r9"}}\n');
      },
    ];
    const got: string[] = [];
    const err = await failure(
      (async () => {
        for await (const e of client().audit.export({ kind: ['executed'] })) got.push(e.eventId);
      })(),
    );
    expect(got).toEqual(['e1', 'e2']);
    expect(err).toMatchObject({ code: 'dependency_unavailable', detail: 'audit went away', requestId: 'r9' });
    expect(seen[0].url).toBe('/audit/export?kind=executed');
  });
});
