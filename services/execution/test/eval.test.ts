import { ArbiterError, ExecSubject, RunResponse, type EvalSubject, type Principal } from '@arbiter/contracts';
import {
  connectBus,
  decodeReply,
  encodeFrame,
  EvalClient,
  inProcessKit,
  loadConfig,
  type Bus,
  type EvalAnswer,
  type SentRun,
} from '@arbiter/service-kit';
import { compile } from '@arbiter/rule-lang';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecConfig } from '../src/config.js';
import { encodeReply } from '../src/intake/eval-endpoint.js';
import { DEFAULT_CHUNK_POLICY } from '../src/queue/chunking.js';
import { startExecution, type Execution } from '../src/service.js';
import { ADULT_RULE, dropKeys, eventually, nested, NATS_URL, randomPrefix, REDIS_URL, runawayRule, silentLogger } from './helpers.js';

const logger = silentLogger();
const decoder = new TextDecoder();

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

const spec = (principal: Principal, extra: Partial<SentRun> = {}): SentRun => ({
  subject: ExecSubject.run,
  principal,
  rule: ADULT_RULE,
  trace: false,
  timeoutMs: 10_000,
  ...extra,
});
const age = (n: number) => JSON.stringify({ user: { age: n } });
/** An answer as its `result`, or its error code. */
const outcome = (a: EvalAnswer) => (a instanceof ArbiterError ? a.code : (JSON.parse(decoder.decode(a)) as RunResponse).result);
const json = (a: EvalAnswer) => {
  if (a instanceof ArbiterError) throw a;
  return JSON.parse(decoder.decode(a)) as RunResponse;
};

