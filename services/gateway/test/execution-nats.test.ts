import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ArbiterError, EvalRequestHeader, ExecOperatorsRequest, ExecRuleRequest, ExecSubject } from '@arbiter/contracts';
import {
  connectBus,
  createLogger,
  decodeFrame,
  defineEndpoint,
  encodeFrame,
  EvalClient,
  type Bus,
  type HandlerContext,
} from '@arbiter/service-kit';
import { testServers } from '@arbiter/test-kit';
import { NatsExecutionClient } from '../src/clients/execution-client-nats.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { newOrg, problem, startGateway, withKey } from './support/gateway.js';

const NATS_URL = testServers().nats;
const prefix = `arbiter-test-${randomBytes(4).toString('hex')}`;
const logger = createLogger({ service: 'gateway-test', level: 'silent' });

let db: TestDatabase;
let redis: TestRedis;
let bus: Bus;
let app: FastifyInstance;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  bus = await connectBus({ url: NATS_URL, prefix, name: 'gateway-test', logger });
  app = await startGateway(db, redis, { execution: new NatsExecutionClient(new EvalClient(bus, { coalesce: true }), bus, 300) });
  key = await newOrg(db, 'acme');
});

afterAll(async () => {
  await app?.close();
  await bus?.close();
  await redis?.cleanup();
  await db?.drop();
});

/** A stand-in execution service on the real bus (the real one lives in services/execution). */
async function startFakeExecution(behaviour: { delayMs?: number; fail?: ArbiterError } = {}) {
  const seen: Array<{ subject: string; body: unknown; requestId?: string }> = [];
  const serverBus = await connectBus({ url: NATS_URL, prefix, name: 'exec-fake', logger });
  const act = async (subject: string, body: unknown, requestId: string | undefined) => {
    seen.push({ subject, body, ...(requestId ? { requestId } : {}) });
    if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
    if (behaviour.fail) throw behaviour.fail;
  };
  await serverBus.serve({
    name: 'exec',
    version: '0.0.1',
    endpoints: {
      eval: {
        subject: ExecSubject.eval,
        raw: true,
        handler: async (data: Uint8Array, ctx: HandlerContext) => {
          const frame = decodeFrame(data);
          const header = EvalRequestHeader.parse(frame.header);
          const group = header.groups[0];
          const rule = header.rules[group.rule ?? -1];
          await act(
            ctx.subject,
            {
              subject: group.subject,
              principal: header.principals[group.principal],
              rule,
              data: JSON.parse(new TextDecoder().decode(frame.items[0])) as unknown,
              trace: group.trace,
              timeoutMs: group.timeoutMs,
            },
            group.requestId,
          );
          return encodeFrame(
            {},
            frame.items.map(() => JSON.stringify({ result: true, trace: [`ran ${rule}`] })),
          );
        },
      },
      validate: defineEndpoint({
        subject: ExecSubject.validate,
        request: ExecRuleRequest,
        handler: async (req, ctx) => (await act(ctx.subject, req, ctx.requestId), { valid: true, error: null }),
      }),
      explain: defineEndpoint({
        subject: ExecSubject.explain,
        request: ExecRuleRequest,
        handler: async (req, ctx) => (await act(ctx.subject, req, ctx.requestId), { rule_count: 0, rules: [], error: null }),
      }),
      operators: defineEndpoint({
        subject: ExecSubject.operators,
        request: ExecOperatorsRequest,
        handler: async (req, ctx) => (await act(ctx.subject, req, ctx.requestId), [{ operator: 'equals', forms: ['is'] }]),
      }),
    },
  });
  return { seen, stop: () => serverBus.close() };
}

const runRule = (headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/run', headers: { ...withKey(key), ...headers }, payload: { rule: 'r1', data: { a: 1 } } });

describe('engine over NATS', () => {
  it('answers 503 when no execution replica listens, 200 once one does, 503 again after it stops', async () => {
    expect(problem(await runRule())).toMatchObject({ status: 503, code: 'dependency_unavailable' });

    const exec = await startFakeExecution();
    try {
      const res = await runRule({ 'x-request-id': 'nats-1' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ result: true, trace: ['ran r1'] });
      // The caller travels with the request so the execution service can re-check it (docs/design/bus.md).
      expect(exec.seen[0]).toEqual({
        subject: ExecSubject.eval,
        body: {
          subject: ExecSubject.run,
          principal: expect.objectContaining({ orgId: 'acme', userId: 'admin', role: 'admin', scopes: expect.arrayContaining(['view']) }),
          rule: 'r1',
          data: { a: 1 },
          trace: true,
          // The caller's deadline travels with the work.
          timeoutMs: 300,
        },
        requestId: 'nats-1',
      });

      expect((await app.inject({ method: 'POST', url: '/validate', headers: withKey(key), payload: { rule: 'r' } })).json()).toEqual({
        valid: true,
        error: null,
        checks: [],
        checksComplete: false,
      });
      expect((await app.inject({ method: 'POST', url: '/explain', headers: withKey(key), payload: { rule: 'r' } })).json()).toEqual({
        rule_count: 0,
        rules: [],
        error: null,
      });
      expect((await app.inject({ method: 'GET', url: '/operators', headers: withKey(key) })).json()).toEqual([
        { operator: 'equals', forms: ['is'] },
      ]);
    } finally {
      await exec.stop();
    }
    expect(problem(await runRule())).toMatchObject({ status: 503, code: 'dependency_unavailable' });
  });

  it('answers 504 when the execution service does not reply in time', async () => {
    const exec = await startFakeExecution({ delayMs: 1000 });
    try {
      expect(problem(await runRule())).toMatchObject({ status: 504, code: 'timeout' });
    } finally {
      await exec.stop();
    }
  });

  it('passes an error envelope of the execution service through as its problem', async () => {
    const exec = await startFakeExecution({ fail: new ArbiterError('payload_too_large', 'data is nested deeper than 64 levels') });
    try {
      expect(problem(await runRule())).toMatchObject({
        status: 413,
        code: 'payload_too_large',
        detail: 'data is nested deeper than 64 levels',
      });
    } finally {
      await exec.stop();
    }
  });
});
