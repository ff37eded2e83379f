/**
 * End-to-end: the edge defects (bad input at the HTTP edge, oversized and forged values) against the real stack — gateway → NATS →
 * execution, registry and mcp, with PostgreSQL and Redis. Each case is the reproduction;
 * before the fixes each answered 500, hung for its deadline, or was accepted.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { eventually, freePort, probe, testServers } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

const REDIS_URL = testServers().redis;
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)];

let stack: Stack;
let key: string;

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'mcp', 'gateway'], env: { EXEC_INDEX_FLUSH_MS: '100' } });
  key = stack.adminKey;
});

afterAll(async () => {
  await stack?.stop();
});

const problemOf = (res: { status: number; body: any; headers: Headers }) => ({
  status: res.status,
  code: res.body?.code as string,
  type: res.headers.get('content-type'),
});

describe('#6 a result larger than the bus allows', () => {
  it('answers a 14,000-item trace with the trace cut and a marker (was 500)', async () => {
    const res = await call(stack, 'POST', '/run', {
      key,
      body: { rule: 'if any of o.items satisfies (its.p == 5) -> ok.', data: { o: { items: Array(14_000).fill({ p: 1 }) } } },
    });
    expect(res.status).toBe(200);
    expect(res.body.result).toBe(false);
    expect(res.body.trace.at(-2)).toMatch(/^… trace cut: \d+ more lines \(a trace is limited to 262144 bytes\)$/);
    expect(res.body.errorCode).toBe('budget_exceeded');
    expect(res.body.trace.at(-1)).toBe(`error: ${res.body.error}`);
  });
});

describe('#7 deep JSON', () => {
  const deep = '['.repeat(6000) + ']'.repeat(6000);

  it.each([
    ['/run', `{"rule":"x","data":{"a":${deep}}}`],
    ['/mcp', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"evaluate_rules","arguments":{"a":${deep}}}}`],
    [
      '/policy',
      `{"name":"d","rule":"if x.a == 1 -> ok.","schema":${'{"type":"object","properties":{"a":'.repeat(3000)}{}${'}}'.repeat(3000)}}`,
    ],
    ['/policy', `{"name":"d","rule":"if x.a == 1 -> ok.","tests":[{"name":"t","data":{"a":${deep}},"expect":true}]}`],
  ])('answers 400 too_deep on %s (was 500)', async (url, rawBody) => {
    const res = await call(stack, 'POST', url, { key, rawBody, headers: { accept: 'application/json, text/event-stream' } });
    expect(problemOf(res)).toMatchObject({
      status: 400,
      code: 'validation_failed',
      type: expect.stringMatching(/^application\/problem\+json/),
    });
    expect(res.body.errors).toEqual([expect.objectContaining({ code: 'too_deep' })]);
  });

  it('limits saved-test data to a run data depth (64) although the body is within the edge limit', async () => {
    let data: Record<string, unknown> = { a: 1 };
    for (let i = 0; i < 99; i++) data = { a: data };
    const res = await call(stack, 'POST', '/policy', {
      key,
      body: { name: 'deep test', rule: 'if x.a == 1 -> ok.', tests: [{ name: 't', data, expect: true }] },
    });
    expect(problemOf(res)).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(res.body.detail).toContain('data is nested deeper than 64 levels');
    expect(res.body.errors).toEqual([expect.objectContaining({ code: 'too_deep', path: 'body.tests.0.data' })]);
  });
});

describe('#8 U+0000 in stored text', () => {
  const NUL = 'a\u0000b';
  let policy: { policyId: string; baseId: string };
  let flow: { flowId: string };
  let group: { groupId: string };

  beforeAll(async () => {
    policy = (await call(stack, 'POST', '/policy', { key, body: { name: 'nul target', rule: 'if x.a == 1 -> ok.' } })).body;
    flow = (
      await call(stack, 'POST', '/flow', {
        key,
        body: { name: 'nul flow', definition: { start: 'r', nodes: { r: { type: 'return', value: true } } } },
      })
    ).body;
    group = (await call(stack, 'POST', '/group', { key, body: { name: 'nul group' } })).body;
    expect([policy.policyId, flow.flowId, group.groupId].every((id) => typeof id === 'string')).toBe(true);
  });

  const cases: Array<[string, string, () => string, Record<string, unknown>]> = [
    ['policy name', 'POST', () => '/policy', { name: NUL, rule: 'if x.a == 1 -> ok.' }],
    ['policy description', 'POST', () => '/policy', { name: 'n', description: NUL, rule: 'if x.a == 1 -> ok.' }],
    ['policy rule', 'POST', () => '/policy', { name: 'n', rule: `if x.a == "${NUL}" -> ok.` }],
    ['policy schema', 'POST', () => '/policy', { name: 'n', rule: 'if x.a == 1 -> ok.', schema: { title: NUL } }],
    ['policy schema key', 'POST', () => '/policy', { name: 'n', rule: 'if x.a == 1 -> ok.', schema: { [NUL]: 1 } }],
    [
      'policy test name',
      'POST',
      () => '/policy',
      { name: 'n', rule: 'if x.a == 1 -> ok.', tests: [{ name: NUL, data: {}, expect: true }] },
    ],
    [
      'policy test data',
      'POST',
      () => '/policy',
      { name: 'n', rule: 'if x.a == 1 -> ok.', tests: [{ name: 't', data: { x: NUL }, expect: true }] },
    ],
    ['policy update', 'PUT', () => `/policy/${policy.policyId}`, { status: 'draft', description: NUL }],
    ['flow name', 'POST', () => '/flow', { name: NUL, definition: { start: 'r', nodes: { r: { type: 'return', value: true } } } }],
    ['flow node id', 'POST', () => '/flow', { name: 'f', definition: { start: NUL, nodes: { [NUL]: { type: 'return', value: true } } } }],
    [
      'flow custom outcome',
      'POST',
      () => '/flow',
      { name: 'f', definition: { start: 'c', nodes: { c: { type: 'custom', outcome: NUL } } } },
    ],
    ['flow update', 'PUT', () => `/flow/${flow.flowId}`, { status: 'draft', name: NUL }],
    ['group name', 'POST', () => '/group', { name: NUL }],
    ['group description', 'POST', () => '/group', { name: 'g', description: NUL }],
    ['group update', 'PUT', () => `/group/${group.groupId}`, { name: NUL }],
    ['API key name', 'POST', () => '/apikeys', { name: NUL, scopes: ['view'] }],
    ['org settings', 'PUT', () => '/org/settings', { governanceApproval: false, extra: NUL }],
  ];

  it.each(cases)('refuses it in the %s with 400 nul_character (was 500)', async (_label, method, url, body) => {
    const res = await call(stack, method, url(), { key, body });
    expect(problemOf(res)).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(res.body.errors?.[0]?.code).toBe('nul_character');
  });

  it.each(['/policies?q=a%00b', '/flows?q=%00', '/groups?q=x%00', '/users/a%00b'])('refuses %%00 in %s (was 500)', async (url) => {
    const res = await call(stack, 'GET', url, { key });
    expect(problemOf(res)).toMatchObject({ status: 400, code: 'validation_failed' });
  });
});

describe('#9 JSON Schema patterns run on RE2', () => {
  it('answers a catastrophic pattern at once (was a 1 s timeout per run)', async () => {
    const schema = { type: 'object', properties: { x: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } } };
    const created = await call(stack, 'POST', '/policy', { key, body: { name: 'redos', rule: 'if x.s == "a" -> ok.', schema } });
    expect(created.status).toBe(201);
    const run = () => call(stack, 'POST', `/run/policy/${created.body.baseId}`, { key, body: { x: { s: `${'a'.repeat(40)}!` } } });
    await run(); // the worker compiles the schema once
    // With backtracking the run would end at the evaluation deadline (504 timeout), not in a result.
    const res = await run();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: false, errorCode: 'schema_mismatch' });
  });
});

describe('#10 prototype names are never nodes', () => {
  it.each(PROTOTYPE_NAMES)('refuses a flow starting at `%s` when no node has that id (hasOwnProperty was accepted)', async (name) => {
    const res = await call(stack, 'POST', '/flow', { key, body: { name: 'proto', definition: { start: name, nodes: {} } } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ code: 'missing_start' })]);
  });
});

describe('#12 every error is a problem', () => {
  it('answers an over-long path parameter as a problem (was a bare 414 FST_ERR_MAX_PARAM_LENGTH)', async () => {
    const res = await call(stack, 'GET', `/policy/${'a'.repeat(400)}`, { key });
    expect(problemOf(res)).toMatchObject({
      status: 400,
      code: 'validation_failed',
      type: expect.stringMatching(/^application\/problem\+json/),
    });
  });

  it('refuses `__proto__` keys with forbidden_key and the path (was "not valid JSON")', async () => {
    const res = await call(stack, 'POST', '/run', { key, rawBody: '{"rule":"x","data":{"__proto__":{"a":1}}}' });
    expect(problemOf(res)).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(res.body.errors).toEqual([expect.objectContaining({ code: 'forbidden_key', path: 'body.data.__proto__' })]);
  });
});

describe('#14 the rule index is bounded', () => {
  it('gives every rule record a TTL: distinct rules sent to /run leave no permanent key', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      for (let i = 0; i < 25; i++) {
        const res = await call(stack, 'POST', '/run', { key, body: { rule: `if x.a == ${i + 1000} -> ok.`, data: { x: { a: 1 } } } });
        expect(res.status).toBe(200);
      }
      const prefix = stack.env.NATS_SUBJECT_PREFIX;
      const keys = await eventually(async () => {
        const found = await redis.keys(`${prefix}:rule:*`);
        expect(found.length).toBeGreaterThanOrEqual(25);
        return found;
      }, 5000);
      for (const k of keys) expect(await redis.ttl(k)).toBeGreaterThan(0);
      expect(await redis.ttl(`${prefix}:rules`)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});

describe('#11 NATS down', () => {
  let nats: ChildProcess | undefined;
  let natsStack: Stack | undefined;
  let port: number;
  let dir: string;

  const startNats = async () => {
    nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    await eventually(async () => {
      if (!(await probe('nats', `nats://127.0.0.1:${port}`))) throw new Error('nats-server did not start');
    }, 5000);
  };
  const killNats = async () => {
    const proc = nats;
    nats = undefined;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  };

  beforeAll(async () => {
    port = await freePort();
    dir = mkdtempSync(path.join(tmpdir(), 'edge-nats-'));
    await startNats();
    natsStack = await startStack({ services: ['execution', 'gateway'], env: { NATS_URL: `nats://127.0.0.1:${port}` } });
  });

  afterAll(async () => {
    await natsStack?.stop();
    await killNats();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with retry-after at once while the connection is down (was a 504 after 2 s), and recovers', async () => {
    const s = natsStack!;
    const run = () => call(s, 'POST', '/run', { key: s.adminKey, body: { rule: 'if x.a == 1 -> ok.', data: { x: { a: 1 } } } });
    expect((await run()).status).toBe(200);
    await killNats();
    // The gateway has seen the connection close once its readiness says so.
    await eventually(async () => expect((await call(s, 'GET', '/readyz')).status).toBe(503), 10_000);
    // Waiting for the bus deadline instead would have been a 504 (ENGINE_TIMEOUT_MS).
    const res = await run();
    expect(problemOf(res)).toMatchObject({ status: 503, code: 'dependency_unavailable' });
    expect(res.headers.get('retry-after')).toBe('5');

    await startNats();
    await eventually(async () => expect((await run()).status).toBe(200), { timeoutMs: 10_000, intervalMs: 100 });
  });
});
