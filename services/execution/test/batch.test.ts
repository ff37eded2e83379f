import {
  ExecBatchReply,
  ExecSubject,
  RunResponse,
  StoredRunSubject,
  type ExecBatchItem,
  type ExecBatchResult,
  type Principal,
} from '@arbiter/contracts';
import { connectBus, ExecCoalescer, inProcessKit, loadConfig, type Bus } from '@arbiter/service-kit';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fitReply } from '../src/batch-endpoint.js';
import { ExecConfig } from '../src/config.js';
import { startExecution, type Execution } from '../src/service.js';
import { ADULT_RULE, dropKeys, nested, NATS_URL, randomPrefix, rejection, REDIS_URL, runawayRule, silentLogger } from './helpers.js';

const logger = silentLogger();

function config(prefix: string, overrides: Record<string, string> = {}): ExecConfig {
  return loadConfig(ExecConfig, {
    NATS_URL,
    REDIS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    EXEC_POOL_SIZE: '1',
    EXEC_INDEX_FLUSH_MS: '600000',
    MAX_DATA_DEPTH: '8',
    ...overrides,
  });
}

const alice: Principal = { orgId: 'acme', userId: 'alice', role: 'viewer', apiKeyId: 'k-alice' };
const bob: Principal = { orgId: 'other', userId: 'bob', role: 'viewer', apiKeyId: 'k-bob' };
/** A key without the `view` scope: execution refuses its runs. */
const noView: Principal = { orgId: 'acme', userId: 'carol', role: 'viewer', apiKeyId: 'k-carol', scopes: [] };

const runItem = (principal: Principal, age: number, extra: Record<string, unknown> = {}): ExecBatchItem => ({
  subject: ExecSubject.run,
  payload: JSON.stringify({ principal, rule: ADULT_RULE, data: { user: { age } }, trace: false, ...extra }),
});
const okData = (r: ExecBatchResult) => (r.ok ? (r.data as RunResponse) : undefined);
const errCode = (r: ExecBatchResult) => (r.ok ? undefined : r.error.code);

