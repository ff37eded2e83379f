import {
  ExecSubject,
  ExplainResponse,
  isArbiterError,
  OperatorsResponse,
  RunResponse,
  ValidateResponse,
  type ArbiterError,
  type Principal,
} from '@arbiter/contracts';
import { connectBus, inProcessKit, loadConfig, startOpsServer, type Bus } from '@arbiter/service-kit';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecConfig } from '../src/config.js';
import { ruleHash } from '@arbiter/run/caches';
import { decodeReply, encodeFrame } from '@arbiter/service-kit';
import { startExecution, type Execution } from '../src/service.js';
import {
  ADULT_RULE,
  dropKeys,
  eventually,
  nested,
  NATS_URL,
  randomPrefix,
  rejection,
  REDIS_URL,
  runawayData,
  runawayRule,
  runOne,
  silentLogger,
} from './helpers.js';

const prefix = randomPrefix();
const logger = silentLogger();

function config(overrides: Record<string, string> = {}): ExecConfig {
  return loadConfig(ExecConfig, {
    NATS_URL,
    REDIS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    EXEC_POOL_SIZE: '1',
    EXEC_INDEX_FLUSH_MS: '600000',
    MAX_RULE_BYTES: '1024',
    MAX_DATA_DEPTH: '8',
    ...overrides,
  });
}

let exec: Execution;
let client: Bus;
const registry = new Registry();

/** The caller of the tests' requests (every bus request carries one). */
const tester = { orgId: 'acme', userId: 'tester', role: 'viewer' as const };
/** An unsaved rule's run as the gateway sends it: an `exec.run` group of `exec.eval`. */
interface RuleRun {
  principal?: Principal;
  rule: string;
  data: unknown;
  trace?: boolean;
  now?: string;
}
const runVia = (bus: Bus, { principal, data, ...rest }: RuleRun) =>
  runOne(bus, { subject: ExecSubject.run, principal: principal ?? tester, ...rest }, data, RunResponse);
const run = (req: RuleRun) => runVia(client, req);

beforeAll(async () => {
  exec = await startExecution(inProcessKit('exec-test', config(), { logger, metrics: registry }));
  client = await connectBus({ url: NATS_URL, prefix, name: 'exec-test-client', logger });
});

afterAll(async () => {
  await client?.close();
  await exec?.close();
  await dropKeys(prefix);
});

