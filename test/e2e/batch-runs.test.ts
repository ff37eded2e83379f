/**
 * End-to-end: batch runs: `POST /run/batch` and the `…/batch` forms of the stored-run
 * routes, through gateway → NATS (`exec.eval`, framed groups) → execution → Redis runnable index.
 * Each entry must be what the single-item endpoint answers; limits and the rate limit count items.
 * Every key here is the admin's: the limits per person are set out of the way, so these
 * tests see the limits per key (the per-person ones are tested in the gateway's http-conventions).
 */

import { PolicyRecord, PolicyUpdateReply, RegistrySubject, FlowRecord, type FlowDefinition, type Principal } from '@arbiter/contracts';
import { connectBus, createLogger, type Bus } from '@arbiter/service-kit';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let bus: Bus;
let auditOnlyKey: string;
let orgBKey: string;

const MAX_ITEMS = 50;
/** The trace bytes one batch call's items share in this stack. */
const BATCH_TRACE_BYTES = 200_000;
/** A rule that runs to its traced step budget: a trace of about 10,000 lines (over 256 KiB). */
const RUNAWAY = 'if any of o.items satisfies (any of o.items satisfies (its.p == 5)) -> ok.';
const runawayItem = { o: { items: Array.from({ length: 150 }, () => ({ p: 1 })) } };
/** UTF-8 bytes of a trace as the cap counts them (a separator per line). */
const traceBytes = (trace: string[]) => trace.reduce((n, line) => n + Buffer.byteLength(line) + 4, 0);
const RATE_MAX = 400;
const admin: Principal = { orgId: 'acme', userId: 'admin', role: 'admin' };
const ADULT = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';

const registry = <T>(subject: string, payload: Record<string, unknown>, reply: z.ZodType<T>) =>
  bus.request(subject, { principal: admin, ...payload }, reply, { timeoutMs: 20_000 });
const createPolicy = (rule: string) =>
  registry(RegistrySubject.policyCreate, { name: `p-${Math.random().toString(36).slice(2)}`, rule, schema: null }, PolicyRecord);
async function publish(draftId: string): Promise<PolicyRecord> {
  const reply = await registry(RegistrySubject.policyUpdate, { policyId: draftId, status: 'published' }, PolicyUpdateReply);
  return reply.record;
}
const flowOf = (baseId: string): FlowDefinition => ({
  start: 'n1',
  nodes: {
    n1: { type: 'policy', baseId, onTrue: 'ok', onFalse: 'review' },
    ok: { type: 'return', value: true },
    review: { type: 'custom', outcome: 'manual review' },
  },
});

const post = (path: string, body: unknown, key: string | null = stack.adminKey) =>
  call(stack, 'POST', path, { ...(key !== null ? { key } : {}), body });
