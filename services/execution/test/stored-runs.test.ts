/**
 * Stored runs over real NATS, Redis and PostgreSQL: this execution service beside a registry
 * (started in-process from its build) that writes the runnable index and answers `*.resolve`.
 */

import { randomBytes } from 'node:crypto';
import {
  ArbiterError,
  ArbiterEvent,
  eventStreamName,
  FlowPublishReviewedReply,
  FlowRecord,
  FlowRunResponse,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject,
  ShadowReport,
  ShadowSubject,
  runnableBaseKey,
  runnableRecordKey,
  StoredFlowRunResponse,
  StoredPolicyRunResponse,
  StoredRunSubject,
  type FlowDefinition,
  type FlowTestInput,
  type Principal,
  type EvalSubject,
} from '@arbiter/contracts';
import { connectBus, EvalClient, inProcessKit, loadConfig, RedisOutbox, type Bus } from '@arbiter/service-kit';
import { dropDatabases, testServers } from '@arbiter/test-kit';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ExecConfig } from '../src/config.js';
import { ExecutedEvents } from '../src/recording/executed-events.js';
import { ExecMetrics } from '../src/metrics.js';
import { executedOutboxKey, startExecution, type Execution } from '../src/service.js';
import { dropKeys, eventually, NATS_URL, randomPrefix, rejection, REDIS_URL, runOne, silentLogger } from './helpers.js';

const PG_URL = testServers().postgres;
const prefix = randomPrefix();
const database = `arbiter_exec_test_${randomBytes(5).toString('hex')}`;
const logger = silentLogger();
const metrics = new Registry();

interface RunningRegistry {
  close(): Promise<void>;
}

let registry: RunningRegistry;
let exec: Execution;
let client: Bus;
let redis: Redis;
let jsm: JetStreamManager;

const acme: Principal = { orgId: 'acme', userId: 'admin', role: 'admin', apiKeyId: 'key-1' };
const globex: Principal = { orgId: 'globex', userId: 'boss', role: 'admin' };
const ADULT = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';

const reg = <T>(subject: string, payload: Record<string, unknown>, reply: z.ZodType<T>) =>
  client.request(subject, { principal: acme, ...payload }, reply, { timeoutMs: 20_000 });
const createPolicy = (rule: string, schema: Record<string, unknown> | null = null) =>
  reg(RegistrySubject.policyCreate, { name: 'p', rule, schema }, PolicyRecord);
/** A stored run as the gateway sends it: an `exec.eval` group of one, `subject` naming what runs. */
interface StoredRunInput {
  principal: Principal;
  id: string;
  data: unknown;
  trace?: boolean;
}
const stored = <T>(subject: string, { data, ...req }: StoredRunInput, reply: z.ZodType<T>) =>
  runOne(client, { ...req, subject: subject as EvalSubject }, data, reply);
const runPolicy = (subject: string, req: StoredRunInput) => stored(subject, req, StoredPolicyRunResponse);
const runFlow = (subject: string, req: StoredRunInput) => stored(subject, req, StoredFlowRunResponse);

async function counter(name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await metrics.getSingleMetric(name)?.get();
  return (m?.values ?? []).filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((n, v) => n + v.value, 0);
}

beforeAll(async () => {
  const dbUrl = new URL(PG_URL);
  dbUrl.pathname = `/${database}`;
  // The registry is another workspace package with no library entry: load its build directly.
  const { startRegistry } = await import('../../registry/dist/service.js');
  const { RegistryConfig } = await import('../../registry/dist/config.js');
  registry = await startRegistry(
    inProcessKit(
      'registry',
      RegistryConfig.parse({
        NATS_URL,
        REDIS_URL,
        DATABASE_URL: dbUrl.toString(),
        NATS_SUBJECT_PREFIX: prefix,
        LOG_LEVEL: 'silent',
        REGISTRY_OUTBOX_INTERVAL_MS: '100',
      }),
      { logger },
    ),
  );
  exec = await startExecution(
    inProcessKit(
      'exec-stored-test',
      loadConfig(ExecConfig, {
        NATS_URL,
        REDIS_URL,
        NATS_SUBJECT_PREFIX: prefix,
        EXEC_POOL_SIZE: '1',
        EXEC_INDEX_FLUSH_MS: '600000',
        EVENTS_FLUSH_MS: '100',
        EXEC_SHADOW_MAX: '4',
        EXEC_SHADOW_FLUSH_MS: '50',
      }),
      { logger, metrics: metrics },
    ),
  );
  client = await connectBus({ url: NATS_URL, prefix, name: 'exec-stored-test-client', logger });
  redis = new Redis(REDIS_URL);
  jsm = await jetstreamManager(client.nc);
}, 60_000);