describe('exec.run', () => {
  it('evaluates a rule and returns result, outcomes and trace', async () => {
    const reply = await run({ rule: ADULT_RULE, data: { user: { age: 30 } } });
    expect(reply).toEqual({
      result: true,
      outcomes: { adult: true },
      trace: ['rule "adult" [golden]', '  if $.user.age = 30: is greater than or equal to 18 -> true', '  => adult = true', 'result: true'],
    });
  });

  it('cuts a trace larger than MAX_TRACE_BYTES, ending it with a marker, so the reply fits the bus', async () => {
    // 14,000 items: the whole trace made a reply over NATS's 1 MiB max payload (answered 500 before)
    const reply = await run({
      rule: 'if any of o.items satisfies (its.p == 5) -> ok.',
      data: { o: { items: Array(14_000).fill({ p: 1 }) } },
    });
    expect(reply.result).toBe(false);
    expect(reply.trace.at(-2)).toMatch(/^… trace cut: \d+ more lines \(a trace is limited to 262144 bytes\)$/);
    // 14,000 traced items also pass the traced step budget: the kept last line is that error.
    expect(reply.errorCode).toBe('budget_exceeded');
    expect(reply.trace.at(-1)).toBe(`error: ${reply.error}`);
    expect(Buffer.byteLength(JSON.stringify(reply.trace))).toBeLessThan(262_144 + 200);
  });

  it('never reads a prototype member as data: every Object/Array.prototype name is a missing property unless the data has it', async () => {
    for (const name of [...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)]) {
      const rule = `if x.${name} == 1 -> ok.`;
      expect((await run({ rule, data: { x: {} }, trace: false })).errorCode, name).toBe('missing_property');
      expect((await run({ rule, data: { x: { [name]: 1 } }, trace: false })).result, name).toBe(true);
    }
  });

  it('leaves the trace out when asked', async () => {
    expect(await run({ rule: ADULT_RULE, data: { user: { age: 3 } }, trace: false })).toEqual({
      result: false,
      outcomes: { adult: false },
      trace: [],
    });
  });

  it('evaluates against the given clock', async () => {
    const rule = 'A **user** is adult if the __born__ of the **user** is older than 18 years.';
    const data = { user: { born: '2000-06-01' } };
    expect((await run({ rule, data, now: '2018-05-31T12:00:00Z' })).result).toBe(false);
    expect((await run({ rule, data, now: '2018-06-02T12:00:00Z' })).result).toBe(true);
  });

  it('answers a parse error as a result', async () => {
    const reply = await run({ rule: 'A **user** is adult if.', data: {} });
    expect(reply.result).toBe(false);
    expect(reply.errorCode).toBe('parse_error');
    expect(reply.error).toMatch(/^Parse error: line 1, column \d+: /);
  });

  it('answers missing data as a result', async () => {
    expect(await run({ rule: ADULT_RULE, data: { user: {} }, trace: false })).toEqual({
      result: false,
      outcomes: {},
      trace: [],
      error: 'Missing property: user.age',
      errorCode: 'missing_property',
    });
    const missingSelector = await run({ rule: ADULT_RULE, data: {} });
    expect([missingSelector.errorCode, missingSelector.error]).toEqual(['missing_selector', 'Missing selector: user']);
  });

  it('refuses an oversized rule with payload_too_large before any worker sees it', async () => {
    const compiles = await exec.metrics.compiles.get();
    const rule = `${ADULT_RULE} # ${'x'.repeat(1024)}`;
    const err = await rejection(run({ rule, data: {} }));
    expect([err.code, err.status]).toEqual(['payload_too_large', 413]);
    expect(err.message).toMatch(/^rule text is \d+ bytes: the limit is 1024 bytes$/);
    expect((await exec.metrics.compiles.get()).values).toEqual(compiles.values);
  });

  it('refuses data nested deeper than the limit with validation_failed', async () => {
    const err = await rejection(run({ rule: ADULT_RULE, data: nested(9) }));
    expect([err.code, err.status, err.message]).toEqual(['validation_failed', 400, 'data is nested deeper than 8 levels']);
    await expect(run({ rule: ADULT_RULE, data: { user: { age: 20 }, deep: nested(7) } })).resolves.toMatchObject({ result: true });
    const refused = await exec.metrics.refused.get();
    expect(refused.values.map((v) => v.labels.reason).sort()).toEqual(['data_depth', 'rule_size']);
  });

  it('re-checks the caller: a principal without view is refused, one with view runs', async () => {
    const auditorKey = { orgId: 'acme', userId: 'aud', role: 'auditor' as const, apiKeyId: 'k1', scopes: ['audit' as const] };
    const err = await rejection(run({ principal: auditorKey, rule: ADULT_RULE, data: { user: { age: 30 } } }));
    expect(err).toMatchObject({ code: 'forbidden', status: 403 });
    for (const subject of [ExecSubject.validate, ExecSubject.explain]) {
      expect(await rejection(client.request(subject, { principal: auditorKey, rule: ADULT_RULE }, ValidateResponse))).toMatchObject({
        code: 'forbidden',
      });
    }
    const viewer = { orgId: 'acme', userId: 'vic', role: 'viewer' as const };
    expect((await run({ principal: viewer, rule: ADULT_RULE, data: { user: { age: 30 } } })).result).toBe(true);
  });

  it('answers bad_request for a malformed request', async () => {
    const header = { principals: [tester], rules: [ADULT_RULE], groups: [{ n: 1, subject: ExecSubject.run, principal: 0, rule: 0 }] };
    const [err] = decodeReply(await client.requestRaw(ExecSubject.eval, encodeFrame(header, ['{}']), { timeoutMs: 5000 }), 1);
    expect(isArbiterError(err, 'bad_request')).toBe(true);
    expect((err as ArbiterError).errors?.map((e) => e.path)).toEqual(['groups.0.trace', 'groups.0.timeoutMs']);
  });

  it('has one road: nothing answers the JSON single-run subject `exec.run` any more', async () => {
    const err = await rejection(client.request(ExecSubject.run, { principal: tester, rule: ADULT_RULE, data: {} }, RunResponse));
    expect(err.code).toBe('dependency_unavailable');
  });

  it('refuses a request that carries no principal (every bus request names its caller)', async () => {
    const header = {
      principals: [],
      rules: [ADULT_RULE],
      groups: [{ n: 1, subject: ExecSubject.run, principal: 0, rule: 0, trace: true, timeoutMs: 5000 }],
    };
    const [refused] = decodeReply(await client.requestRaw(ExecSubject.eval, encodeFrame(header, ['{}']), { timeoutMs: 5000 }), 1);
    expect(isArbiterError(refused, 'bad_request'), ExecSubject.eval).toBe(true);
    expect((refused as ArbiterError).errors?.map((e) => e.path)).toContain('principals');
    for (const [subject, body] of [
      [ExecSubject.validate, { rule: ADULT_RULE }],
      [ExecSubject.operators, {}],
    ] as const) {
      const err = await rejection(client.request(subject, body, RunResponse));
      expect(err.code, subject).toBe('bad_request');
      expect(err.errors?.map((e) => e.path)).toContain('principal');
    }
  });
});

