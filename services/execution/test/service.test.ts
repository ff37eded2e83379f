import { ExecSubject, ExplainResponse, OperatorsResponse, RunResponse, ValidateResponse, type ExecRunInput } from '@arbiter/contracts';
import { connectBus, loadConfig, startOpsServer, type Bus } from '@arbiter/service-kit';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecConfig } from '../src/config.js';
import { ruleHash } from '../src/policy-cache.js';
import { startExecution, type Execution } from '../src/service.js';
import {
  ADULT_RULE,
  dropKeys,
  nested,
  NATS_URL,
  randomPrefix,
  rejection,
  REDIS_URL,
  runawayData,
  runawayRule,
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

const run = (req: ExecRunInput) => client.request(ExecSubject.run, req, RunResponse);

beforeAll(async () => {
  exec = await startExecution(config(), { logger, registry, name: 'exec-test' });
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
      trace: [
        'rule "adult" [golden]',
        '  if $.user.age = 30: is greater than or equal to 18 -> true',
        '  => adult = true',
        'result: true',
      ],
    });
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
      expect(await rejection(client.request(subject, { principal: auditorKey, rule: ADULT_RULE }, ValidateResponse))).toMatchObject({ code: 'forbidden' });
    }
    const viewer = { orgId: 'acme', userId: 'vic', role: 'viewer' as const };
    expect((await run({ principal: viewer, rule: ADULT_RULE, data: { user: { age: 30 } } })).result).toBe(true);
  });

  it('answers bad_request for a malformed request', async () => {
    const err = await rejection(client.request(ExecSubject.run, { rule: ADULT_RULE }, RunResponse));
    expect(err.code).toBe('bad_request');
    expect(err.errors?.map((e) => e.path)).toEqual(['data']);
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
    expect(await exec.redis.sismember(`${prefix}:rules`, ruleHash(rule))).toBe(1);
  });

  it('exposes the counters on /metrics', async () => {
    const ops = await startOpsServer({ port: 0, host: '127.0.0.1', registry, ready: exec.ready });
    try {
      const text = await (await fetch(`http://127.0.0.1:${ops.port}/metrics`)).text();
      expect(text).toMatch(/^arbiter_exec_compiles_total [1-9]\d*$/m);
      expect(text).toMatch(/^arbiter_exec_cache_hits_total [1-9]\d*$/m);
      expect((await fetch(`http://127.0.0.1:${ops.port}/readyz`)).status).toBe(200);
    } finally {
      await ops.close();
    }
  });
});

describe('exec.validate, exec.explain, exec.operators', () => {
  it('validates a rule', async () => {
    expect(await client.request(ExecSubject.validate, { rule: ADULT_RULE }, ValidateResponse)).toEqual({ valid: true, error: null });
    const bad = await client.request(ExecSubject.validate, { rule: 'A **user** is' }, ValidateResponse);
    expect(bad.valid).toBe(false);
    expect(bad.error).toMatch(/^Parse error: /);
  });

  it('explains a rule', async () => {
    const explained = await client.request(ExecSubject.explain, { rule: ADULT_RULE }, ExplainResponse);
    expect(explained).toMatchObject({
      rule_count: 1,
      error: null,
      rules: [{ label: null, selector: 'user', outcome: 'adult', conditions: [{ type: 'comparison', property: 'age', value: '18' }] }],
    });
  });

  it('lists the operators', async () => {
    const operators = await client.request(ExecSubject.operators, {}, OperatorsResponse);
    expect(operators.length).toBeGreaterThan(10);
    expect(operators.every((o) => o.forms.length > 0)).toBe(true);
  });

  it('refuses an oversized rule on validate and explain too', async () => {
    const rule = 'x'.repeat(1025);
    expect((await rejection(client.request(ExecSubject.validate, { rule }, ValidateResponse))).code).toBe('payload_too_large');
    expect((await rejection(client.request(ExecSubject.explain, { rule }, ExplainResponse))).code).toBe('payload_too_large');
  });
});

describe('time-out', () => {
  it('aborts a runaway evaluation with timeout and keeps serving', async () => {
    const before = (await exec.metrics.timeouts.get()).values[0]?.value ?? 0;
    const err = await rejection(run({ rule: runawayRule(), data: runawayData, trace: false }));
    expect([err.code, err.status, err.message]).toEqual(['timeout', 504, 'evaluation took longer than 1000 ms']);
    expect((await exec.metrics.timeouts.get()).values[0]?.value).toBe(before + 1);
    await expect(run({ rule: ADULT_RULE, data: { user: { age: 40 } } })).resolves.toMatchObject({ result: true });
  });
});

describe('replicas', () => {
  it('share requests through the queue group', async () => {
    const sharedPrefix = randomPrefix();
    const registries = [new Registry(), new Registry()];
    const replicas = await Promise.all(
      registries.map((r, i) =>
        startExecution(config({ NATS_SUBJECT_PREFIX: sharedPrefix }), { logger, registry: r, name: `replica-${i}` }),
      ),
    );
    const caller = await connectBus({ url: NATS_URL, prefix: sharedPrefix, name: 'replica-caller', logger });
    try {
      const count = 40;
      const replies = await Promise.all(
        Array.from({ length: count }, (_, age) => caller.request(ExecSubject.run, { rule: ADULT_RULE, data: { user: { age } }, trace: false }, RunResponse)),
      );
      expect(replies.map((r) => r.result)).toEqual(Array.from({ length: count }, (_, age) => age >= 18));
      const served = await Promise.all(
        replicas.map(async (e) => ((await e.metrics.compiles.get()).values[0]?.value ?? 0) + ((await e.metrics.cacheHits.get()).values[0]?.value ?? 0)),
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
    const instance = await startExecution(config({ NATS_SUBJECT_PREFIX: closePrefix }), { logger, registry: new Registry() });
    const caller = await connectBus({ url: NATS_URL, prefix: closePrefix, name: 'close-caller', logger });
    try {
      await expect(caller.request(ExecSubject.run, { rule: ADULT_RULE, data: { user: { age: 1 } } }, RunResponse)).resolves.toMatchObject({ result: false });
      await instance.close();
      expect(instance.ready()).toBe(false);
      const err = await rejection(caller.request(ExecSubject.run, { rule: ADULT_RULE, data: {} }, RunResponse));
      expect(err.code).toBe('dependency_unavailable');
    } finally {
      await caller.close();
      await instance.close();
      await dropKeys(closePrefix);
    }
  });
});