afterAll(async () => {
  await exec?.close();
  await registry?.close();
  await jsm?.streams.delete(eventStreamName(prefix)).catch(() => undefined);
  await client?.close();
  redis?.disconnect();
  await dropKeys(prefix);
  await dropDatabases(PG_URL, [database]);
});

describe('stored policy runs', () => {
  it('resolves from the Redis index and compiles a rule once per worker, looked up by its hash', async () => {
    const p = await createPolicy(ADULT);
    const fromRedis = await counter('arbiter_exec_resolutions_total', { source: 'redis' });
    const compiles = await counter('arbiter_exec_compiles_total');
    for (let i = 0; i < 3; i++) {
      const reply = await runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: p.baseId, data: { applicant: { age: 30 } } });
      expect(reply).toMatchObject({ result: true, outcomes: { adult: true }, policyId: p.policyId, baseId: p.baseId, version: null });
    }
    expect(await counter('arbiter_exec_resolutions_total', { source: 'redis' })).toBe(fromRedis + 3);
    expect(await counter('arbiter_exec_compiles_total')).toBe(compiles + 1);
  });

  it('asks the registry only on an index miss, which writes the entries back', async () => {
    const p = await createPolicy(ADULT);
    await redis.del(runnableBaseKey(prefix, 'policy', p.baseId), runnableRecordKey(prefix, 'policy', p.policyId));
    const fromRegistry = await counter('arbiter_exec_resolutions_total', { source: 'registry' });
    const reply = await runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: p.baseId, data: { applicant: { age: 3 } } });
    expect(reply).toMatchObject({ result: false, policyId: p.policyId });
    expect(await counter('arbiter_exec_resolutions_total', { source: 'registry' })).toBe(fromRegistry + 1);
    expect(await redis.exists(runnableBaseKey(prefix, 'policy', p.baseId))).toBe(1);
    await runPolicy(StoredRunSubject.policyByRecord, { principal: acme, id: p.policyId, data: { applicant: { age: 3 } } });
    expect(await counter('arbiter_exec_resolutions_total', { source: 'registry' })).toBe(fromRegistry + 1);
  });

  it('answers not_found for another org, a tombstone, a malformed id, a flow id, and an unknown id', async () => {
    const p = await createPolicy(ADULT);
    const data = { applicant: { age: 30 } };
    expect((await rejection(runPolicy(StoredRunSubject.policyByBase, { principal: globex, id: p.baseId, data }))).code).toBe('not_found');
    expect((await rejection(runPolicy(StoredRunSubject.policyByRecord, { principal: globex, id: p.policyId, data }))).code).toBe(
      'not_found',
    );
    expect((await rejection(runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: 'nope', data }))).code).toBe('not_found');
    expect((await rejection(runFlow(StoredRunSubject.flowByRecord, { principal: acme, id: p.policyId, data }))).code).toBe('not_found');
    const unknown = await rejection(
      runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: '019a0000-0000-7000-8000-000000000001', data }),
    );
    expect(unknown.code).toBe('not_found');
    await reg(RegistrySubject.policyDelete, { policyId: p.policyId }, z.unknown());
    const deleted = await rejection(runPolicy(StoredRunSubject.policyByRecord, { principal: acme, id: p.policyId, data }));
    expect(deleted.toWire()).toEqual({ code: 'not_found', status: 404, message: `policy \`${p.policyId}\` not found` });
    expect((await rejection(runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: p.baseId, data }))).code).toBe('not_found');
  });

  it('checks the data against the schema before evaluating', async () => {
    const schema = { type: 'object', properties: { applicant: { type: 'object', properties: { age: { type: 'integer', minimum: 0 } } } } };
    const p = await createPolicy(ADULT, schema);
    const bad = await runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: p.baseId, data: { applicant: { age: -1 } } });
    expect(bad).toEqual({
      result: false,
      outcomes: {},
      trace: ['Schema mismatch: `applicant.age`: must be >= 0'],
      error: 'Schema mismatch: `applicant.age`: must be >= 0',
      errorCode: 'schema_mismatch',
      policyId: p.policyId,
      baseId: p.baseId,
      version: null,
    });
    const extra = await createPolicy(ADULT, { type: 'object', additionalProperties: false, properties: { applicant: {} } });
    const unexpected = await runPolicy(StoredRunSubject.policyByBase, {
      principal: acme,
      id: extra.baseId,
      data: { applicant: { age: 20 }, x: 1 },
    });
    expect(unexpected.error).toBe('Schema mismatch: `x`: is not allowed by the schema');
    expect(
      (await runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: p.baseId, data: { applicant: { age: 20 } } })).result,
    ).toBe(true);
  });

  it('answers schema_mismatch, never a failed task, for a stored schema that loops on itself', async () => {
    // Saved before such schemas were refused: written into the index as an older registry left it.
    const p = await createPolicy(ADULT, { type: 'object' });
    for (const [i, schema] of [
      { $ref: '#' },
      { allOf: [{ $ref: '#' }] },
      { $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' },
    ].entries()) {
      const schemaHash = `loop-${randomBytes(8).toString('hex')}-${i}`;
      for (const key of [runnableBaseKey(prefix, 'policy', p.baseId), runnableRecordKey(prefix, 'policy', p.policyId)]) {
        const entry = JSON.parse((await redis.get(key))!) as Record<string, unknown>;
        await redis.set(key, JSON.stringify({ ...entry, schemaHash, ...('schema' in entry ? { schema } : {}) }));
      }
      const reply = await runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: p.baseId, data: { applicant: { age: 30 } } });
      expect(reply, JSON.stringify(schema)).toMatchObject({
        result: false,
        errorCode: 'schema_mismatch',
        error: expect.stringContaining('refers back to itself without descending into the data'),
      });
    }
  });

  it('runs a published version by base and the draft by its own id', async () => {
    const draft = await createPolicy(ADULT);
    const v1 = (await reg(RegistrySubject.policyUpdate, { policyId: draft.policyId, status: 'published' }, PolicyUpdateReply)).record;
    const reply = await runPolicy(StoredRunSubject.policyByBase, {
      principal: acme,
      id: draft.baseId,
      data: { applicant: { age: 30 } },
      trace: false,
    });
    expect(reply).toMatchObject({ result: true, trace: [], policyId: v1.policyId, version: 1 });
  });
});