describe('exec.eval', () => {
  const prefix = randomPrefix();
  let exec: Execution;
  let client: Bus;
  let evals: EvalClient;
  beforeAll(async () => {
    exec = await startExecution(inProcessKit('exec-eval', config(prefix), { logger, metrics: new Registry() }));
    client = await connectBus({ url: NATS_URL, prefix, name: 'exec-eval-client', logger });
    evals = new EvalClient(client, { coalesce: true });
  });
  afterAll(async () => {
    await client?.close();
    await exec?.close();
    await dropKeys(prefix);
  });

  it("answers one turn's evaluations of several callers in order, as one message and one worker task", async () => {
    const before = exec.pool.batchStats();
    const sent = evals.stats();
    const ages = [10, 20, 30, 5, 40, 17, 18, 90];
    const answers = await Promise.all(ages.map((n, i) => evals.one(spec(i % 2 === 0 ? alice : bob), age(n))));
    expect(answers.map(outcome)).toEqual(ages.map((n) => n >= 18));
    expect(evals.stats().messages - sent.messages).toBe(1);
    const after = exec.pool.batchStats();
    expect(after.tasks - before.tasks).toBe(1);
    expect(after.items - before.items).toBe(ages.length);
  });

  // The contract the gateway relies on when it forwards answers without decoding them.
  it('answers raw JSON in the contract key order, trace on or off, with nothing but the contract fields', async () => {
    for (const trace of [true, false]) {
      const [answer] = await evals.many(spec(alice, { trace }), [age(30)]);
      const text = decoder.decode(answer as Uint8Array);
      expect(text).toBe(JSON.stringify(RunResponse.parse(JSON.parse(text))));
      expect(Object.keys(JSON.parse(text) as object)).toEqual(['result', 'trace', 'outcomes']);
    }
    const [on] = await evals.many(spec(alice, { trace: true }), [age(30)]);
    const [off] = await evals.many(spec(alice, { trace: false }), [age(30)]);
    // Trace off: the same answer but for an empty trace.
    expect({ ...json(on), trace: [] }).toEqual(json(off));
    expect(json(on).trace.length).toBeGreaterThan(0);
  });

  it('answers each bad item or group with its own error, its neighbours unharmed', async () => {
    const answers = await Promise.all(
      [
        evals.one(spec(alice), age(30)),
        evals.one(spec(alice), '{not json'),
        evals.one(spec(alice), JSON.stringify(nested(20))), // deeper than MAX_DATA_DEPTH (8)
        evals.one(spec(noView), age(30)), // no `view` right
        evals.one(spec(alice, { rule: 'this is not a rule' }), '{}'),
        evals.one(spec(bob), age(12)),
      ].map((p) =>
        p.then(
          (a): EvalAnswer => a,
          (err: ArbiterError) => err,
        ),
      ),
    );
    expect(answers.map(outcome)).toEqual([true, 'internal', 'validation_failed', 'forbidden', false, false]);
    // A rule that does not parse is an engine result, as on `exec.run`.
    expect(json(answers[4]).errorCode).toBe('parse_error');
    expect((answers[3] as ArbiterError).status).toBe(403);
  });

  it('refuses a message whose header breaks the contract as a whole: every item answers bad_request', async () => {
    const body = encodeFrame(
      { principals: [alice], rules: [ADULT_RULE], groups: [{ n: 1, subject: 'exec.nope', principal: 0, trace: true, timeoutMs: 1 }] },
      [age(1)],
    );
    const answers = decodeReply(await client.requestRaw(ExecSubject.eval, body, { timeoutMs: 10_000 }), 1);
    expect(answers.map(outcome)).toEqual(['bad_request']);
    const miscounted = encodeFrame(
      {
        principals: [alice],
        rules: [ADULT_RULE],
        groups: [{ n: 2, subject: 'exec.run', principal: 0, rule: 0, trace: true, timeoutMs: 1000 }],
      },
      [age(1)],
    );
    expect(decodeReply(await client.requestRaw(ExecSubject.eval, miscounted, { timeoutMs: 10_000 }), 1).map(outcome)).toEqual([
      'bad_request',
    ]);
    const missingRule = encodeFrame(
      { principals: [alice], rules: [], groups: [{ n: 1, subject: 'exec.run', principal: 0, rule: 3, trace: true, timeoutMs: 1000 }] },
      [age(1)],
    );
    expect(decodeReply(await client.requestRaw(ExecSubject.eval, missingRule, { timeoutMs: 10_000 }), 1).map(outcome)).toEqual([
      'bad_request',
    ]);
  });

  it('fails the items of a stored-run group that cannot be resolved (no registry answers here), other groups unharmed', async () => {
    const stored = evals.one(
      { ...spec(alice), subject: 'exec.stored.policy.base' as EvalSubject, rule: undefined, id: '00000000-0000-4000-8000-000000000000' },
      '{}',
    );
    const [unresolved, ok] = await Promise.all([
      stored.then(
        () => 'answered',
        (err: ArbiterError) => err.code,
      ),
      evals.one(spec(alice), age(50)),
    ]);
    expect(unresolved).not.toBe('answered');
    expect(outcome(ok)).toBe(true);
  });

  it('runs one rule on many data objects as one job: in order, in one task, each item its own error; a refused caller answers per item', async () => {
    const before = exec.pool.batchStats();
    const answers = await evals.many(spec(alice), [age(40), JSON.stringify(nested(20)), age(3), '{}']);
    expect(answers.map(outcome)).toEqual([true, 'validation_failed', false, false]);
    expect(json(answers[3]).errorCode).toBe('missing_selector');
    expect(exec.pool.batchStats().tasks - before.tasks).toBeLessThanOrEqual(2);
    expect((await evals.many(spec(noView), [age(40), age(1)])).map(outcome)).toEqual(['forbidden', 'forbidden']);
  });

  it('runs 1,000 items of one key as 4 messages of at most 256: all answered, in order, bad items alone, in few tasks', async () => {
    const before = exec.pool.batchStats();
    const sent = evals.stats();
    const ages = Array.from({ length: 1000 }, (_, i) => i % 40);
    const answers = await evals.many(
      spec(alice),
      ages.map((n, i) => (i % 250 === 7 ? JSON.stringify(nested(20)) : age(n))),
    );
    expect(answers).toHaveLength(1000);
    expect(answers.map(outcome)).toEqual(ages.map((n, i) => (i % 250 === 7 ? 'validation_failed' : n >= 18)));
    expect(evals.stats().messages - sent.messages).toBe(4);
    const stats = exec.pool.batchStats();
    expect(stats.items - before.items).toBe(1000);
    // Chunks of the four jobs, sized by measured cost: not one task per item.
    expect(stats.tasks - before.tasks).toBeLessThan(100);
  });
});

