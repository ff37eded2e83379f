/**
 * The run lane (docs/design/run-lane.md) answers plain `POST /run` requests over real HTTP exactly
 * as fastify does: the same status, body and headers, success or refusal; each request looked up
 * and counted once; the HTTP metrics counting it. `content-type: application/json; charset=utf-8`
 * never takes the lane, so each case is sent both ways and the answers compared.
 */

import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { StubExecution } from './support/stub-execution.js';
import { LogCapture, memberKey, newOrg, startGateway } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let url: string;
let adminKey: string;
let viewerKey: string;
let noViewKey: string;
const execution = new StubExecution();
const metrics = new Registry();

const LANE = 'application/json';
const FRAMEWORK = 'application/json; charset=utf-8';

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { execution, metrics });
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  adminKey = await newOrg(db, 'acme');
  viewerKey = await memberKey(app, adminKey, 'acme', 'vera', 'viewer', ['view']);
  noViewKey = await memberKey(app, adminKey, 'acme', 'ed', 'editor', ['edit']);
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Headers that differ between any two answers (time, per-request ids and counters). */
const VARYING = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'keep-alive', 'connection']);

async function post(contentType: string, key: string | undefined, body: string, requestId?: string): Promise<Answer> {
  const res = await fetch(`${url}/run`, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      ...(key !== undefined ? { 'x-api-key': key } : {}),
      ...(requestId !== undefined ? { 'x-request-id': requestId } : {}),
    },
    body,
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!VARYING.has(name)) headers[name] = value;
  });
  const text = await res.text();
  const json = JSON.parse(text) as Record<string, unknown>;
  if (typeof json.instance === 'string') json.instance = '<request id>';
  return { status: res.status, headers, body: json };
}

/** Sends `body` through the lane and through fastify; both answers, which must be equal. */
async function bothWays(key: string | undefined, body: string): Promise<Answer> {
  const lane = await post(LANE, key, body);
  const framework = await post(FRAMEWORK, key, body);
  expect(lane).toEqual(framework);
  return lane;
}

const run = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ rule: 'A **driver** gets a licence if it is true.', data: { age: 20 }, ...extra });