describe('shadow runs', () => {
  /** A published policy (`at least 18`) whose draft (`at least 21`) shadows it at sampleRate 1. */
  async function shadowed(): Promise<{ baseId: string; draftId: string }> {
    const created = await createPolicy(ADULT);
    await reg(RegistrySubject.policyUpdate, { policyId: created.policyId, status: 'published' }, PolicyUpdateReply);
    const draft = await reg(RegistrySubject.policyDraft, { policyId: created.baseId }, PolicyDraftReply);
    await reg(
      RegistrySubject.policyUpdate,
      { policyId: draft.record.policyId, status: 'draft', rule: ADULT.replace('18', '21') },
      PolicyUpdateReply,
    );
    await reg(ShadowSubject.policySet, { baseId: created.baseId, recordId: draft.record.policyId, sampleRate: 1 }, ShadowReport);
    return { baseId: created.baseId, draftId: draft.record.policyId };
  }
  const report = (baseId: string) => reg(ShadowSubject.policyGet, { baseId }, ShadowReport);

  it('compares the candidate on every sampled item of a traced batch, and shadows runs by base id only, not of an exact record', async () => {
    const { baseId } = await shadowed();
    const evals = new EvalClient(client, { coalesce: false });
    const items = [17, 19, 20, 30].map((age) => JSON.stringify({ applicant: { age } }));
    const answers = await evals.many(
      { subject: 'exec.stored.policy.base', principal: acme, id: baseId, trace: true, timeoutMs: 20_000 },
      items,
    );
    expect(answers.map((a) => (JSON.parse(new TextDecoder().decode(a as Uint8Array)) as { result: boolean }).result)).toEqual([
      false,
      true,
      true,
      true,
    ]);
    const r = await eventually(async () => {
      const got = await report(baseId);
      if (got.compared + got.dropped < 4) throw new Error(`not yet: ${JSON.stringify(got)}`);
      return got;
    });
    expect(r).toMatchObject({ sampled: 4, compared: 4, same: 2, changed: 2, dropped: 0, errors: 0, transitions: { 'true→false': 2 } });
    // A run of the exact record is not shadowed; the next run by base id is.
    const v1 = (await reg(RegistrySubject.policyGet, { policyId: baseId }, PolicyRecord)).policyId;
    await runPolicy(StoredRunSubject.policyByRecord, { principal: acme, id: v1, data: { applicant: { age: 19 } } });
    await runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: baseId, data: { applicant: { age: 19 } } });
    const after = await eventually(async () => {
      const got = await report(baseId);
      if (got.compared < 5) throw new Error(`not yet: ${JSON.stringify(got)}`);
      return got;
    });
    expect(after).toMatchObject({ sampled: 5, compared: 5, changed: 3 });
  });

  it('queues sampled items up to EXEC_SHADOW_MAX and drops (counts) the rest rather than queueing them', async () => {
    const { baseId } = await shadowed();
    const evals = new EvalClient(client, { coalesce: false });
    const items = Array.from({ length: 6 }, (_, i) => JSON.stringify({ applicant: { age: 15 + i } }));
    await evals.many({ subject: 'exec.stored.policy.base', principal: acme, id: baseId, trace: false, timeoutMs: 20_000 }, items);
    const r = await eventually(async () => {
      const got = await report(baseId);
      if (got.compared + got.dropped < 6) throw new Error(`not yet: ${JSON.stringify(got)}`);
      return got;
    });
    expect(r).toMatchObject({ sampled: 6, compared: 4, dropped: 2 });
  });
});

