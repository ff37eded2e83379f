/** Bad inputs at the HTTP edge: each is a 400 problem before anything walks or stores it. */

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { StubExecution } from './support/stub-execution.js';
import { newOrg, problem, startGateway, withKey } from './support/gateway.js';
import { parseJsonBody } from '../src/http/json-body.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;
const execution = new StubExecution();

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { execution });
  adminKey = await newOrg(db, 'acme');
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

const postRun = (payload: string) =>
  app.inject({ method: 'POST', url: '/run', headers: { ...withKey(adminKey), 'content-type': 'application/json' }, payload });

describe('deep JSON (#7)', () => {
  it('answers 400 too_deep for 6,000 levels before anything recurses (was 500: JSON.stringify overflowed)', async () => {
    const deep = '['.repeat(6000) + ']'.repeat(6000);
    const res = await postRun(`{"rule":"x","data":{"a":${deep}}}`);
    expect(problem(res)).toMatchObject({ status: 400, code: 'validation_failed', detail: 'request body is nested deeper than 256 levels' });
    expect(res.json().errors).toEqual([{ code: 'too_deep', message: 'nested deeper than 256 levels', path: 'body' }]);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('accepts nesting up to the limit, and brackets inside strings do not count', async () => {
    const deep = '['.repeat(250) + ']'.repeat(250);
    expect((await postRun(`{"rule":"x","data":{"a":${deep},"s":"${'['.repeat(1000)}"}}`)).statusCode).toBe(200);
  });
});

describe('__proto__ and constructor.prototype (#12)', () => {
  it('refuses a `__proto__` key with forbidden_key and its path (was "not valid JSON")', async () => {
    const res = await postRun('{"rule":"x","data":{"o":{"__proto__":{"admin":true}}}}');
    expect(problem(res)).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(res.json().errors).toEqual([
      { code: 'forbidden_key', message: '`__proto__` keys are not accepted', path: 'body.data.o.__proto__' },
    ]);
  });

  it('refuses an escaped `__proto__` key the same way', async () => {
    const res = await postRun('{"rule":"x","data":{"\\u005f_proto__":{}}}');
    expect(res.json().errors?.[0]).toMatchObject({ code: 'forbidden_key', path: 'body.data.__proto__' });
  });

  it('refuses constructor.prototype, and accepts a plain `constructor` key', async () => {
    const res = await postRun('{"rule":"x","data":{"constructor":{"prototype":{"a":1}}}}');
    expect(res.json().errors).toEqual([
      { code: 'forbidden_key', message: '`constructor.prototype` is not accepted', path: 'body.data.constructor.prototype' },
    ]);
    expect((await postRun('{"rule":"x","data":{"constructor":"Ada"}}')).statusCode).toBe(200);
  });
});

describe('U+0000 (#8)', () => {
  it('refuses U+0000 in any body text with nul_character and its path', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/apikeys',
      headers: withKey(adminKey),
      payload: { name: 'a\u0000b', scopes: ['view'] },
    });
    expect(problem(res)).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(res.json().errors).toEqual([{ code: 'nul_character', message: 'text must not contain U+0000', path: 'body.name' }]);
  });

  it('refuses U+0000 in keys', async () => {
    const res = await postRun('{"rule":"x","data":{"a\\u0000":1}}');
    expect(res.json().errors?.[0]).toMatchObject({ code: 'nul_character', path: 'body.data' });
  });

  it('accepts other escapes, and a literal backslash-u-0000 text', async () => {
    expect((await postRun('{"rule":"x","data":{"a":"\\u00e9 \\\\u0000"}}')).statusCode).toBe(200);
  });

  it('refuses %00 in the query and in path parameters', async () => {
    const q = await app.inject({ method: 'GET', url: '/apikeys?cursor=a%00b', headers: withKey(adminKey) });
    expect(problem(q)).toMatchObject({ status: 400, code: 'validation_failed', detail: 'request query must not contain U+0000 (`%00`)' });
    const p = await app.inject({ method: 'DELETE', url: '/apikeys/a%00b', headers: withKey(adminKey) });
    expect(problem(p)).toMatchObject({
      status: 400,
      code: 'validation_failed',
      contentType: expect.stringMatching(/^application\/problem\+json/),
    });
  });
});

describe('framework and parser errors are problems (#12)', () => {
  it('answers an over-long path parameter with a problem (was a bare 414 FST_ERR_MAX_PARAM_LENGTH)', async () => {
    const res = await app.inject({ method: 'DELETE', url: `/apikeys/${'a'.repeat(400)}`, headers: withKey(adminKey) });
    expect(problem(res)).toMatchObject({
      status: 400,
      code: 'validation_failed',
      detail: 'a path parameter is longer than 300 characters',
      contentType: expect.stringMatching(/^application\/problem\+json/),
    });
  });

  it('answers a bad percent-encoding with a problem', async () => {
    const res = await app.inject({ method: 'GET', url: '/users/%zz', headers: withKey(adminKey) });
    expect(problem(res)).toMatchObject({
      status: 400,
      code: 'bad_request',
      contentType: expect.stringMatching(/^application\/problem\+json/),
    });
  });

  it('answers a body shorter than its content-length with a problem (was {"error":"Bad Request","message":"Client Error"})', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const body = '{"rule":"x","data":{}}';
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let out = '';
      socket.on('data', (d) => (out += d.toString('utf8')));
      socket.on('end', () => resolve(out));
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
      socket.write(
        `POST /run HTTP/1.1\r\nHost: x\r\nx-api-key: ${adminKey}\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n${body}`,
      );
    });
    const responses = raw.split(/(?=HTTP\/1\.1 )/);
    expect(responses.length).toBeGreaterThan(0);
    for (const r of responses) {
      expect(r).toMatch(/^HTTP\/1\.1 400 /);
      expect(r.toLowerCase()).toContain('content-type: application/problem+json');
      const json = JSON.parse(r.slice(r.indexOf('\r\n\r\n') + 4)) as { code: string; type: string };
      expect(json.code).toBe('bad_request');
      expect(json.type).toBe('urn:arbiter:error:bad_request');
    }
  });
});

describe('parseJsonBody', () => {
  it('parses plain JSON unchanged', () => {
    expect(parseJsonBody('{"a":[1,{"b":"c"}]}')).toEqual({ a: [1, { b: 'c' }] });
  });

  it('refuses an empty body and malformed JSON with bad_request', () => {
    expect(() => parseJsonBody('  ')).toThrow('request body is empty');
    expect(() => parseJsonBody('{"a":')).toThrow('request body is not valid JSON');
  });
});
