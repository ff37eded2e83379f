import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ExplainResponse, OperatorsResponse, RunResponse } from '@arbiter/contracts';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { InProcessEngine } from './support/in-process-engine.js';
import { newOrg, startGateway, withKey } from './support/gateway.js';

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { engine: new InProcessEngine() });
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
    const res = await app.inject({ method: 'POST', url: '/run', headers: withKey(key), payload: { rule: RULE, data: { applicant: { age: 18 } } } });
    expect(res.statusCode).toBe(200);
    const body = RunResponse.parse(res.json());
    expect(body).toMatchObject({ result: true, outcomes: { adult: true, approved: true } });
    expect(body.trace.length).toBeGreaterThan(0);
  });

  it('answers a parse error as a 200 result with error and errorCode (spec §7)', async () => {
    const res = await app.inject({ method: 'POST', url: '/run', headers: withKey(key), payload: { rule: 'if if if', data: {} } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: false, errorCode: 'parse_error', error: expect.stringMatching(/^Parse error: /) });
  });

  it('answers missing data as a 200 result with an errorCode', async () => {
    const res = await app.inject({ method: 'POST', url: '/run', headers: withKey(key), payload: { rule: RULE, data: {} } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: false, errorCode: expect.stringMatching(/^missing_/) });
  });

  it('validates, explains and lists operators', async () => {
    expect((await app.inject({ method: 'POST', url: '/validate', headers: withKey(key), payload: { rule: RULE } })).json()).toEqual({ valid: true, error: null });
    const bad = (await app.inject({ method: 'POST', url: '/validate', headers: withKey(key), payload: { rule: 'if if' } })).json();
    expect(bad).toMatchObject({ valid: false, error: expect.stringMatching(/^Parse error/) });
    const explained = ExplainResponse.parse((await app.inject({ method: 'POST', url: '/explain', headers: withKey(key), payload: { rule: RULE } })).json());
    expect(explained.rule_count).toBe(2);
    const ops = OperatorsResponse.parse((await app.inject({ method: 'GET', url: '/operators', headers: withKey(key) })).json());
    expect(ops.length).toBeGreaterThan(5);
  });
});