describe('compile cache and rule index', () => {
  it('compiles a repeated rule once per worker, counts it in metrics and indexes it in Redis', async () => {
    const rule = 'A **order** is big if the __total__ of the **order** is greater than 1000.';
    const compiles = (await exec.metrics.compiles.get()).values[0]?.value ?? 0;
    const hits = (await exec.metrics.cacheHits.get()).values[0]?.value ?? 0;
    await run({ rule, data: { order: { total: 5 } } });
    await run({ rule, data: { order: { total: 5000 } } });
    expect((await exec.metrics.compiles.get()).values[0]?.value).toBe(compiles + 1);
    expect((await exec.metrics.cacheHits.get()).values[0]?.value).toBe(hits + 1);

    await exec.index.flush();
    expect(await exec.index.get(ruleHash(rule))).toMatchObject({ size: Buffer.byteLength(rule), runs: 2, compiles: 1 });
    expect(Number(await exec.redis.zscore(`${prefix}:rules`, ruleHash(rule)))).toBeGreaterThan(0);
    expect(await exec.redis.ttl(exec.index.key(ruleHash(rule)))).toBeGreaterThan(0);
  });

  it('exposes the counters on /metrics', async () => {
    const ops = await startOpsServer({ port: 0, host: '127.0.0.1', registry, ready: exec.ready });
    try {
      const text = await (await fetch(`http://127.0.0.1:${ops.port}/metrics`)).text();
      expect(text).toMatch(/^arbiter_exec_compiles_total [1-9]\d*$/m);
      expect(text).toMatch(/^arbiter_exec_cache_hits_total [1-9]\d*$/m);
      expect(text).toMatch(/^arbiter_exec_queue_waiting 0$/m);
      expect(text).toMatch(/^arbiter_exec_queue_running 0$/m);
      expect(text).toMatch(/^arbiter_exec_queue_callers 0$/m);
      expect(text).toMatch(/^arbiter_exec_budget_exceeded_total \d+$/m);
      expect((await fetch(`http://127.0.0.1:${ops.port}/readyz`)).status).toBe(200);
    } finally {
      await ops.close();
    }
  });
});

