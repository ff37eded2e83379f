import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createTestDatabase, createTestRedis, REDIS_URL, type TestDatabase, type TestRedis } from './support/servers.js';
import { StubExecution } from './support/stub-execution.js';
import { hashApiKey, installationId } from '@arbiter/key-auth';
import { LogCapture, newOrg, problem, signToken, startGateway, withKey, withToken } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;
const execution = new StubExecution();
const logs = new LogCapture();

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { execution, logs });
  adminKey = await newOrg(db, 'acme');
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

describe('request bodies', () => {
  it('answers 413 for a body over the limit (1 MiB)', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/run',
      headers: withKey(adminKey),
      payload: { rule: 'x'.repeat(1024 * 1024 + 1), data: {} },
    });
    expect(problem(res)).toMatchObject({ status: 413, code: 'payload_too_large', detail: 'request body is larger than the limit' });
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/run',
      headers: { ...withKey(adminKey), 'content-type': 'application/json' },
      payload: '{"rule": "x", "data": {',
    });
    expect(problem(res)).toMatchObject({ status: 400, code: 'bad_request', detail: 'request body is not valid JSON' });
  });

  it('answers 400 for an empty JSON body', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/run',
      headers: { ...withKey(adminKey), 'content-type': 'application/json' },
      payload: '',
    });
    expect(problem(res)).toMatchObject({ status: 400, code: 'bad_request' });
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('answers 415 for content type %s', async (type) => {
    const res = await app.inject({
      method: 'POST',
      url: '/run',
      headers: { ...withKey(adminKey), 'content-type': type },
      payload: 'rule=x',
    });
    expect(problem(res)).toMatchObject({ status: 415, code: 'unsupported_media_type' });
  });

  it('answers 400 listing every failing field: unknown fields, wrong types, missing fields', async () => {
    const res = await app.inject({ method: 'POST', url: '/run', headers: withKey(adminKey), payload: { rule: 42, extra: true, also: 1 } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ code: 'validation_failed', status: 400, title: 'Validation failed' });
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'body.rule', code: 'invalid_type' }),
        expect.objectContaining({ path: 'body.data', code: 'invalid_type' }),
        expect.objectContaining({ path: 'body.extra', code: 'unrecognized_key' }),
        expect.objectContaining({ path: 'body.also', code: 'unrecognized_key' }),
      ]),
    );
    expect(body.detail).toMatch(/^request body is invalid: `body\.\w+`: /);
  });

  it.each([
    ['a data array', { rule: 'x', data: [] }, 'body.data'],
    ['a missing rule', { data: {} }, 'body.rule'],
  ])('answers 400 for %s', async (_what, payload, path) => {
    const res = await app.inject({ method: 'POST', url: '/run', headers: withKey(adminKey), payload });
    expect(res.json().errors).toContainEqual(expect.objectContaining({ path }));
  });

  it('answers 400 for a bad query or path parameter, naming it', async () => {
    const q = await app.inject({ method: 'GET', url: '/users?limit=500', headers: withKey(adminKey) });
    expect(q.json()).toMatchObject({
      status: 400,
      code: 'validation_failed',
      errors: [expect.objectContaining({ path: 'querystring.limit' })],
    });
    const p = await app.inject({ method: 'DELETE', url: '/apikeys/not-a-uuid', headers: withKey(adminKey) });
    expect(p.json()).toMatchObject({
      status: 400,
      code: 'validation_failed',
      errors: [expect.objectContaining({ path: 'params.apiKeyId' })],
    });
  });
});