/** An execution service with one thread and the step budget out of reach, so only a deadline stops a slow item. */
/**
 * Data on which `runawayRule(3)` takes about `targetMs` on this machine: n³ steps, n sized from the
 * best of five timed runs of 60³ steps in this process. A fixed n is luck: 450³ steps took 200 ms
 * to 1.2 s on one day and 4 s on another on the same kind of machine.
 */
function slowData(targetMs: number): string {
  const policy = compile(runawayRule(3));
  const probe = { x: { n: Array.from({ length: 60 }, (_, i) => i) } };
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    policy.evaluate(probe, { stepBudget: Number.MAX_SAFE_INTEGER });
    best = Math.min(best, performance.now() - started);
  }
  const n = Math.max(60, Math.round(60 * Math.cbrt(targetMs / Math.max(best, 0.01))));
  return JSON.stringify({ x: { n: Array.from({ length: n }, (_, i) => i) } });
}

/**
 * An item past a 100 ms task deadline (about 250 ms), yet within the last-resort cut of the task it
 * shares with its neighbours (items × 100 ms: at least 500 ms for the five-item chunk it lands in).
 */
const SLOW = slowData(250);
/** An item that holds the one worker thread for about 2 s. */
const BLOCKER = slowData(2000);

function deadlineService(name: string, taskTimeoutMs: number) {
  const prefix = randomPrefix();
  const state = {} as { exec: Execution; client: Bus };
  beforeAll(async () => {
    state.exec = await startExecution(
      inProcessKit(
        name,
        config(prefix, { EXEC_TASK_TIMEOUT_MS: String(taskTimeoutMs), EXEC_STEP_BUDGET: String(Number.MAX_SAFE_INTEGER) }),
        {
          logger,
          metrics: new Registry(),
        },
      ),
    );
    state.client = await connectBus({ url: NATS_URL, prefix, name: `${name}-client`, logger });
    // The rules compiled first: a cold worker's first compile may itself take long on a loaded machine.
    const warm = new EvalClient(state.client, { coalesce: false });
    for (const rule of [ADULT_RULE, runawayRule(3)]) await warm.many(spec(alice, { rule }), ['{"x":{"n":[1]}}']);
  });
  afterAll(async () => {
    await state.client?.close();
    await state.exec?.close();
    await dropKeys(prefix);
  });
  return state;
}

describe('exec.eval per-item deadline', () => {
  const service = deadlineService('exec-eval-item-deadline', 100);

  it('answers timeout for the item that ran past EXEC_TASK_TIMEOUT_MS, its neighbours normally', async () => {
    const evals = new EvalClient(service.client, { coalesce: true });
    const fast = '{"x":{"n":[1]}}';
    const answers = await evals.many(spec(bob, { rule: runawayRule(3) }), [fast, SLOW, ...Array.from({ length: 38 }, () => fast)]);
    expect(answers[1]).toMatchObject({ code: 'timeout', status: 504 });
    expect([answers[0], ...answers.slice(2)].every((a) => !(a instanceof ArbiterError))).toBe(true);
  });
});