describe('exec.validate, exec.explain, exec.operators', () => {
  it('validates a rule', async () => {
    expect(await client.request(ExecSubject.validate, { principal: tester, rule: ADULT_RULE }, ValidateResponse)).toEqual({
      valid: true,
      error: null,
    });
    const bad = await client.request(ExecSubject.validate, { principal: tester, rule: 'A **user** is' }, ValidateResponse);
    expect(bad.valid).toBe(false);
    expect(bad.error).toMatch(/^Parse error: /);
  });

  it('explains a rule', async () => {
    const explained = await client.request(ExecSubject.explain, { principal: tester, rule: ADULT_RULE }, ExplainResponse);
    expect(explained).toMatchObject({
      rule_count: 1,
      error: null,
      rules: [{ label: null, selector: 'user', outcome: 'adult', conditions: [{ type: 'comparison', property: 'age', value: '18' }] }],
    });
  });

  it('lists the operators', async () => {
    const operators = await client.request(ExecSubject.operators, { principal: tester }, OperatorsResponse);
    expect(operators.length).toBeGreaterThan(10);
    expect(operators.every((o) => o.forms.length > 0)).toBe(true);
  });

  it('refuses an oversized rule on validate and explain too', async () => {
    const rule = 'x'.repeat(1025);
    expect((await rejection(client.request(ExecSubject.validate, { principal: tester, rule }, ValidateResponse))).code).toBe(
      'payload_too_large',
    );
    expect((await rejection(client.request(ExecSubject.explain, { principal: tester, rule }, ExplainResponse))).code).toBe(
      'payload_too_large',
    );
  });
});

describe('step budget', () => {
  it('stops a runaway evaluation with budget_exceeded as a result, no time-out, the worker kept', async () => {
    const before = (await exec.metrics.timeouts.get()).values[0]?.value ?? 0;
    const reply = await run({ rule: runawayRule(), data: runawayData, trace: false });
    expect(reply).toEqual({
      result: false,
      outcomes: {},
      trace: [],
      error: 'Budget exceeded: the evaluation needs more than 1000000 steps',
      errorCode: 'budget_exceeded',
    });
    const traced = await run({ rule: runawayRule(), data: runawayData });
    expect(traced.error).toBe('Budget exceeded: the evaluation needs more than 10000 steps');
    expect(traced.trace.length).toBeGreaterThan(1000);
    expect((await exec.metrics.timeouts.get()).values[0]?.value ?? 0).toBe(before);
    expect((await exec.metrics.budgetExceeded.get()).values[0]?.value).toBeGreaterThanOrEqual(2);
    await expect(run({ rule: ADULT_RULE, data: { user: { age: 40 } } })).resolves.toMatchObject({ result: true });
  });

  it('is configurable (EXEC_STEP_BUDGET, EXEC_TRACE_STEP_BUDGET)', async () => {
    const own = randomPrefix();
    const instance = await startExecution(
      inProcessKit('exec-budget', config({ NATS_SUBJECT_PREFIX: own, EXEC_STEP_BUDGET: '5', EXEC_TRACE_STEP_BUDGET: '3' }), {
        logger,
        metrics: new Registry(),
      }),
    );
    const caller = await connectBus({ url: NATS_URL, prefix: own, name: 'exec-budget-client', logger });
    try {
      const rule = 'if any of x.n satisfies (its > 100) -> big.';
      const ask = (n: number, trace: boolean) => runVia(caller, { rule, data: { x: { n: Array.from({ length: n }, () => 1) } }, trace });
      // n elements: n comparisons + n element steps + n for the size of nothing (numbers cost nothing).
      expect((await ask(2, false)).errorCode).toBeUndefined();
      expect((await ask(3, false)).error).toBe('Budget exceeded: the evaluation needs more than 5 steps');
      expect((await ask(1, true)).errorCode).toBeUndefined();
      expect((await ask(2, true)).error).toBe('Budget exceeded: the evaluation needs more than 3 steps');
    } finally {
      await caller.close();
      await instance.close();
      await dropKeys(own);
    }
  });
});