describe('exec.batch', () => {
  const prefix = randomPrefix();
  let exec: Execution;
  let client: Bus;
  beforeAll(async () => {
    exec = await startExecution(inProcessKit('exec-batch', config(prefix), { logger, metrics: new Registry() }));
    client = await connectBus({ url: NATS_URL, prefix, name: 'exec-batch-client', logger });
  });
  afterAll(async () => {
    await client?.close();
    await exec?.close();
    await dropKeys(prefix);
  });
  const batch = (items: ExecBatchItem[]) => client.request(ExecSubject.batch, { items }, ExecBatchReply);

  it('answers every item in order, mixed callers in one message, and hands them to one worker as one task', async () => {
    const before = exec.pool.batchStats();
    const ages = [10, 20, 30, 5, 40, 17, 18, 90];
    const reply = await batch(ages.map((age, i) => runItem(i % 2 === 0 ? alice : bob, age)));
    expect(reply.results.map((r) => okData(r)?.result)).toEqual(ages.map((age) => age >= 18));
    const after = exec.pool.batchStats();
    expect(after.tasks - before.tasks).toBe(1);
    expect(after.items - before.items).toBe(ages.length);
  });

  it('answers each bad item with its own error, its neighbours unharmed', async () => {
    const items: ExecBatchItem[] = [
      runItem(alice, 30),
      { subject: ExecSubject.run, payload: '{not json' },
      runItem(alice, 30, { data: nested(20) }), // deeper than MAX_DATA_DEPTH (8)
      runItem(noView, 30), // no `view` right
      { subject: ExecSubject.run, payload: JSON.stringify({ principal: alice, rule: ADULT_RULE }) }, // no data
      { subject: ExecSubject.run, payload: JSON.stringify({ principal: alice, rule: 'this is not a rule', data: {} }) },
      { subject: ExecSubject.run, payload: `${'['.repeat(300)}${']'.repeat(300)}` }, // past the bus's depth limit
      runItem(bob, 12),
    ];
    const { results } = await batch(items);
    expect(results.map((r) => errCode(r) ?? okData(r)?.result)).toEqual([
      true,
      'bad_request',
      'validation_failed',
      'forbidden',
      'bad_request',
      false,
      'validation_failed',
      false,
    ]);
    // A rule that does not parse is an engine result, as on `exec.run`.
    expect(okData(results[5])?.errorCode).toBe('parse_error');
    expect(results[3]).toMatchObject({ ok: false, error: { status: 403 } });
  });

  it('fails a stored-run item that cannot be resolved alone (no registry answers here)', async () => {
    const { results } = await batch([
      {
        subject: StoredRunSubject.policyByBase,
        payload: JSON.stringify({ principal: alice, id: '00000000-0000-4000-8000-000000000000', data: {} }),
      },
      runItem(alice, 50),
    ]);
    // No registry on this bus: the resolver cannot reach one, so the stored item fails alone.
    expect(results[0]?.ok).toBe(false);
    expect(results[1]).toMatchObject({ ok: true, data: { result: true } });
  });

  it('runs one rule on many data objects (exec.run.many): in order, one task, each item its own error', async () => {
    const before = exec.pool.batchStats();
    const reply = await client.request(
      ExecSubject.runMany,
      { principal: alice, rule: ADULT_RULE, trace: false, items: [{ user: { age: 40 } }, nested(20), { user: { age: 3 } }, {}] },
      ExecBatchReply,
    );
    expect(reply.results.map((r) => errCode(r) ?? okData(r)?.result)).toEqual([true, 'validation_failed', false, false]);
    expect(okData(reply.results[3])?.errorCode).toBe('missing_selector');
    expect(exec.pool.batchStats().tasks - before.tasks).toBe(1);
    // The caller and the rule are checked once for all: refused as a whole.
    const refused = await rejection(
      client.request(ExecSubject.runMany, { principal: noView, rule: ADULT_RULE, items: [{ user: { age: 40 } }] }, ExecBatchReply),
    );
    expect(refused.code).toBe('forbidden');
  });

  it('runs 1,000 items of one key sent as 4 concurrent exec.run.many messages: all answered, in order, bad items alone', async () => {
    const before = exec.pool.batchStats();
    const ages = Array.from({ length: 1000 }, (_, i) => i % 40);
    const messages = [0, 1, 2, 3].map((m) =>
      client.request(
        ExecSubject.runMany,
        {
          principal: alice,
          rule: ADULT_RULE,
          trace: false,
          items: ages.slice(m * 250, m * 250 + 250).map((age, i) => (i === 7 ? nested(20) : { user: { age } })),
        },
        ExecBatchReply,
        { timeoutMs: 10_000 },
      ),
    );
    const results = (await Promise.all(messages)).flatMap((r) => r.results);
    expect(results).toHaveLength(1000);
    expect(results.map((r) => errCode(r) ?? okData(r)?.result)).toEqual(
      ages.map((age, i) => (i % 250 === 7 ? 'validation_failed' : age >= 18)),
    );
    // Each message is one queue job run in a few worker tasks (chunks), not one task per item.
    const stats = exec.pool.batchStats();
    expect(stats.items - before.items).toBe(996);
    expect(stats.tasks - before.tasks).toBeLessThan(100);
  });

  it('refuses a batch naming a subject that cannot be batched, or with no items', async () => {
    const validate = { subject: ExecSubject.validate, payload: JSON.stringify({ principal: alice, rule: ADULT_RULE }) };
    expect((await rejection(client.request(ExecSubject.batch, { items: [validate] }, ExecBatchReply))).code).toBe('bad_request');
    expect((await rejection(client.request(ExecSubject.batch, { items: [] }, ExecBatchReply))).code).toBe('bad_request');
  });
});

