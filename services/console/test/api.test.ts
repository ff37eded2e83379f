/**
 * The console's client is the SDK's (`@arbiter/sdk/client`), signed with the tab's credentials
 * and never sending a call twice; checked against a small scripted HTTP server (a real socket).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ArbiterClient, ArbiterError } from '@arbiter/sdk/client';
import { consoleClient, problemText } from '../src/lib/api.js';

type Reply = (res: ServerResponse) => void;
let server: Server;
let baseUrl: string;
let script: Reply[] = [];
let seen: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      (script.shift() ?? json(500, { code: 'internal', detail: 'unscripted' }))(res);
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
  (status: number, body: unknown): Reply =>
  (res) => {
    res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' });
    res.end(JSON.stringify(body));
  };

const ME = { orgId: 'o1', userId: 'u1', role: 'admin', authMethod: 'apiKey' };

describe('the console client', () => {
  it('is the SDK client, sending an API key as `x-api-key` and a pasted token as a bearer', async () => {
    script = [json(200, ME), json(200, ME)];
    const byKey = consoleClient({ kind: 'apiKey', value: 'arb_x' }, baseUrl);
    expect(byKey).toBeInstanceOf(ArbiterClient);
    expect(await byKey.me()).toEqual(ME);
    await consoleClient({ kind: 'bearer', value: 'eyJ' }, baseUrl).me();
    expect(seen.map((s) => [s.url, s.headers['x-api-key'], s.headers.authorization])).toEqual([
      ['/me', 'arb_x', undefined],
      ['/me', undefined, 'Bearer eyJ'],
    ]);
  });

  it('a refused credential is an `unauthenticated` error showing the API’s detail', async () => {
    script = [json(401, { code: 'unauthenticated', detail: 'unknown or revoked API key' })];
    const err = await consoleClient({ kind: 'apiKey', value: 'arb_gone' }, baseUrl)
      .me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArbiterError);
    expect(err).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(problemText(err)).toBe('unknown or revoked API key');
  });

  it('sends nothing twice: a refused change and a failed read are shown, not retried', async () => {
    script = [
      json(429, { code: 'rate_limited', detail: 'too many requests' }),
      json(503, { code: 'dependency_unavailable', detail: 'registry unavailable' }),
    ];
    const api = consoleClient({ kind: 'apiKey', value: 'arb_x' }, baseUrl);
    await expect(api.policies.create({ name: 'n', rule: 'r' })).rejects.toThrow('too many requests');
    await expect(api.policies.list({ pageSize: 20 }).page()).rejects.toThrow('registry unavailable');
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /policy', 'GET /policies?limit=20']);
  });

  it('an API that cannot be reached is a failure saying so', async () => {
    const err = await consoleClient({ kind: 'apiKey', value: 'arb_x' }, 'http://127.0.0.1:9')
      .me()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'dependency_unavailable' });
    expect(problemText(err)).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:9\/me: /);
  });
});