describe('time-out', () => {
  it('aborts an evaluation past EXEC_TASK_TIMEOUT_MS (budget out of reach) with timeout and keeps serving', async () => {
    const own = randomPrefix();
    const metrics = new Registry();
    const instance = await startExecution(
      inProcessKit('exec-timeout', config({ NATS_SUBJECT_PREFIX: own, EXEC_STEP_BUDGET: String(Number.MAX_SAFE_INTEGER) }), {
        logger,
        metrics,
      }),
    );
    const caller = await connectBus({ url: NATS_URL, prefix: own, name: 'exec-timeout-client', logger });
    try {
      const err = await rejection(runVia(caller, { rule: runawayRule(), data: runawayData, trace: false }));
      expect([err.code, err.status, err.message]).toEqual(['timeout', 504, 'evaluation took longer than 1000 ms']);
      expect((await instance.metrics.timeouts.get()).values[0]?.value).toBe(1);
      // The terminated worker's replacement takes no task until it has loaded the engine.
      await eventually(() => expect(instance.pool.readyThreads).toBeGreaterThanOrEqual(1));
      const after = { principal: tester, rule: ADULT_RULE, data: { user: { age: 40 } } };
      await expect(runVia(caller, after)).resolves.toMatchObject({ result: true });
    } finally {
      await caller.close();
      await instance.close();
      await dropKeys(own);
    }
  });
});

describe('replicas', () => {
  it('share requests through the queue group', async () => {
    const sharedPrefix = randomPrefix();
    const registries = [new Registry(), new Registry()];
    const replicas = await Promise.all(
      registries.map((r, i) =>
        // 40 requests at once from one (anonymous) caller: above the default per-caller limit.
        startExecution(
          inProcessKit(`replica-${i}`, config({ NATS_SUBJECT_PREFIX: sharedPrefix, EXEC_CALLER_MAX: '100' }), { logger, metrics: r }),
        ),
      ),
    );
    const caller = await connectBus({ url: NATS_URL, prefix: sharedPrefix, name: 'replica-caller', logger });
    try {
      const count = 40;
      const replies = await Promise.all(
        Array.from({ length: count }, (_, age) => runVia(caller, { rule: ADULT_RULE, data: { user: { age } }, trace: false })),
      );
      expect(replies.map((r) => r.result)).toEqual(Array.from({ length: count }, (_, age) => age >= 18));
      const served = await Promise.all(
        replicas.map(
          async (e) => ((await e.metrics.compiles.get()).values[0]?.value ?? 0) + ((await e.metrics.cacheHits.get()).values[0]?.value ?? 0),
        ),
      );
      expect(served[0] + served[1]).toBe(count);
      expect(served[0]).toBeGreaterThan(0);
      expect(served[1]).toBeGreaterThan(0);
    } finally {
      await caller.close();
      await Promise.all(replicas.map((e) => e.close()));
      await dropKeys(sharedPrefix);
    }
  });
});

describe('close', () => {
  it('stops answering: callers get dependency_unavailable', async () => {
    const closePrefix = randomPrefix();
    const instance = await startExecution(
      inProcessKit('execution', config({ NATS_SUBJECT_PREFIX: closePrefix }), { logger, metrics: new Registry() }),
    );
    const caller = await connectBus({ url: NATS_URL, prefix: closePrefix, name: 'close-caller', logger });
    try {
      await expect(runVia(caller, { rule: ADULT_RULE, data: { user: { age: 1 } } })).resolves.toMatchObject({
        result: false,
      });
      await instance.close();
      expect(instance.ready()).toBe(false);
      const err = await rejection(runVia(caller, { rule: ADULT_RULE, data: {} }));
      expect(err.code).toBe('dependency_unavailable');
    } finally {
      await caller.close();
      await instance.close();
      await dropKeys(closePrefix);
    }
  });
});