describe('exec.batch per-item deadline', () => {
  it('answers timeout for the item that ran past EXEC_TASK_TIMEOUT_MS, the others in the same task normally', async () => {
    const prefix = randomPrefix();
    // The step budget out of reach, so only the deadline can stop the slow item (~0.2–0.3 s of work for 100 ms).
    const exec = await startExecution(
      inProcessKit(
        'exec-batch-deadline',
        config(prefix, { EXEC_TASK_TIMEOUT_MS: '100', EXEC_STEP_BUDGET: String(Number.MAX_SAFE_INTEGER) }),
        {
          logger,
          metrics: new Registry(),
        },
      ),
    );
    const client = await connectBus({ url: NATS_URL, prefix, name: 'exec-batch-deadline-client', logger });
    try {
      const slow: ExecBatchItem = {
        subject: ExecSubject.run,
        payload: JSON.stringify({
          principal: bob,
          rule: runawayRule(3),
          data: { x: { n: Array.from({ length: 150 }, (_, i) => i) } },
          trace: false,
        }),
      };
      // 20 items: the last-resort cut of the whole task (items × deadline, 2 s) stays far off even on a loaded machine.
      const fast = Array.from({ length: 19 }, (_, i) => runItem(alice, 10 + 5 * i));
      // The rule compiled first: a cold worker's first compile may itself take longer than 100 ms on a loaded machine.
      for (let attempt = 0; attempt < 5; attempt++) {
        const warm = { principal: alice, rule: ADULT_RULE, data: { user: { age: 1 } } };
        const ok = await client.request(ExecSubject.run, warm, RunResponse, { timeoutMs: 10_000 }).then(
          () => true,
          () => false,
        );
        if (ok) break;
        while (exec.pool.readyThreads < 1) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const before = exec.pool.batchStats();
      const { results } = await client.request(ExecSubject.batch, { items: [fast[0], slow, ...fast.slice(1)] }, ExecBatchReply, {
        timeoutMs: 10_000,
      });
      expect(exec.pool.batchStats().tasks - before.tasks).toBe(1);
      expect(results[1]).toMatchObject({ ok: false, error: { code: 'timeout', status: 504 } });
      const others = [results[0], ...results.slice(2)];
      expect(others.map((r) => okData(r)?.result)).toEqual(Array.from({ length: 19 }, (_, i) => 10 + 5 * i >= 18));
    } finally {
      await client.close();
      await exec.close();
      await dropKeys(prefix);
    }
  });
});

describe('exec.run.many per-item deadline', () => {
  it('answers timeout for the item that ran past EXEC_TASK_TIMEOUT_MS, its neighbours in the same chunk normally', async () => {
    const prefix = randomPrefix();
    const exec = await startExecution(
      inProcessKit(
        'exec-many-deadline',
        config(prefix, { EXEC_TASK_TIMEOUT_MS: '100', EXEC_STEP_BUDGET: String(Number.MAX_SAFE_INTEGER) }),
        { logger, metrics: new Registry() },
      ),
    );
    const client = await connectBus({ url: NATS_URL, prefix, name: 'exec-many-deadline-client', logger });
    try {
      const rule = runawayRule(3);
      // ~8 million steps: well past 100 ms even on a quiet machine.
      const slow = { x: { n: Array.from({ length: 200 }, (_, i) => i) } };
      const fast = { x: { n: [1] } };
      // The rule compiled first: a cold worker's first compile may itself take longer than 100 ms on a loaded machine.
      for (let attempt = 0; attempt < 5; attempt++) {
        const ok = await client.request(ExecSubject.run, { principal: alice, rule, data: fast }, RunResponse, { timeoutMs: 10_000 }).then(
          () => true,
          () => false,
        );
        if (ok) break;
        while (exec.pool.readyThreads < 1) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // 20 items: the last-resort cut of the chunk (items × deadline, 2 s) stays far off.
      const items = [fast, slow, ...Array.from({ length: 18 }, () => fast)];
      const { results } = await client.request(ExecSubject.runMany, { principal: alice, rule, trace: false, items }, ExecBatchReply, {
        timeoutMs: 10_000,
      });
      expect(results[1]).toMatchObject({ ok: false, error: { code: 'timeout', status: 504 } });
      expect([results[0], ...results.slice(2)].every((r) => r.ok)).toBe(true);
    } finally {
      await client.close();
      await exec.close();
      await dropKeys(prefix);
    }
  });
});

describe('ExecCoalescer', () => {
  const prefix = randomPrefix();
  let exec: Execution;
  let client: Bus;
  beforeAll(async () => {
    exec = await startExecution(inProcessKit('exec-coalesce', config(prefix), { logger, metrics: new Registry() }));
    client = await connectBus({ url: NATS_URL, prefix, name: 'exec-coalesce-client', logger });
  });
  afterAll(async () => {
    await client?.close();
    await exec?.close();
    await dropKeys(prefix);
  });
  const request = (bus: ExecCoalescer, principal: Principal, data: unknown) =>
    bus.request(ExecSubject.run, { principal, rule: ADULT_RULE, data, trace: false }, RunResponse, { timeoutMs: 5000 });

  it("sends one turn's requests as one message and gives each caller its own answer or error", async () => {
    const coalescer = new ExecCoalescer(client, { enabled: true });
    const replies = await Promise.allSettled([
      request(coalescer, alice, { user: { age: 40 } }),
      request(coalescer, bob, { user: { age: 4 } }),
      request(coalescer, noView, { user: { age: 40 } }),
      request(coalescer, alice, nested(20)),
      request(coalescer, bob, { user: { age: 18 } }),
    ]);
    expect(replies.map((r) => (r.status === 'fulfilled' ? r.value.result : (r.reason as { code: string }).code))).toEqual([
      true,
      false,
      'forbidden',
      'validation_failed',
      true,
    ]);
    expect(coalescer.stats()).toEqual({ single: 0, batches: 1, batchedItems: 5 });
  });

  it('sends a request alone in its turn on its own subject, and everything so when turned off', async () => {
    const on = new ExecCoalescer(client, { enabled: true });
    expect((await request(on, alice, { user: { age: 40 } })).result).toBe(true);
    expect(on.stats()).toEqual({ single: 1, batches: 0, batchedItems: 0 });
    const off = new ExecCoalescer(client, { enabled: false });
    await Promise.all([request(off, alice, { user: { age: 40 } }), request(off, bob, { user: { age: 40 } })]);
    expect(off.stats()).toEqual({ single: 2, batches: 0, batchedItems: 0 });
  });

  it('splits a turn past the item limit and the bus payload limit into several messages', async () => {
    const coalescer = new ExecCoalescer(client, { enabled: true, maxItems: 4 });
    // 10 items of ~200 KB each: at most 4 per message by count, and 4 × 200 KB stays under 1 MB only just.
    const big = { user: { age: 30 }, pad: 'x'.repeat(200_000) };
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => request(coalescer, i % 2 ? alice : bob, big)));
    expect(replies.every((r) => r.result)).toBe(true);
    const stats = coalescer.stats();
    expect(stats.batchedItems + stats.single).toBe(10);
    expect(stats.batches).toBeGreaterThanOrEqual(3);
  });
});

describe('fitReply', () => {
  it('keeps a reply under the limit with the markers of the answers that did not fit counted, in order', () => {
    const answer = (i: number): ExecBatchResult => ({ ok: true, data: { result: true, outcomes: {}, trace: [`${i}`.padEnd(9_000, 'x')] } });
    const results = Array.from({ length: 256 }, (_, i) => answer(i));
    const limit = 100_000;
    const reply = fitReply(results, limit);
    expect(Buffer.byteLength(JSON.stringify({ ok: true, data: reply }), 'utf8')).toBeLessThanOrEqual(limit);
    const fitted = reply.results.filter((r) => r.ok).length;
    expect(fitted).toBeGreaterThan(0);
    expect(reply.results.slice(0, fitted)).toEqual(results.slice(0, fitted));
    expect(reply.results.slice(fitted).every((r) => errCode(r) === 'result_too_large')).toBe(true);
  });
});
