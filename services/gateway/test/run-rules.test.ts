import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ExplainResponse, OperatorsResponse, RunResponse } from '@arbiter/contracts';
import { listOperators } from '@arbiter/rule-lang';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { InProcessExecution } from './support/in-process-execution.js';
import { newOrg, startGateway, withKey } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let key: string;
const execution = new InProcessExecution();

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { execution });
  key = await newOrg(db, 'acme');
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

const RULE = 'adult: if applicant.age >= 18 -> adult.\nif $adult -> approved.';

describe('POST /run with the real rule language', () => {
  it('evaluates the golden rule and returns trace and outcomes', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/run',
      headers: withKey(key),
      payload: { rule: RULE, data: { applicant: { age: 18 } } },
    });
    expect(res.statusCode).toBe(200);
    const body = RunResponse.parse(res.json());
    expect(body).toEqual({
      result: true,
      outcomes: { adult: true, approved: true },
      trace: [
        'rule "adult" [label adult]',
        '  if $.applicant.age = 18: is greater than or equal to 18 -> true',
        '  => adult = true',
        'rule "approved" [golden]',
        '  if label $adult -> true',
        '  => approved = true',
        'result: true',
      ],
    });
  });

  it('hands `data` on as the bytes the caller sent, never parsed and written again', async () => {
    const data = '{ "applicant" : { "age": 18.0, "name": "Zo\\u00eb 🎉" } }';
    const res = await app.inject({
      method: 'POST',
      url: '/run',
      headers: { ...withKey(key), 'content-type': 'application/json' },
      payload: `{"rule": ${JSON.stringify(RULE)},\n "data":  ${data} }`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: true });
    const sent = execution.received.at(-1)!;
    expect(typeof sent).not.toBe('string');
    expect(Buffer.from(sent as Uint8Array).toString('utf8')).toBe(data);
  });

  it('writes `data` again only where its bytes cannot stand for it (a number JSON.stringify writes otherwise)', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/run',
      headers: { ...withKey(key), 'content-type': 'application/json' },
      payload: `{"rule": ${JSON.stringify(RULE)}, "data": {"applicant": {"age": 1e400}}}`,
    });
    expect(res.statusCode).toBe(200);
    expect(execution.received.at(-1)).toBe('{"applicant":{"age":null}}');
  });

  it('answers a parse error as a 200 result with error and errorCode (docs/errors.md)', async () => {
    const res = await app.inject({ method: 'POST', url: '/run', headers: withKey(key), payload: { rule: 'if if if', data: {} } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: false, errorCode: 'parse_error', error: expect.stringMatching(/^Parse error: /) });
  });

  it('answers missing data as a 200 result with an errorCode', async () => {
    const res = await app.inject({ method: 'POST', url: '/run', headers: withKey(key), payload: { rule: RULE, data: {} } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: false,
      outcomes: {},
      trace: [
        'rule "adult" [label adult]',
        '  if $.applicant.age: Missing selector: applicant',
        'rule "approved" [golden]',
        'error: Missing selector: applicant',
      ],
      error: 'Missing selector: applicant',
      errorCode: 'missing_selector',
    });
  });

  it('validates, explains and lists operators', async () => {
    expect((await app.inject({ method: 'POST', url: '/validate', headers: withKey(key), payload: { rule: RULE } })).json()).toEqual({
      valid: true,
      error: null,
      // No registry in this app: the static checks did not run.
      checks: [],
      checksComplete: false,
    });
    const bad = (await app.inject({ method: 'POST', url: '/validate', headers: withKey(key), payload: { rule: 'if if' } })).json();
    expect(bad).toMatchObject({ valid: false, error: expect.stringMatching(/^Parse error/) });
    const explained = ExplainResponse.parse(
      (await app.inject({ method: 'POST', url: '/explain', headers: withKey(key), payload: { rule: RULE } })).json(),
    );
    expect(explained.rule_count).toBe(2);
    const ops = OperatorsResponse.parse((await app.inject({ method: 'GET', url: '/operators', headers: withKey(key) })).json());
    // The route answers the language's catalogue as it is: every operator, in catalogue order.
    expect(ops).toEqual(listOperators());
    expect(ops[1]).toEqual({ operator: 'is greater than or equal to', forms: ['is greater than or equal to', 'is at least', '>='] });
  });
});

describe('POST /run/batch answers', () => {
  it('puts the raw answers together in order, a large answer (MBs of traces) written part by part', async () => {
    const long = `A **user** is adult if ${Array.from({ length: 60 }, (_, i) => `the __age__ of the **user** is at least ${i}`).join(' and ')}.`;
    const items = Array.from({ length: 400 }, (_, i) => ({ user: { age: 60 + i } }));
    const res = await app.inject({ method: 'POST', url: '/run/batch', headers: withKey(key), payload: { rule: long, items } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.rawPayload.byteLength).toBeGreaterThan(1024 * 1024);
    const body = res.json<{ results: RunResponse[] }>();
    expect(body.results).toHaveLength(400);
    expect(body.results.every((r) => r.result && r.trace.length > 60)).toBe(true);
    const small = await app.inject({
      method: 'POST',
      url: '/run/batch',
      headers: withKey(key),
      payload: { rule: RULE, items: [{ applicant: { age: 30 } }, {}], trace: false },
    });
    expect(small.headers['content-length']).toBe(String(small.rawPayload.byteLength));
    expect(small.json()).toEqual({
      results: [
        { result: true, trace: [], outcomes: { adult: true, approved: true } },
        { result: false, trace: [], outcomes: {}, error: 'Missing selector: applicant', errorCode: 'missing_selector' },
      ],
    });
  });
});