const applicants = (...ages: number[]) => ages.map((age) => ({ applicant: { age } }));
/** A value nested `depth` levels deep. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

async function viewKey(name: string): Promise<string> {
  const res = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name, scopes: ['view'] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key as string;
}

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'gateway'],
    env: {
      RUN_BATCH_MAX_ITEMS: String(MAX_ITEMS),
      RATE_LIMIT_MAX: String(RATE_MAX),
      RATE_LIMIT_PERSON_MAX: '100000000',
      MAX_DATA_DEPTH: '16',
      RUN_BATCH_TRACE_BYTES: String(BATCH_TRACE_BYTES),
    },
  });
  bus = await connectBus({
    url: stack.env.NATS_URL,
    prefix: stack.env.NATS_SUBJECT_PREFIX,
    name: 'e2e-batch-runs',
    logger: createLogger({ service: 'e2e', level: 'silent' }),
  });
  const key = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name: 'audit only', scopes: ['audit'] } });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  auditOnlyKey = key.body.key as string;
  const created = stack.admin(['create-org', 'globex', '--admin', 'boss']);
  expect(created.status, created.stderr).toBe(0);
  orgBKey = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
}, 120_000);

afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});

describe('POST /run/batch', () => {
  it('answers every item in order, each exactly what POST /run answers for it', async () => {
    const items = [...applicants(30, 12, 18, 17), {}, { applicant: { age: 'old' } }];
    const res = await post('/run/batch', { rule: ADULT, items });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results).toHaveLength(items.length);
    for (const [i, data] of items.entries()) {
      const single = await post('/run', { rule: ADULT, data });
      expect(single.status).toBe(200);
      expect(res.body.results[i], `item ${i}`).toEqual(single.body);
    }
    expect(res.body.results.map((r: { result: boolean }) => r.result)).toEqual([true, false, true, false, false, false]);
    expect(res.body.results[4].errorCode).toBe('missing_selector');
  });

  it('answers items forwarded as the bytes they came as byte for byte as POST /run answers them (whitespace, escapes, UTF-8, −0, overflowing numbers)', async () => {
    const items = [
      '{ "applicant" :\n\t{ "age" : 30 } }',
      '{"applicant":{"age":17,"name":"Zoë \\u00e9 \\ud83c\\udf89 🎉 ], [ {"}}',
      '{"applicant":{"age":-0}}',
      '{"applicant":{"age":1e400}}',
      '{"applicant":{"age":-1e400}}',
      '{"applicant":{"age":18.0e0}}',
      `{"applicant":{"age":${'9'.repeat(400)}}}`,
      '{"applicant":{"age":-0.0},"n":[-1e-400]}',
    ];
    const post = async (path: string, body: string) => {
      const res = await fetch(`${stack.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': stack.adminKey, 'content-type': 'application/json' },
        body,
      });
      return { status: res.status, text: await res.text() };
    };
    const batch = await post('/run/batch', `{"rule":${JSON.stringify(ADULT)},\n "items" : [ ${items.join(' ,\n')} ] }`);
    expect(batch.status, batch.text).toBe(200);
    const singles: string[] = [];
    for (const item of items) {
      const single = await post('/run', `{"rule":${JSON.stringify(ADULT)},"data":${item}}`);
      expect(single.status, single.text).toBe(200);
      singles.push(single.text);
    }
    expect(batch.text).toBe(`{"results":[${singles.join(',')}]}`);
    expect((JSON.parse(batch.text) as { results: Array<{ result: boolean }> }).results.map((r) => r.result)).toEqual([
      true,
      false,
      false,
      false,
      false,
      true,
      false,
      false,
    ]);
  });

  it('answers an engine error as each item’s 200 body, and an item that fails on its own as its problem, neighbours unharmed', async () => {
    const parse = await post('/run/batch', { rule: 'this is not a rule', items: applicants(1, 2) });
    expect(parse.status).toBe(200);
    expect(parse.body.results.map((r: { errorCode: string }) => r.errorCode)).toEqual(['parse_error', 'parse_error']);

    const res = await post('/run/batch', { rule: ADULT, items: [...applicants(40), nested(30), ...applicants(5)] });
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ result: true });
    expect(res.body.results[1]).toMatchObject({
      status: 400,
      code: 'validation_failed',
      type: expect.stringContaining('validation_failed'),
    });
    expect(res.body.results[1].detail).toMatch(/nested deeper than 16 levels/);
    expect(res.body.results[2]).toMatchObject({ result: false });
    // The single endpoint answers that item with the same problem.
    const single = await post('/run', { rule: ADULT, data: nested(30) });
    expect([single.status, single.body.code, single.body.detail]).toEqual([400, 'validation_failed', res.body.results[1].detail]);
  });

  it("cuts each item's trace at its share of RUN_BATCH_TRACE_BYTES, so a traced batch answer stays bounded; a single run keeps its whole trace", async () => {
    const single = await post('/run', { rule: RUNAWAY, data: runawayItem });
    expect(single.status).toBe(200);
    expect(single.body.errorCode).toBe('budget_exceeded');
    const whole = traceBytes(single.body.trace as string[]);
    expect(whole).toBeGreaterThan(BATCH_TRACE_BYTES / 2);
    for (const count of [2, 40]) {
      const share = Math.max(4096, Math.floor(BATCH_TRACE_BYTES / count));
      const res = await post('/run/batch', { rule: RUNAWAY, items: Array.from({ length: count }, () => runawayItem) });
      expect(res.status).toBe(200);
      for (const r of res.body.results as Array<{ trace: string[]; errorCode: string; result: boolean }>) {
        expect([r.result, r.errorCode]).toEqual([false, 'budget_exceeded']);
        // The kept lines and the last one fit the share; the marker line between them says so.
        expect(traceBytes([...r.trace.slice(0, -2), r.trace.at(-1)!])).toBeLessThanOrEqual(share);
        expect(r.trace.at(-2)).toMatch(new RegExp(`^… trace cut: \\d+ more lines \\(a trace is limited to ${share} bytes\\)$`));
        // The cut keeps the first lines and the last one (the error), as the single run's cap does.
        expect(r.trace.at(-1)).toBe(single.body.trace.at(-1));
        expect(r.trace.slice(0, 3)).toEqual(single.body.trace.slice(0, 3));
      }
    }
    // A stored policy's batch shares the same bytes.
    const stored = await createPolicy(RUNAWAY);
    const byBase = await post(`/run/policy/${stored.baseId}/batch`, { items: Array.from({ length: 40 }, () => runawayItem) });
    expect(byBase.status).toBe(200);
    for (const r of byBase.body.results as Array<{ trace: string[] }>) {
      expect(r.trace.at(-2)).toContain(`(a trace is limited to ${Math.floor(BATCH_TRACE_BYTES / 40)} bytes)`);
    }
    // Without a trace the items answer as before, with empty traces.
    const untraced = await post('/run/batch', { rule: RUNAWAY, trace: false, items: [runawayItem] });
    expect(untraced.body.results[0].trace).toEqual([]);
  });

  it('runs more items than one bus message, in order', async () => {
    const ages = Array.from({ length: MAX_ITEMS }, (_, i) => i);
    const res = await post('/run/batch', { rule: ADULT, items: applicants(...ages) });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { result: boolean }) => r.result)).toEqual(ages.map((a) => a >= 18));
  });

  it('refuses more than RUN_BATCH_MAX_ITEMS items with 413, and bad calls as the single endpoint does', async () => {
    const tooMany = await post('/run/batch', { rule: ADULT, items: applicants(...Array.from({ length: MAX_ITEMS + 1 }, () => 30)) });
    expect([tooMany.status, tooMany.body.code]).toEqual([413, 'payload_too_large']);
    expect(tooMany.body.detail).toBe(`a batch may carry at most ${MAX_ITEMS} items; this one has ${MAX_ITEMS + 1}`);
    expect(tooMany.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await post('/run/batch', { rule: ADULT, items: applicants(30) }, null)).status).toBe(401);
    expect((await post('/run/batch', { rule: ADULT, items: applicants(30) }, 'arb_not_a_key_0123456789abcdef')).status).toBe(401);
    expect((await post('/run/batch', { rule: ADULT, items: applicants(30) }, auditOnlyKey)).status).toBe(403);
    for (const body of [
      { rule: ADULT },
      { rule: ADULT, items: [] },
      { rule: ADULT, items: [1, 2] },
      { rule: ADULT, items: {} },
      { items: applicants(1) },
      { rule: ADULT, items: applicants(1), extra: 1 },
    ]) {
      const res = await post('/run/batch', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('answers one 413 for a rule over the size limit, not a 200 with a 413 per item', async () => {
    const rule = `${ADULT}\n${'A **note** is long if the __text__ of the **note** is "x". '.repeat(1300)}`;
    expect(Buffer.byteLength(rule)).toBeGreaterThan(65_536);
    const res = await post('/run/batch', { rule, items: applicants(30, 40, 50) });
    expect([res.status, res.body.code]).toEqual([413, 'payload_too_large']);
    expect(res.body.detail).toMatch(/^rule text is \d+ bytes: the limit is 65536 bytes$/);
    expect(res.body.errors).toEqual([expect.objectContaining({ code: 'rule_too_large', path: 'rule' })]);
    // the single endpoint says the same
    const single = await post('/run', { rule, data: applicants(30)[0] });
    expect([single.status, single.body.code]).toEqual([413, 'payload_too_large']);
  });

  it('counts every item in the rate limit: a key is refused once its items pass RATE_LIMIT_MAX', async () => {
    const key = await viewKey('batch-rate');
    const items = applicants(...Array.from({ length: 45 }, () => 30));
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await post('/run/batch', { rule: ADULT, items }, key)).status);
    // 8 calls × 45 items = 360 ≤ 400; the 9th brings the count to 405.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
    const single = await post('/run', { rule: ADULT, data: applicants(30)[0] }, key);
    expect(single.status).toBe(429);
    expect(single.headers.get('retry-after')).not.toBeNull();
    // Another key is not affected.
    expect((await post('/run/batch', { rule: ADULT, items: applicants(30) }, await viewKey('batch-rate-other'))).status).toBe(200);
  });
});

describe('POST /run/batch of 1,000 items (one job per bus message, EXEC_CALLER_MAX 4)', () => {
  let big: Stack;
  const bigPost = (path: string, body: unknown, key: string) => call(big, 'POST', path, { key, body });
  /** ~1,000 steps per item: a 1,000-item call keeps the single worker busy for a while. */
  const HEAVY =
    'A **x** is big if any of the __n__ of the **x** where (any of the __n__ of the **x** where (its is greater than 1000000)).';
  // 200 × 200 comparisons an item, untraced (within its step budget): the batch takes far longer
  // than three single runs, even when the first of them meets a stall of a few hundred ms (with
  // 32 × 32 traced items a loaded CI machine once finished the batch first).
  const heavyItem = (i: number) => ({ x: { n: Array.from({ length: 200 }, (_, k) => k + i) } });
  beforeAll(async () => {
    big = await startStack({
      services: ['execution', 'gateway'],
      env: {
        RUN_BATCH_MAX_ITEMS: '1000',
        RATE_LIMIT_MAX: '100000',
        EXEC_POOL_SIZE: '1',
        EXEC_CALLER_MAX: '4',
        EXEC_PERSON_MAX: '100',
        MAX_DATA_DEPTH: '16',
        // A loaded test machine: the heavy batch's last message must not pass the gateway's deadline.
        ENGINE_TIMEOUT_MS: '20000',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await big?.stop();
  });
  const bigKey = async (name: string) => {
    const res = await call(big, 'POST', '/apikeys', { key: big.adminKey, body: { name, scopes: ['view'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.key as string;
  };

  it('answers all 1,000 items of one call from one key, in order, a bad item alone', async () => {
    const key = await bigKey('batch-1000');
    const ages = Array.from({ length: 1000 }, (_, i) => i % 50);
    const items: Array<Record<string, unknown>> = applicants(...ages);
    items[500] = nested(30);
    const res = await bigPost('/run/batch', { rule: ADULT, items }, key);
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
    expect(res.body.results).toHaveLength(1000);
    expect(res.body.results[500]).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(res.body.results.map((r: { result?: boolean; code?: string }) => r.code ?? r.result)).toEqual(
      ages.map((age, i) => (i === 500 ? 'validation_failed' : age >= 18)),
    );
  });

  it("serves another key's POST /run while a 1,000-item batch of heavy items runs", async () => {
    const [a, b] = await Promise.all([bigKey('batch-big'), bigKey('batch-other')]);
    const finished: string[] = [];
    const batch = bigPost('/run/batch', { rule: HEAVY, trace: false, items: Array.from({ length: 1000 }, (_, i) => heavyItem(i)) }, a).then(
      (res) => {
        finished.push('batch');
        return res;
      },
    );
    // The other key's runs go in turn between the batch's chunks: they are answered before the batch is.
    const singles: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await bigPost('/run', { rule: ADULT, data: { applicant: { age: 20 + i } } }, b);
      singles.push(res.status);
      expect(res.body.result).toBe(true);
    }
    finished.push('singles');
    const res = await batch;
    expect(singles).toEqual([200, 200, 200]);
    expect(res.status).toBe(200);
    const kinds = new Set(
      res.body.results.map((r: { result?: boolean; code?: string; errorCode?: string }) => r.code ?? r.errorCode ?? r.result),
    );
    expect([...kinds]).toEqual([false]);
    expect(finished).toEqual(['singles', 'batch']);
  });
});

describe('POST /run/policy/{baseId}/batch and the version and flow forms', () => {
  it('answers each item as the single stored run does, by base, by version, and for flows', async () => {
    const v1 = await publish((await createPolicy(ADULT)).policyId);
    const flow = await registry(
      RegistrySubject.flowCreate,
      { name: `f-${Math.random().toString(36).slice(2)}`, definition: flowOf(v1.baseId) },
      FlowRecord,
    );
    const items = [...applicants(30, 3), {}];
    for (const path of [
      `/run/policy/${v1.baseId}`,
      `/run/policy_version/${v1.policyId}`,
      `/run/flow/${flow.baseId}`,
      `/run/flow_version/${flow.flowId}`,
    ]) {
      const res = await post(`${path}/batch`, { items });
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(200);
      for (const [i, data] of items.entries()) {
        const single = await post(path, data);
        expect(single.status).toBe(200);
        expect(res.body.results[i], `${path} item ${i}`).toEqual(single.body);
      }
    }
  });

  it('answers 404 for an unknown, other-org or deleted base and 400/401/403/413 like /run/batch', async () => {
    const v1 = await publish((await createPolicy(ADULT)).policyId);
    const items = applicants(30);
    expect((await post(`/run/policy/${v1.baseId}/batch`, { items }, orgBKey)).status).toBe(404);
    expect((await post(`/run/policy/019a0000-0000-7000-8000-000000000000/batch`, { items })).status).toBe(404);
    expect((await post(`/run/policy/not-a-uuid/batch`, { items })).status).toBe(404);
    expect((await post(`/run/flow_version/${v1.policyId}/batch`, { items })).status).toBe(404);
    expect((await post(`/run/policy/${v1.baseId}/batch`, { items }, null)).status).toBe(401);
    expect((await post(`/run/policy/${v1.baseId}/batch`, { items }, auditOnlyKey)).status).toBe(403);
    expect((await post(`/run/policy/${v1.baseId}/batch`, { items: [] })).status).toBe(400);
    expect((await post(`/run/policy/${v1.baseId}/batch`, items)).status).toBe(400);
    expect(
      (await post(`/run/policy/${v1.baseId}/batch`, { items: applicants(...Array.from({ length: MAX_ITEMS + 1 }, () => 1)) })).status,
    ).toBe(413);
    await registry(RegistrySubject.policyDelete, { policyId: v1.policyId }, z.unknown());
    for (const path of [`/run/policy/${v1.baseId}/batch`, `/run/policy_version/${v1.policyId}/batch`]) {
      const res = await post(path, { items: applicants(30, 40) });
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
    }
  });
});

describe('OpenAPI', () => {
  it('documents the batch routes, their 413 and per-item answers, in a valid OpenAPI 3.1 document', async () => {
    const doc = (await call(stack, 'GET', '/openapi.json')).body;
    const result = await new Validator().validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    for (const p of [
      '/run/batch',
      '/run/policy/{baseId}/batch',
      '/run/policy_version/{policyId}/batch',
      '/run/flow/{baseId}/batch',
      '/run/flow_version/{flowId}/batch',
    ]) {
      const op = doc.paths[p]?.post;
      expect(op, p).toBeDefined();
      expect(op.security).toEqual([{ apiKey: [] }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '413', '429']));
      expect(op.description).toMatch(/exactly what the single-item endpoint answers/);
    }
  });
});