describe('the run lane answers as fastify does', () => {
  it('a run: 200 with the answer, the rate-limit headers and the request id it was sent', async () => {
    const answer = await bothWays(adminKey, run());
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-ratelimit-limit']).toBeDefined();
    const res = await fetch(`${url}/run`, {
      method: 'POST',
      headers: { 'content-type': LANE, 'x-api-key': adminKey, 'x-request-id': 'lane-check-1' },
      body: run(),
    });
    expect(res.headers.get('x-request-id')).toBe('lane-check-1');
    expect(execution.calls.at(-1)).toMatchObject({ op: 'run', requestId: 'lane-check-1', trace: true });
  });

  it('the trace switch and reasons travel as on the framework path', async () => {
    await bothWays(adminKey, run({ trace: false }));
    expect(execution.calls.at(-1)).toMatchObject({ op: 'run', trace: false });
    await bothWays(adminKey, run({ reasons: true }));
  });

  it('refusals: unknown key 401, no view right 403, and no view scope on a key 403', async () => {
    expect((await bothWays('not-a-key-at-all-but-long-enough', run())).status).toBe(401);
    expect((await bothWays(noViewKey, run())).status).toBe(403);
    expect((await bothWays(viewerKey, run())).status).toBe(200);
  });

  it('bad bodies: not JSON, a field too many, data not an object, too deep, a __proto__ key — each a 400 with its reasons', async () => {
    for (const body of [
      '{"rule":',
      run({ extra: 1 }),
      JSON.stringify({ rule: 'x', data: [1] }),
      `{"rule":"x","data":{"a":${'['.repeat(300)}${']'.repeat(300)}}}`,
      '{"rule":"x","data":{"o":{"__proto__":{"admin":true}}}}',
      JSON.stringify({ data: {} }),
    ]) {
      const answer = await bothWays(adminKey, body);
      expect(answer.status).toBe(400);
    }
  });

  it('an evaluation that fails answers its problem (503), the evaluation run once', async () => {
    execution.failWith = 'dependency_unavailable';
    try {
      const before = execution.calls.length;
      const lane = await post(LANE, adminKey, run());
      expect(execution.calls.length).toBe(before + 1);
      const framework = await post(FRAMEWORK, adminKey, run());
      expect(lane).toEqual(framework);
      expect(lane.status).toBe(503);
    } finally {
      execution.failWith = undefined;
    }
  });

  it('counts each request once against the rate limit, and in the HTTP metrics', async () => {
    const remaining = async (contentType: string) => {
      const res = await fetch(`${url}/run`, {
        method: 'POST',
        headers: { 'content-type': contentType, 'x-api-key': viewerKey },
        body: run(),
      });
      await res.arrayBuffer();
      return Number(res.headers.get('x-ratelimit-remaining'));
    };
    const first = await remaining(LANE);
    expect(await remaining(LANE)).toBe(first - 1);
    // A refused request the lane handed over is counted once too.
    await post(LANE, viewerKey, '{"rule":');
    expect(await remaining(FRAMEWORK)).toBe(first - 3);
    const count = async () =>
      (await metrics.getSingleMetric('arbiter_http_requests_total')!.get()).values
        .filter((v) => v.labels.route === '/run' && String(v.labels.status) === '200')
        .reduce((n, v) => n + v.value, 0);
    const before = await count();
    await post(LANE, adminKey, run());
    expect(await count()).toBe(before + 1);
  });

  it('past the rate limit: 429 with retry-after, the same either way', async () => {
    const limited = await startGateway(db, redis, { execution, limits: { rateLimitMax: 1, rateLimitPersonMax: 1000 } });
    await limited.listen({ port: 0, host: '127.0.0.1' });
    const at = `http://127.0.0.1:${(limited.server.address() as AddressInfo).port}/run`;
    try {
      const key = await memberKey(limited, await newOrg(db, 'lanelimit'), 'lanelimit', 'rita', 'viewer', ['view']);
      const send = async (contentType: string) => {
        const res = await fetch(at, { method: 'POST', headers: { 'content-type': contentType, 'x-api-key': key }, body: run() });
        return { status: res.status, retry: res.headers.get('retry-after'), code: ((await res.json()) as { code?: string }).code };
      };
      expect((await send(LANE)).status).toBe(200);
      const lane = await send(LANE);
      const framework = await send(FRAMEWORK);
      expect(lane).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(lane.retry).not.toBeNull();
      expect(framework).toMatchObject({ status: 429, code: 'rate_limited' });
    } finally {
      await limited.close();
    }
  });

  it('takes plain runs itself (no fastify request is made for them) and logs them as completed', async () => {
    const logs = new LogCapture();
    const logged = await startGateway(db, redis, { execution, logs, logLevel: 'debug' });
    await logged.listen({ port: 0, host: '127.0.0.1' });
    const at = `http://127.0.0.1:${(logged.server.address() as AddressInfo).port}/run`;
    try {
      for (const [id, contentType] of [
        ['lane-taken', LANE],
        ['framework-taken', FRAMEWORK],
      ]) {
        const res = await fetch(at, {
          method: 'POST',
          headers: { 'content-type': contentType, 'x-api-key': adminKey, 'x-request-id': id },
          body: run(),
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      const lines = logs.lines.map((l) => JSON.parse(l) as { requestId?: string; msg?: string });
      const of = (id: string) => lines.filter((l) => l.requestId === id).map((l) => l.msg);
      expect(of('framework-taken')).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
      expect(of('lane-taken')).toEqual(['request completed']);
    } finally {
      await logged.close();
    }
  });

  it('counts unknown keys per client address as fastify gives it under TRUST_PROXY', async () => {
    const proxied = await startGateway(db, redis, { execution, trustProxy: 1, limits: { authFailuresMax: 2 } });
    await proxied.listen({ port: 0, host: '127.0.0.1' });
    const at = `http://127.0.0.1:${(proxied.server.address() as AddressInfo).port}/run`;
    const send = async (from: string, n: number) => {
      const res = await fetch(at, {
        method: 'POST',
        headers: { 'content-type': LANE, 'x-api-key': `unknown-key-number-${n}-${from}`, 'x-forwarded-for': from },
        body: run(),
      });
      await res.arrayBuffer();
      return res.status;
    };
    try {
      expect([await send('203.0.113.7', 1), await send('203.0.113.7', 2), await send('203.0.113.7', 3)]).toEqual([401, 401, 429]);
      expect(await send('198.51.100.9', 4)).toBe(401);
    } finally {
      await proxied.close();
    }
  });

  it('leaves to fastify what is not a plain run: other routes, a query string, no key, chunked bodies', async () => {
    const noKey = await bothWays(undefined, run());
    expect(noKey.status).toBe(401);
    const withQuery = await fetch(`${url}/run?x=1`, {
      method: 'POST',
      headers: { 'content-type': LANE, 'x-api-key': adminKey },
      body: run(),
    });
    expect(withQuery.status).toBe(200);
    const chunked = await fetch(`${url}/run`, {
      method: 'POST',
      headers: { 'content-type': LANE, 'x-api-key': adminKey },
      body: new Blob([run()]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(200);
  });
});