// Work whose caller has gone is dropped before it runs.
describe("exec.eval caller's deadline", () => {
  const service = deadlineService('exec-eval-caller-deadline', 5000);

  it('drops the items of a caller who stopped waiting before they could start: answered timeout, never run', async () => {
    const { exec, client } = service;
    const evals = new EvalClient(client, { coalesce: false });
    // One thread: bob's slow item holds it.
    const blocker = evals.many(spec(bob, { rule: runawayRule(3) }), [BLOCKER]);
    await eventually(() => expect(exec.pool.stats().running).toBe(1));
    const evaluated = async () =>
      (await exec.metrics.cacheHits.get()).values[0].value + (await exec.metrics.compiles.get()).values[0].value;
    const before = await evaluated();
    // Alice waits 50 ms for 50 items: gone long before the thread is free.
    const abandoned = await evals.many(
      spec(alice, { timeoutMs: 50 }),
      Array.from({ length: 50 }, (_, i) => age(i)),
    );
    expect(abandoned.every((a) => a instanceof ArbiterError && a.code === 'timeout')).toBe(true);
    await blocker;
    // Not one of alice's items was evaluated (bob's blocker counts once).
    expect((await evaluated()) - before).toBeLessThanOrEqual(1);
    expect(exec.pool.stats()).toEqual({ queued: 0, running: 0, callers: 0, persons: 0 });
  });

  it('counts the time a message spent on the way (`sentAt`) against its wait: a message older than its timeout runs nothing', async () => {
    const { exec, client } = service;
    const evaluated = async () =>
      (await exec.metrics.cacheHits.get()).values[0].value + (await exec.metrics.compiles.get()).values[0].value;
    const frame = (sentAt: number) =>
      encodeFrame(
        {
          principals: [alice],
          rules: [ADULT_RULE],
          groups: [{ n: 3, subject: 'exec.run', principal: 0, rule: 0, trace: false, timeoutMs: 2000 }],
          sentAt,
        },
        [age(20), age(30), age(40)],
      );
    const before = await evaluated();
    // Sent 5 s ago with 2 s to wait: its sender gave up 3 s ago.
    const stale = decodeReply(await client.requestRaw(ExecSubject.eval, frame(Date.now() - 5000), { timeoutMs: 10_000 }), 3);
    expect(stale.map(outcome)).toEqual(['timeout', 'timeout', 'timeout']);
    expect(await evaluated()).toBe(before);
    // The same message sent now runs.
    const fresh = decodeReply(await client.requestRaw(ExecSubject.eval, frame(Date.now()), { timeoutMs: 10_000 }), 3);
    expect(fresh.map(outcome)).toEqual([true, true, true]);
  });
});

describe('EvalClient', () => {
  const prefix = randomPrefix();
  let exec: Execution;
  let client: Bus;
  beforeAll(async () => {
    exec = await startExecution(inProcessKit('exec-evalclient', config(prefix), { logger, metrics: new Registry() }));
    client = await connectBus({ url: NATS_URL, prefix, name: 'exec-evalclient-client', logger });
  });
  afterAll(async () => {
    await client?.close();
    await exec?.close();
    await dropKeys(prefix);
  });

  it("sends one turn's requests as one message, and one message per call when coalescing is off", async () => {
    const on = new EvalClient(client, { coalesce: true });
    await Promise.all([on.one(spec(alice), age(40)), on.one(spec(bob), age(4)), on.many(spec(alice), [age(1), age(2)])]);
    expect(on.stats()).toEqual({ messages: 1, items: 4 });
    const off = new EvalClient(client, { coalesce: false });
    await Promise.all([off.one(spec(alice), age(40)), off.one(spec(bob), age(40))]);
    expect(off.stats()).toEqual({ messages: 2, items: 2 });
  });

  it('splits a turn past the item limit and the bus payload limit into several messages', async () => {
    const evals = new EvalClient(client, { coalesce: true, maxItems: 4 });
    // 10 items of ~200 KB each: at most 4 per message by count, and 4 × 200 KB stays under 1 MB only just.
    const big = JSON.stringify({ user: { age: 30 }, pad: 'x'.repeat(200_000) });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => evals.one(spec(i % 2 ? alice : bob), big)));
    expect(answers.map(outcome).every((r) => r === true)).toBe(true);
    expect(evals.stats().messages).toBeGreaterThanOrEqual(3);
    // An item larger than the bus allows is refused alone.
    const huge = 'x'.repeat(2 * 1024 * 1024);
    const [tooLarge, fine] = await evals.many(spec(alice), [JSON.stringify({ huge }), age(30)]);
    expect(outcome(tooLarge)).toBe('payload_too_large');
    expect(outcome(fine)).toBe(true);
  });

  it('asks again, in smaller messages, for answers that did not fit in a reply', async () => {
    // Long traces: 200 answers of ~10 KB cannot share one 1 MiB reply.
    const rule = `A **user** is adult if ${Array.from({ length: 150 }, (_, i) => `the __age__ of the **user** is at least ${i}`).join(' and ')}.`;
    const evals = new EvalClient(client, { coalesce: true });
    const answers = await evals.many(
      spec(alice, { rule, trace: true }),
      Array.from({ length: 200 }, () => JSON.stringify({ user: { age: 500 }, pad: 'y'.repeat(4000) })),
    );
    expect([...new Set(answers.map(outcome))]).toEqual([true]);
    expect(evals.stats().messages).toBeGreaterThan(1);
  });
});