describe('problem documents and request ids', () => {
  it('answers unknown routes with a 404 problem', async () => {
    const res = await app.inject({ method: 'GET', url: '/nope?x=1' });
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toEqual({
      type: 'urn:arbiter:error:not_found',
      title: 'Not found',
      status: 404,
      detail: 'no route `GET /nope`',
      code: 'not_found',
      instance: res.headers['x-request-id'],
    });
  });

  it('echoes a caller x-request-id, and uses it as the problem instance', async () => {
    const res = await app.inject({ method: 'GET', url: '/me', headers: { 'x-request-id': 'trace-123.abc' } });
    expect(res.headers['x-request-id']).toBe('trace-123.abc');
    expect(res.json().instance).toBe('trace-123.abc');
  });

  it('generates a request id when none (or an unsafe one) is sent', async () => {
    const a = await app.inject({ method: 'GET', url: '/healthz' });
    const b = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\nwith newline' } });
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('maps engine failures: no execution replica → 503, time-out → 504', async () => {
    execution.failWith = 'dependency_unavailable';
    const unavailable = await app.inject({ method: 'POST', url: '/run', headers: withKey(adminKey), payload: { rule: 'x', data: {} } });
    execution.failWith = 'timeout';
    const timedOut = await app.inject({ method: 'GET', url: '/operators', headers: withKey(adminKey) });
    execution.failWith = undefined;
    expect(problem(unavailable)).toMatchObject({ status: 503, code: 'dependency_unavailable' });
    expect(problem(timedOut)).toMatchObject({ status: 504, code: 'timeout' });
  });

  it('answers an unexpected fault with a generic 500 and logs it with the request id', async () => {
    execution.failWith = 'crash';
    const res = await app.inject({
      method: 'POST',
      url: '/validate',
      headers: { ...withKey(adminKey), 'x-request-id': 'crash-1' },
      payload: { rule: 'x' },
    });
    execution.failWith = undefined;
    expect(problem(res)).toMatchObject({
      status: 500,
      code: 'internal',
      detail: 'internal error; the request id is logged with the cause',
    });
    expect(res.body).not.toContain('secret internals');
    const logged = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.requestId === 'crash-1' && l.level === 50);
    expect(logged).toBeDefined();
    expect(JSON.stringify(logged)).toContain('engine exploded');
  });

  it('forwards the request id to the engine', async () => {
    await app.inject({
      method: 'POST',
      url: '/explain',
      headers: { ...withKey(adminKey), 'x-request-id': 'fwd-1' },
      payload: { rule: 'x' },
    });
    expect(execution.calls.at(-1)).toMatchObject({ op: 'explain', requestId: 'fwd-1' });
  });

  it('never writes an API key, a bearer token or an api_key query value to the logs (access lines at debug included)', async () => {
    const debugLogs = new LogCapture();
    const verbose = await startGateway(db, redis, { execution, logs: debugLogs, logLevel: 'debug' });
    try {
      await verbose.inject({ method: 'GET', url: `/me?api_key=${adminKey}&x=1`, headers: withKey(adminKey) });
      await verbose.inject({ method: 'GET', url: '/me', headers: { authorization: 'Bearer secret.token.value' } });
      await verbose.inject({ method: 'GET', url: `/nope?API_KEY=${adminKey}` });
    } finally {
      await verbose.close();
    }
    expect(debugLogs.lines.length).toBeGreaterThan(0);
    expect(debugLogs.text()).not.toContain(adminKey);
    expect(debugLogs.text()).not.toContain(adminKey.slice(4, 20));
    expect(debugLogs.text()).not.toContain('secret.token.value');
    expect(debugLogs.text()).toContain('api_key=[REDACTED]');
  });

  // Access logs off the per-request path.
  it('writes access lines only at debug, or for one request in ACCESS_LOG_SAMPLE_EVERY; errors always, with the request id', async () => {
    const quiet = new LogCapture();
    const sampled = await startGateway(db, redis, { execution, logs: quiet, accessLogSampleEvery: 3 });
    try {
      for (let i = 0; i < 6; i++) {
        const res = await sampled.inject({ method: 'GET', url: '/me', headers: { ...withKey(adminKey), 'x-request-id': `quiet-${i}` } });
        expect(res.statusCode).toBe(200);
      }
      const access = quiet.lines.filter((l) => l.includes('request completed') || l.includes('incoming request'));
      expect(access.map((l) => JSON.parse(l) as { requestId: string; sampled: number }).map((l) => [l.requestId, l.sampled])).toEqual([
        ['quiet-2', 3],
        ['quiet-5', 3],
      ]);
      execution.failWith = 'crash';
      await sampled.inject({
        method: 'POST',
        url: '/validate',
        headers: { ...withKey(adminKey), 'x-request-id': 'quiet-crash' },
        payload: { rule: 'a' },
      });
      expect(quiet.lines.some((l) => l.includes('"requestId":"quiet-crash"') && l.includes('"level":50'))).toBe(true);
    } finally {
      execution.failWith = undefined;
      await sampled.close();
    }
  });
});

describe('engine endpoints', () => {
  it('answers run results, including engine outcomes such as a parse error, with 200', async () => {
    const ok = await app.inject({ method: 'POST', url: '/run', headers: withKey(adminKey), payload: { rule: 'fine', data: { a: 1 } } });
    expect(ok.json()).toEqual({ result: true, trace: ['rule 1: true'], outcomes: { ok: true } });
    const parse = await app.inject({ method: 'POST', url: '/run', headers: withKey(adminKey), payload: { rule: '@@', data: {} } });
    expect(parse.statusCode).toBe(200);
    expect(parse.json()).toMatchObject({ result: false, errorCode: 'parse_error' });
  });

  it('serves validate, explain and operators', async () => {
    expect((await app.inject({ method: 'POST', url: '/validate', headers: withKey(adminKey), payload: { rule: 'a' } })).json()).toEqual({
      valid: true,
      error: null,
      checks: [],
      checksComplete: false,
    });
    expect((await app.inject({ method: 'POST', url: '/explain', headers: withKey(adminKey), payload: { rule: 'a' } })).json()).toEqual({
      rule_count: 0,
      rules: [],
      error: null,
    });
    expect((await app.inject({ method: 'GET', url: '/operators', headers: withKey(adminKey) })).json()).toEqual([
      { operator: 'equals', forms: ['is equal to'] },
    ]);
  });
});

describe('rate limiting', () => {
  /** `n` requests of `GET /me` one after another on `a`, with `headers`. */
  const inRow = async (a: FastifyInstance, n: number, headers: Record<string, string>) => {
    const answers = [];
    for (let i = 0; i < n; i++) answers.push(await a.inject({ method: 'GET', url: '/me', headers }));
    return answers;
  };
  /** Each answer as `status x-ratelimit-limit x-ratelimit-remaining`. */
  const limitsOf = (answers: Array<{ statusCode: number; headers: Record<string, unknown> }>) =>
    answers.map((a) => `${a.statusCode} ${String(a.headers['x-ratelimit-limit'])} ${String(a.headers['x-ratelimit-remaining'])}`);

  /** A new key with scope `view`, made through the unlimited app. */
  const newViewKey = async (name: string): Promise<{ apiKeyId: string; key: string }> =>
    (await app.inject({ method: 'POST', url: '/apikeys', headers: withKey(adminKey), payload: { name, scopes: ['view'] } })).json();

  it('answers 429 past RATE_LIMIT_MAX per key, shared by replicas through Redis, other keys unaffected', async () => {
    // Per key here; every key of this file is the admin's, so the person limit is set out of the way.
    const limits = { rateLimitMax: 3, rateLimitPersonMax: 1_000_000, rateLimitWindowMs: 60_000 };
    const first = await startGateway(db, redis, { limits });
    const second = await startGateway(db, redis, { limits });
    try {
      // keys made through the unlimited app: the admin key's own bucket is already well used
      const key = (await newViewKey('limited')).key;
      const other = (await newViewKey('other')).key;
      const statuses = [];
      for (const a of [first, second, first])
        statuses.push((await a.inject({ method: 'GET', url: '/me', headers: withKey(key) })).statusCode);
      expect(statuses).toEqual([200, 200, 200]);
      const limited = await second.inject({ method: 'GET', url: '/me', headers: withKey(key) });
      expect(problem(limited)).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect((await first.inject({ method: 'GET', url: '/me', headers: withKey(other) })).statusCode).toBe(200);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('counts each API-key request exactly once, on a cache miss as on a hit (remaining 2, 1, 0, then 429)', async () => {
    const limited = await startGateway(db, redis, {
      limits: { rateLimitMax: 3, rateLimitPersonMax: 1_000_000, rateLimitWindowMs: 60_000 },
    });
    try {
      const key = (await newViewKey('once')).key;
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await limited.inject({ method: 'GET', url: '/me', headers: withKey(key) }));
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 429]);
      expect(answers.map((a) => a.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
      expect(answers.every((a) => a.headers['x-ratelimit-limit'] === '3')).toBe(true);
      expect(Number(answers[0].headers['x-ratelimit-reset'])).toBeGreaterThan(55);
    } finally {
      await limited.close();
    }
  });

  it('authenticates and counts an API-key request with one Redis command, in the bucket of the key hash', async () => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    const sent: string[] = [];
    const sendCommand = client.sendCommand.bind(client);
    client.sendCommand = (command, stream) => {
      sent.push(command.name);
      return sendCommand(command, stream);
    };
    const limited = await startGateway(db, { ...redis, redis: client }, { limits: { rateLimitMax: 100, rateLimitWindowMs: 60_000 } });
    try {
      const created = await newViewKey('round-trips');
      expect((await limited.inject({ method: 'GET', url: '/me', headers: withKey(created.key) })).statusCode).toBe(200);
      sent.length = 0;
      for (let i = 0; i < 3; i++)
        expect((await limited.inject({ method: 'GET', url: '/me', headers: withKey(created.key) })).statusCode).toBe(200);
      expect(sent).toEqual(['evalsha', 'evalsha', 'evalsha']);
      expect(await redis.redis.get(`${redis.prefix}ratelimit:key:${hashApiKey(created.key)}`)).toBe('4');
      expect(await redis.redis.exists(`${redis.prefix}ratelimit:key:${created.apiKeyId}`)).toBe(0);
    } finally {
      await limited.close();
      client.disconnect();
    }
  });

  // One Redis round trip per event-loop turn for the turn's API keys.
  it("authenticates and counts one turn's API-key requests, of several keys, with one Redis command, each with its own count", async () => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    const sent: string[] = [];
    const sendCommand = client.sendCommand.bind(client);
    client.sendCommand = (command, stream) => {
      sent.push(command.name);
      return sendCommand(command, stream);
    };
    const limits = { rateLimitMax: 100, rateLimitPersonMax: 1_000_000, rateLimitWindowMs: 60_000 };
    const limited = await startGateway(db, { ...redis, redis: client }, { limits });
    try {
      const [a, b] = [(await newViewKey('turn-a')).key, (await newViewKey('turn-b')).key];
      // Fill the cache (each key's first lookup misses and reads the database).
      for (const key of [a, b]) expect((await limited.inject({ method: 'GET', url: '/me', headers: withKey(key) })).statusCode).toBe(200);
      sent.length = 0;
      const answers = await Promise.all([a, a, b, a, b].map((key) => limited.inject({ method: 'GET', url: '/me', headers: withKey(key) })));
      expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
      expect(sent).toEqual(['evalsha']);
      // Each request its own count (after the fill): a's three 98, 97, 96 left in some order, b's two 98, 97.
      const remaining = (key: string) =>
        answers
          .filter((_, i) => [a, a, b, a, b][i] === key)
          .map((r) => r.headers['x-ratelimit-remaining'])
          .sort();
      expect(remaining(a)).toEqual(['96', '97', '98']);
      expect(remaining(b)).toEqual(['97', '98']);
    } finally {
      await limited.close();
      client.disconnect();
    }
  });

  it('answers 503, never 401 or 429, for an API key while Redis is unreachable; bearer callers go on unlimited', async () => {
    const unreachable = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    unreachable.on('error', () => {}); // the refused connections are the point of the test
    const cut = await startGateway(db, { ...redis, redis: unreachable }, { limits: { rateLimitMax: 1, rateLimitWindowMs: 60_000 } });
    try {
      const res = await cut.inject({ method: 'GET', url: '/me', headers: withKey(adminKey) });
      expect(problem(res)).toMatchObject({ status: 503, code: 'dependency_unavailable' });
      const token = await signToken({ sub: 'admin', org: 'acme' });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await cut.inject({ method: 'GET', url: '/me', headers: withToken(token) })).statusCode);
      expect(statuses).toEqual([200, 200, 200]);
      // Not counted, so no rate-limit headers (rather than a limit nothing holds them to).
      expect((await cut.inject({ method: 'GET', url: '/me', headers: withToken(token) })).headers['x-ratelimit-limit']).toBeUndefined();
    } finally {
      await cut.close();
      unreachable.disconnect();
    }
  });

  it('gives concurrent requests of one key distinct counts: exactly the limit succeed', async () => {
    const limited = await startGateway(db, redis, {
      limits: { rateLimitMax: 5, rateLimitPersonMax: 1_000_000, rateLimitWindowMs: 60_000 },
    });
    try {
      const key = (await newViewKey('burst')).key;
      await redis.redis.del(`${redis.prefix}${await installationId(db.db)}:apikey:${hashApiKey(key)}`);
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => limited.inject({ method: 'GET', url: '/me', headers: withKey(key) })),
      );
      expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(5);
      expect(answers.filter((a) => a.statusCode === 429)).toHaveLength(7);
      const remaining = answers.filter((a) => a.statusCode === 200).map((a) => a.headers['x-ratelimit-remaining']);
      expect(remaining.sort()).toEqual(['0', '1', '2', '3', '4']);
    } finally {
      await limited.close();
    }
  });

  // Limits count per person (a key's owner, or a bearer's user) as well as per key.
  it("counts a person's requests over all their keys and their bearer token (RATE_LIMIT_PERSON_MAX), other persons unaffected", async () => {
    const token = await signToken({ sub: 'many-keys', org: 'acme' });
    // Three keys of one person, made with their bearer token through the unlimited app (three requests of that person).
    const keys: string[] = [];
    for (const name of ['k1', 'k2', 'k3']) {
      const created = await app.inject({ method: 'POST', url: '/apikeys', headers: withToken(token), payload: { name, scopes: ['view'] } });
      expect(created.statusCode).toBe(201);
      keys.push((created.json() as { key: string }).key);
    }
    const otherToken = await signToken({ sub: 'another-person', org: 'acme' });
    const other = (
      (
        await app.inject({ method: 'POST', url: '/apikeys', headers: withToken(otherToken), payload: { name: 'o', scopes: ['view'] } })
      ).json() as {
        key: string;
      }
    ).key;
    const limited = await startGateway(db, redis, { limits: { rateLimitMax: 2, rateLimitPersonMax: 6, rateLimitWindowMs: 60_000 } });
    try {
      const get = async (headers: Record<string, string>) => {
        const res = await limited.inject({ method: 'GET', url: '/me', headers });
        return `${res.statusCode} ${String(res.headers['x-ratelimit-remaining'])}`;
      };
      // Person count starts at 3: each key may make 2, but the person only 3 more.
      expect([await get(withKey(keys[0])), await get(withKey(keys[1])), await get(withKey(keys[2]))]).toEqual(['200 1', '200 1', '200 0']);
      // k2 is within its own limit; its owner is not.
      expect(await get(withKey(keys[1]))).toBe('429 0');
      expect((await limited.inject({ method: 'GET', url: '/me', headers: withToken(token) })).statusCode).toBe(429);
      expect(await get(withKey(other))).toBe('200 1');
    } finally {
      await limited.close();
    }
  });

  it("counts a batch call's items for the person too: a second key of the same person is refused past the person's limit", async () => {
    const token = await signToken({ sub: 'batch-person', org: 'acme' });
    const keys: string[] = [];
    for (const name of ['b1', 'b2']) {
      const created = await app.inject({ method: 'POST', url: '/apikeys', headers: withToken(token), payload: { name, scopes: ['view'] } });
      keys.push((created.json() as { key: string }).key);
    }
    const limited = await startGateway(db, redis, { limits: { rateLimitMax: 100, rateLimitPersonMax: 12, rateLimitWindowMs: 60_000 } });
    try {
      const batch = (key: string) =>
        limited.inject({
          method: 'POST',
          url: '/run/batch',
          headers: withKey(key),
          payload: { rule: 'r', items: Array.from({ length: 4 }, () => ({ a: 1 })) },
        });
      // 2 requests made the keys; 4 items each: 6, 10, then 14 > 12.
      expect((await batch(keys[0])).statusCode).toBe(200);
      expect((await batch(keys[1])).statusCode).toBe(200);
      const refused = await batch(keys[1]);
      expect(problem(refused)).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  it("shows a batch call's own items in its x-ratelimit-remaining (10 − 1 − 4 = 5, then 5 − 4 = 1, then refused at 0)", async () => {
    const limited = await startGateway(db, redis, {
      limits: { rateLimitMax: 10, rateLimitPersonMax: 1_000_000, rateLimitWindowMs: 60_000 },
    });
    try {
      const key = (await newViewKey('batch-remaining')).key;
      const batch = () =>
        limited.inject({
          method: 'POST',
          url: '/run/batch',
          headers: withKey(key),
          payload: { rule: 'r', items: Array.from({ length: 4 }, () => ({ a: 1 })) },
        });
      expect(limitsOf([await limited.inject({ method: 'GET', url: '/me', headers: withKey(key) })])).toEqual(['200 10 9']);
      expect(limitsOf([await batch(), await batch()])).toEqual(['200 10 5', '200 10 1']);
      const refused = await batch();
      expect(limitsOf([refused])).toEqual(['429 10 0']);
      expect(problem(refused).detail).toMatch(/a batch counts each item/);
    } finally {
      await limited.close();
    }
  });

  it('limits bearer-token callers per user, in a bucket of their own', async () => {
    const limited = await startGateway(db, redis, { limits: { rateLimitMax: 2, rateLimitWindowMs: 60_000 } });
    try {
      const token = await signToken({ sub: 'limited-user', org: 'acme' });
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await limited.inject({ method: 'GET', url: '/me', headers: withToken(token) })).statusCode);
      expect(statuses).toEqual([200, 200, 429]);
      const other = await signToken({ sub: 'other-user', org: 'acme' });
      expect((await limited.inject({ method: 'GET', url: '/me', headers: withToken(other) })).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("sets the rate-limit headers on a bearer caller's answers, against RATE_LIMIT_PERSON_MAX, and retry-after on its 429", async () => {
    const limited = await startGateway(db, redis, { limits: { rateLimitMax: 100, rateLimitPersonMax: 2, rateLimitWindowMs: 60_000 } });
    try {
      const answers = await inRow(limited, 3, withToken(await signToken({ sub: 'person-headers', org: 'acme' })));
      expect(limitsOf(answers)).toEqual(['200 2 1', '200 2 0', '429 2 0']);
      expect(Number(answers[0].headers['x-ratelimit-reset'])).toBeGreaterThan(55);
      expect(answers[1].headers['retry-after']).toBeUndefined();
      const refused = answers[2];
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(55);
      expect(refused.headers['retry-after']).toBe(refused.headers['x-ratelimit-reset']);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.json()).toEqual({
        type: 'urn:arbiter:error:rate_limited',
        title: 'Too many requests',
        status: 429,
        code: 'rate_limited',
        detail: expect.stringMatching(/^rate limit of 2 requests exceeded; retry in \d+ seconds$/),
        instance: refused.headers['x-request-id'],
      });
    } finally {
      await limited.close();
    }
  });

  it("answers an API key its owner's limit refuses with retry-after from the owner's window, the headers in the key's terms", async () => {
    const token = await signToken({ sub: 'owner-limited', org: 'acme' });
    // Made with the owner's bearer token through the unlimited app: the owner's count starts at 1.
    const created = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withToken(token),
      payload: { name: 'o', scopes: ['view'] },
    });
    const key = (created.json() as { key: string }).key;
    const limited = await startGateway(db, redis, { limits: { rateLimitMax: 5, rateLimitPersonMax: 2, rateLimitWindowMs: 60_000 } });
    try {
      const answers = await inRow(limited, 2, withKey(key));
      // The key has made 2 of its 5; its owner 3 of 2: what is left is the owner's, shown against the key's limit.
      expect(limitsOf(answers)).toEqual(['200 5 0', '429 5 0']);
      expect(problem(answers[1])).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(Number(answers[1].headers['retry-after'])).toBeGreaterThan(0);
      expect(answers[1].headers['retry-after']).toBe(answers[1].headers['x-ratelimit-reset']);
    } finally {
      await limited.close();
    }
  });

  it('counts a request its role refuses: authentication counts and limits before any route hook', async () => {
    const limited = await startGateway(db, redis, { limits: { rateLimitMax: 100, rateLimitPersonMax: 1, rateLimitWindowMs: 60_000 } });
    try {
      const token = await signToken({ sub: 'refused-viewer', org: 'acme' });
      const forbidden = await limited.inject({ method: 'GET', url: '/users', headers: withToken(token) });
      expect(problem(forbidden)).toMatchObject({ status: 403, code: 'forbidden' });
      expect(forbidden.headers['x-ratelimit-remaining']).toBe('0');
      expect(problem(await limited.inject({ method: 'GET', url: '/users', headers: withToken(token) }))).toMatchObject({
        status: 429,
        code: 'rate_limited',
      });
    } finally {
      await limited.close();
    }
  });

  it('after AUTH_FAILURES_MAX unknown keys from an address, its cache misses get 429 without a database lookup', async () => {
    const limited = await startGateway(db, redis, { limits: { authFailuresMax: 3 } });
    try {
      const cached = (await newViewKey('cached')).key;
      const uncached = (await newViewKey('uncached')).key;
      const from = (remoteAddress: string, key: string) =>
        limited.inject({ method: 'GET', url: '/me', headers: withKey(key), remoteAddress });
      expect((await from('10.0.0.1', cached)).statusCode).toBe(200);
      const guesses = [];
      for (let i = 0; i < 4; i++) guesses.push(await from('10.0.0.1', `arb_guess_${i}_${'x'.repeat(40)}`));
      expect(guesses.map((g) => g.statusCode)).toEqual([401, 401, 401, 429]);
      expect(problem(guesses[3])).toMatchObject({
        status: 429,
        code: 'rate_limited',
        detail: expect.stringContaining('too many unknown API keys from this address'),
      });
      expect(Number(guesses[3].headers['retry-after'])).toBeGreaterThan(0);
      // a key in the cache still works from that address; one that would need the database waits
      expect((await from('10.0.0.1', cached)).statusCode).toBe(200);
      expect((await from('10.0.0.1', uncached)).statusCode).toBe(429);
      // other addresses are not affected
      expect((await from('10.0.0.2', `arb_guess_other_${'x'.repeat(40)}`)).statusCode).toBe(401);
      expect((await from('10.0.0.2', uncached)).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('takes the client address from X-Forwarded-For only when TRUST_PROXY says so', async () => {
    const guess = (i: number) => `arb_proxy_guess_${i}_${'x'.repeat(40)}`;
    const send = (a: FastifyInstance, i: number, client: string) =>
      a.inject({ method: 'GET', url: '/me', headers: { ...withKey(guess(i)), 'x-forwarded-for': client }, remoteAddress: '10.1.1.1' });
    const behindProxy = await startGateway(db, redis, { limits: { authFailuresMax: 2 }, trustProxy: true });
    const direct = await startGateway(db, redis, { limits: { authFailuresMax: 2 } });
    try {
      const trusted = [
        await send(behindProxy, 1, '198.51.100.1'),
        await send(behindProxy, 2, '198.51.100.2'),
        await send(behindProxy, 3, '198.51.100.1'),
        await send(behindProxy, 4, '198.51.100.1'),
      ];
      expect(trusted.map((r) => r.statusCode)).toEqual([401, 401, 401, 429]);
      const ignored = [await send(direct, 5, '198.51.100.7'), await send(direct, 6, '198.51.100.8'), await send(direct, 7, '198.51.100.9')];
      expect(ignored.map((r) => r.statusCode)).toEqual([401, 401, 429]);
    } finally {
      await behindProxy.close();
      await direct.close();
    }
  });

  it('leaves probes, the OpenAPI document and the pages that need no credentials unlimited', async () => {
    const limited = await startGateway(db, redis, { limits: { rateLimitMax: 1, rateLimitWindowMs: 60_000 } });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await limited.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
        expect((await limited.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
        const docs = await limited.inject({ method: 'GET', url: '/docs/' });
        expect(docs.statusCode).toBe(200);
        expect(docs.headers['x-ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await limited.close();
    }
  });
});

describe('OpenAPI and probes', () => {
  it('serves a valid OpenAPI 3.1 document listing every route', async () => {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/apikeys',
        '/apikeys/{apiKeyId}',
        '/explain',
        '/healthz',
        '/me',
        '/operators',
        '/org/settings',
        '/readyz',
        '/run',
        '/run/batch',
        '/users',
        '/users/{userId}',
        '/users/{userId}/apikeys',
        '/validate',
      ].sort(),
    );
    expect(Object.keys(doc.paths['/run'].post.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '413',
      '415',
      '422',
      '429',
      '503',
      '504',
    ]);
    expect(doc.paths['/run'].post.responses['401'].content).toHaveProperty(['application/problem+json']);
    expect(doc.paths['/run'].post.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/run'].post.requestBody.content['application/json'].schema).toMatchObject({
      required: ['rule', 'data'],
      additionalProperties: false,
    });
  });

  it('serves the interactive docs at /docs', async () => {
    const res = await app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });

  it('sends a CSP, X-Frame-Options and nosniff with every file of /docs', async () => {
    const page = (await app.inject({ method: 'GET', url: '/docs/' })).body;
    const assets = [...page.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => `/docs/${m[1]}`);
    expect(assets).toEqual(expect.arrayContaining(['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js']));
    // the page runs no inline script: every script is a file of /docs, which the CSP allows
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    for (const url of ['/docs', '/docs/', '/docs/json', ...assets]) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeLessThan(400);
      expect(res.headers['content-security-policy'], url).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; " +
          "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
      );
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
    }
    // the initializer turns the validator badge off (it would load an image from elsewhere)
    expect((await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })).body).toContain('"validatorUrl":null');
    // other routes keep their own headers
    expect((await app.inject({ method: 'GET', url: '/healthz' })).headers['content-security-policy']).toBeUndefined();
  });

  it('answers /healthz and /readyz (database and Redis checked)', async () => {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ok', checks: { database: 'ok', redis: 'ok' } });
  });
});