describe('replays (impact analysis)', () => {
  const RECENT = 'An **exam** is recent if the __date__ of the **exam** is within 30 days.';
  const answersOf = (answers: Array<Uint8Array | ArbiterError>) =>
    answers.map((a) => (a instanceof ArbiterError ? a.code : (JSON.parse(new TextDecoder().decode(a)) as { result: unknown }).result));

  it("runs each item of a group at its own `now` (`nows`), in the workers and in a flow's nodes", async () => {
    const p = await createPolicy(RECENT);
    const flow = await reg(
      RegistrySubject.flowCreate,
      {
        name: 'recent flow',
        definition: {
          start: 'n1',
          nodes: {
            n1: { type: 'policy', baseId: p.baseId, onTrue: 'yes', onFalse: 'no' },
            yes: { type: 'return', value: true },
            no: { type: 'return', value: false },
          },
        },
      },
      FlowRecord,
    );
    const evals = new EvalClient(client, { coalesce: false });
    const exam = JSON.stringify({ exam: { date: '2026-03-01' } });
    // The same exam seen from four days: within 30 days of the first two only.
    const nows = ['2026-03-10T12:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'];
    const replay = { principal: acme, trace: false, replay: true, nows, timeoutMs: 20_000 } as const;
    const items = nows.map(() => exam);
    expect(answersOf(await evals.many({ ...replay, subject: 'exec.stored.policy.record', id: p.policyId }, items))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(answersOf(await evals.many({ ...replay, subject: 'exec.stored.flow.record', id: flow.flowId }, items))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    // Split over messages of two items: each keeps its own clock.
    const small = new EvalClient(client, { coalesce: false, maxItems: 2 });
    expect(answersOf(await small.many({ ...replay, subject: 'exec.stored.policy.record', id: p.policyId }, items))).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('refuses `nows` outside a replay or not one per item: bad_request for the group', async () => {
    const p = await createPolicy(RECENT);
    const evals = new EvalClient(client, { coalesce: false });
    const exam = JSON.stringify({ exam: { date: '2026-03-01' } });
    const base = { principal: acme, subject: 'exec.stored.policy.record', id: p.policyId, trace: false, timeoutMs: 20_000 } as const;
    expect(answersOf(await evals.many({ ...base, nows: ['2026-03-10T12:00:00.000Z'] }, [exam]))).toEqual(['bad_request']);
    expect(answersOf(await evals.many({ ...base, replay: true, nows: ['2026-03-10T12:00:00.000Z'] }, [exam, exam]))).toEqual([
      'bad_request',
      'bad_request',
    ]);
  });
});

describe('flows', () => {
  const flowOf = (node: Record<string, unknown>): FlowDefinition => ({
    start: 'n1',
    nodes: {
      n1: { type: 'policy', ...node, onTrue: 'yes', onFalse: 'no' },
      yes: { type: 'return', value: true },
      no: { type: 'custom', outcome: 'refer' },
    },
  });

  it('runs a stored flow whose node resolves through the index', async () => {
    const p = await createPolicy(ADULT);
    const flow = await reg(RegistrySubject.flowCreate, { name: 'f', definition: flowOf({ baseId: p.baseId }) }, FlowRecord);
    const reply = await runFlow(StoredRunSubject.flowByBase, { principal: acme, id: flow.baseId, data: { applicant: { age: 5 } } });
    expect(reply).toMatchObject({
      result: 'refer',
      flowId: flow.flowId,
      version: null,
      path: [
        { nodeId: 'n1', policyId: p.policyId, version: null, result: false },
        { nodeId: 'no', type: 'custom', result: 'refer' },
      ],
    });
  });

  it("runs a batch of more items than the caller's job limit (EXEC_CALLER_MAX): every item answered, none rate_limited", async () => {
    const p = await createPolicy(ADULT);
    const flow = await reg(RegistrySubject.flowCreate, { name: 'f-many', definition: flowOf({ baseId: p.baseId }) }, FlowRecord);
    const evals = new EvalClient(client, { coalesce: false });
    const items = Array.from({ length: 300 }, (_, i) => JSON.stringify({ applicant: { age: i % 40 } }));
    const answers = await evals.many(
      { subject: 'exec.stored.flow.base', principal: acme, id: flow.baseId, trace: false, timeoutMs: 60_000 },
      items,
    );
    const failed = answers.filter((a) => a instanceof ArbiterError).map((a) => (a as ArbiterError).code);
    expect(failed).toEqual([]);
    const results = answers.map((a) => (JSON.parse(new TextDecoder().decode(a as Uint8Array)) as { result: unknown }).result);
    expect(results).toEqual(Array.from({ length: 300 }, (_, i) => (i % 40 >= 18 ? true : 'refer')));
  });

  it('evaluates table nodes in the workers, like policy nodes: a worker item each, their budget stops counted, the data depth limit applied', async () => {
    const definition: FlowDefinition = {
      start: 't',
      nodes: {
        t: {
          type: 'table',
          hitPolicy: 'first',
          inputs: [{ name: 'list', path: 'x.list' }],
          outputs: [{ name: 'out' }],
          rules: [
            { when: ['contains 3'], then: { out: 'three' } },
            { when: ['-'], then: { out: 'none' } },
          ],
        },
      },
    };
    const flow = await reg(RegistrySubject.flowCreate, { name: 'table in a worker', definition }, FlowRecord);
    const run = (data: Record<string, unknown>) => runFlow(StoredRunSubject.flowByBase, { principal: acme, id: flow.baseId, data });
    const before = exec.pool.batchStats();
    const stops = await counter('arbiter_exec_budget_exceeded_total');

    expect(await run({ x: { list: [1, 2, 3] } })).toMatchObject({ result: { out: 'three' }, path: [{ nodeId: 't', matched: [0] }] });
    expect(exec.pool.batchStats().items - before.items).toBe(1);

    // Traced runs have 10,000 steps (EXEC_TRACE_STEP_BUDGET); the cell costs the list's length.
    const over = await run({ x: { list: Array.from({ length: 20_000 }, () => 1) } });
    expect(over).toMatchObject({ result: false, errorCode: 'budget_exceeded', path: [{ nodeId: 't', matched: [] }] });
    expect(await counter('arbiter_exec_budget_exceeded_total')).toBe(stops + 1);

    // The worker refuses data nested deeper than MAX_DATA_DEPTH (64) before running anything, as for a policy.
    let deep: Record<string, unknown> = { list: [3] };
    for (let i = 0; i < 70; i++) deep = { deeper: deep };
    expect(await rejection(run({ x: { list: [3] }, deep }))).toMatchObject({ code: 'validation_failed' });
    expect(exec.pool.batchStats().items - before.items).toBe(3);
  });

  it('a flow version published through review keeps running the policy version it was reviewed with', async () => {
    const draft = await createPolicy(ADULT);
    const v1 = (await reg(RegistrySubject.policyUpdate, { policyId: draft.policyId, status: 'published' }, PolicyUpdateReply)).record;
    const flow = await reg(RegistrySubject.flowCreate, { name: 'reviewed', definition: flowOf({ baseId: v1.baseId }) }, FlowRecord);
    // as the governance service publishes an approved request
    const published = await reg(
      RegistrySubject.flowPublishReviewed,
      { recordId: flow.flowId, expectedContentHash: flow.contentHash, reviewRequestId: '0190a0b0-0000-7000-8000-0000000000cd' },
      FlowPublishReviewedReply,
    );
    const seventeen = { principal: acme, id: flow.baseId, data: { applicant: { age: 17 } } };
    expect((await runFlow(StoredRunSubject.flowByBase, seventeen)).result).toBe('refer');
    // the policy's owner lowers the bar in a new version: the reviewed flow does not follow
    const next = (await reg(RegistrySubject.policyDraft, { policyId: v1.policyId }, PolicyDraftReply)).record;
    await reg(
      RegistrySubject.policyUpdate,
      { policyId: next.policyId, status: 'published', rule: ADULT.replace('18', '16') },
      PolicyUpdateReply,
    );
    const after = await runFlow(StoredRunSubject.flowByBase, seventeen);
    expect(after).toMatchObject({
      result: 'refer',
      path: [{ nodeId: 'n1', policyId: v1.policyId, version: 1, result: false }, { nodeId: 'no' }],
    });
    expect(published.record.pinnedVersions).toEqual({ n1: 1 });
  });

  it('tests an ad hoc definition: validation_failed lists every problem; a missing policy stops the flow as a result', async () => {
    const invalid = await rejection(
      client.request(
        StoredRunSubject.flowTest,
        { principal: acme, definition: { start: 'x', nodes: { n1: { type: 'return', value: true } } }, data: {} } satisfies FlowTestInput,
        FlowRunResponse,
      ),
    );
    expect(invalid.code).toBe('validation_failed');
    expect(invalid.errors?.map((e) => e.code)).toEqual(['missing_start']);
    const missing = await client.request(
      StoredRunSubject.flowTest,
      { principal: acme, definition: flowOf({ policyId: '019a0000-0000-7000-8000-000000000002' }), data: {} } satisfies FlowTestInput,
      FlowRunResponse,
    );
    expect(missing).toMatchObject({
      result: false,
      errorCode: 'policy_not_found',
      error: 'node `n1`: policy `019a0000-0000-7000-8000-000000000002` not found',
    });
  });
});

describe('step budget', () => {
  // Per node: one comparison and one element step per item (numbers cost nothing more).
  const SCAN = 'if any of x.n satisfies (its > 100) -> big.';
  const twoNodes = (baseId: string): FlowDefinition => ({
    start: 'n1',
    nodes: {
      n1: { type: 'policy', baseId, onTrue: 'yes', onFalse: 'n2' },
      n2: { type: 'policy', baseId, onTrue: 'yes', onFalse: 'no' },
      yes: { type: 'return', value: true },
      no: { type: 'return', value: false },
    },
  });
  const items = (n: number) => ({ x: { n: Array.from({ length: n }, () => 1) } });

  it("shares one budget between a flow's nodes: each fits alone, together they exceed it", async () => {
    const p = await createPolicy(SCAN);
    const test = (n: number, trace: boolean) =>
      client.request(
        StoredRunSubject.flowTest,
        { principal: acme, definition: twoNodes(p.baseId), data: items(n), trace } satisfies FlowTestInput,
        FlowRunResponse,
      );
    // Traced: 10,000 steps (EXEC_TRACE_STEP_BUDGET). 2 × 2 × 2,000 = 8,000 fits.
    expect(await test(2000, true)).toMatchObject({ result: false, path: [{ nodeId: 'n1' }, { nodeId: 'n2' }, { nodeId: 'no' }] });
    // 2 × 3,000 = 6,000 steps a node: n1 fits, n2 has only 4,000 left.
    const over = await test(3000, true);
    expect(over).toMatchObject({
      result: false,
      errorCode: 'budget_exceeded',
      error: 'node `n2`: Budget exceeded: the evaluation needs more than 10000 steps',
    });
    expect(over.nodes.map((n) => [n.nodeId, n.errorCode ?? null])).toEqual([
      ['n1', null],
      ['n2', 'budget_exceeded'],
    ]);
    // Untraced: 1,000,000 steps (EXEC_STEP_BUDGET).
    expect((await test(3000, false)).errorCode).toBeUndefined();
    const run = await runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: p.baseId, data: items(6000) });
    expect([run.errorCode, run.error]).toEqual(['budget_exceeded', 'Budget exceeded: the evaluation needs more than 10000 steps']);
  });
});

describe('executed events', () => {
  it('aggregates runs per record and actor and publishes them on the stream', async () => {
    const p = await createPolicy(ADULT);
    for (const age of [30, 30, 1])
      await runPolicy(StoredRunSubject.policyByBase, { principal: acme, id: p.baseId, data: { applicant: { age } } });
    await runPolicy(StoredRunSubject.policyByRecord, { principal: acme, id: p.policyId, data: {} });
    const name = eventStreamName(prefix);
    let mine: ArbiterEvent[] = [];
    const total = (key: string) => mine.reduce((n, e) => n + (e.details[key] as number), 0);
    await eventually(
      async () => {
        await exec.events.flush();
        const info = await jsm.streams.info(name);
        mine = [];
        for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
          const msg = await jsm.streams.getMessage(name, { seq }).catch(() => null);
          if (msg?.subject === `${prefix}.events.acme.executed`) mine.push(ArbiterEvent.parse(msg.json()));
        }
        mine = mine.filter((e) => e.resource.id === p.policyId);
        expect(total('count')).toBeGreaterThanOrEqual(4);
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect({
      count: total('count'),
      trueCount: total('trueCount'),
      falseCount: total('falseCount'),
      errorCount: total('errorCount'),
    }).toEqual({
      count: 4,
      trueCount: 2,
      falseCount: 1,
      errorCount: 1,
    });
    for (const e of mine) {
      expect(e).toMatchObject({
        orgId: 'acme',
        kind: 'executed',
        actor: { userId: 'admin', apiKeyId: 'key-1' },
        resource: { type: 'policy', id: p.policyId, baseId: p.baseId },
        details: { aggregated: true, version: null },
      });
    }
  });

  it('keeps closed windows in memory, bounded, while the outbox cannot be written, and writes them once it can', async () => {
    const m = new ExecMetrics(new Registry());
    const written: ArbiterEvent[][] = [];
    let outboxUp = false;
    const sink = {
      enqueue: (batch: readonly ArbiterEvent[]) => {
        if (!outboxUp) return Promise.reject(new Error('Redis is down'));
        written.push([...batch]);
        return Promise.resolve();
      },
    };
    const events = new ExecutedEvents(sink, logger, m, { flushMs: 600_000, batchMax: 1000, bufferMax: 2 });
    const run = (id: string) => ({
      resource: { type: 'policy' as const, id, baseId: id },
      version: 1,
      via: 'base' as const,
      result: true,
      error: false,
    });
    for (const id of ['a', 'b', 'c']) events.record(acme, run(id));
    await events.flush();
    expect(events.pending).toBe(2);
    expect((await m.eventsDropped.get()).values[0]?.value).toBe(1);
    outboxUp = true;
    await events.flush();
    expect(events.pending).toBe(0);
    expect(written.flat().map((e) => e.resource.id)).toEqual(['b', 'c']);
    expect((await m.eventsQueued.get()).values[0]?.value).toBe(2);
    await events.close();
  });

  it('leaves the events of a stopped service in its outbox, published by the next one to start', async () => {
    const otherPrefix = randomPrefix();
    const kitConfig = loadConfig(ExecConfig, {
      NATS_URL,
      REDIS_URL,
      NATS_SUBJECT_PREFIX: otherPrefix,
      EXEC_POOL_SIZE: '1',
      // The pool's first task (loading the engine) counts against the task deadline: room for a busy machine.
      EXEC_TASK_TIMEOUT_MS: '10000',
      EVENTS_FLUSH_MS: '600000',
    });
    const outbox = new RedisOutbox(redis, executedOutboxKey(otherPrefix));
    const name = eventStreamName(otherPrefix);
    try {
      await outbox.enqueue([
        {
          eventId: '019a0000-0000-7000-8000-00000000e001',
          orgId: 'acme',
          kind: 'executed',
          at: new Date().toISOString(),
          actor: { userId: 'u' },
          resource: { type: 'policy', id: 'p' },
          details: {},
        },
      ]);
      const other = await startExecution(inProcessKit('execution', kitConfig, { logger, metrics: new Registry() }));
      try {
        await eventually(async () => expect((await jsm.streams.info(name)).state.messages).toBe(1));
        await eventually(async () => expect(await redis.xlen(executedOutboxKey(otherPrefix))).toBe(0));
      } finally {
        await other.close();
      }
    } finally {
      await jsm.streams.delete(name).catch(() => undefined);
      await dropKeys(otherPrefix);
    }
  }, 60_000);
});