describe('exec.eval reply budget', () => {
  const prefix = randomPrefix();
  let exec: Execution;
  let client: Bus;
  beforeAll(async () => {
    exec = await startExecution(inProcessKit('exec-eval-budget', config(prefix), { logger, metrics: new Registry() }));
    client = await connectBus({ url: NATS_URL, prefix, name: 'exec-eval-budget-client', logger });
  });
  afterAll(async () => {
    await client?.close();
    await exec?.close();
    await dropKeys(prefix);
  });

  it('does not run the items whose answers cannot fit in the reply: they answer result_too_large, unrun', async () => {
    const ITEMS = 256;
    // ~27 KB of trace an answer: about 35 of 256 fit in a 1 MiB reply. A chunk holds at most about
    // 5 ms of work, each item charged 1 ms a megabyte of answer besides its run: at most ~185 items.
    const rule = `A **user** is adult if ${Array.from({ length: 400 }, (_, i) => `the __age__ of the **user** is at least ${i}`).join(' and ')}.`;
    const evaluated = async () =>
      (await exec.metrics.cacheHits.get()).values[0].value + (await exec.metrics.compiles.get()).values[0].value;
    const before = await evaluated();
    const body = encodeFrame(
      {
        principals: [alice],
        rules: [rule],
        groups: [{ n: ITEMS, subject: 'exec.run', principal: 0, rule: 0, trace: true, timeoutMs: 30_000 }],
      },
      Array.from({ length: ITEMS }, () => age(500)),
    );
    const answers = decodeReply(await client.requestRaw(ExecSubject.eval, body, { timeoutMs: 30_000 }), ITEMS);
    const fitted = answers.filter((a) => !(a instanceof ArbiterError)).length;
    expect(fitted).toBeGreaterThan(10);
    expect(answers.slice(fitted).every((a) => a instanceof ArbiterError && a.code === 'result_too_large')).toBe(true);
    // Those that did not fit were not evaluated, but for the chunk in flight when the reply filled
    // (as large as the items' measured cost allows: up to a whole chunk on a fast machine).
    const ran = (await evaluated()) - before;
    expect(ran).toBeLessThan(ITEMS);
    expect(ran).toBeLessThanOrEqual(fitted + DEFAULT_CHUNK_POLICY.maxItems);
  });
});

describe('encodeReply', () => {
  it('keeps a reply under the limit, answers that did not fit marked result_too_large, in order', () => {
    const answers = Array.from({ length: 256 }, (_, i) =>
      new TextEncoder().encode(JSON.stringify({ result: true, trace: [`${i}`.padEnd(9_000, 'x')] })),
    );
    const limit = 100_000;
    const reply = encodeReply(answers, limit);
    expect(reply.byteLength).toBeLessThanOrEqual(limit);
    const decoded = decodeReply(reply, 256);
    const fitted = decoded.findIndex((a) => a instanceof ArbiterError);
    expect(fitted).toBeGreaterThan(0);
    expect(decoded.slice(0, fitted).map((a) => decoder.decode(a as Uint8Array))).toEqual(
      answers.slice(0, fitted).map((a) => decoder.decode(a)),
    );
    expect(decoded.slice(fitted).every((a) => a instanceof ArbiterError && a.code === 'result_too_large')).toBe(true);
  });
});
