/**
 * End-to-end: running stored policies and flows: gateway → NATS →
 * execution (two replicas) → Redis runnable index, with the registry writing the index. Policies
 * and flows are created and published over the registry's NATS subjects (the CRUD routes have
 * their own suite); every run goes through the public HTTP API.
 */

import {
  ArbiterEvent,
  eventStreamName,
  FlowRecord,
  FlowUpdateReply,
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject,
  type FlowDefinition,
  type Principal,
} from '@arbiter/contracts';
import { connectBus, createLogger, type Bus } from '@arbiter/service-kit';
import { jetstreamManager } from '@nats-io/jetstream';
import { Validator } from '@seriousme/openapi-schema-validator';
import pg from 'pg';
import { eventually, streamMessages } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, PG_ADMIN_URL, startStack, type Stack } from './harness.js';

let stack: Stack;
let bus: Bus;
let auditOnlyKey: string;
let orgBKey: string;

const admin: Principal = { orgId: 'acme', userId: 'admin', role: 'admin' };
const adultRule = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
const SCHEMA = {
  type: 'object',
  required: ['applicant'],
  properties: { applicant: { type: 'object', required: ['age'], properties: { age: { type: 'integer' } } } },
};

async function registry<T>(subject: string, payload: Record<string, unknown>, reply: z.ZodType<T>): Promise<T> {
  return bus.request(subject, { principal: admin, ...payload }, reply, { timeoutMs: 20_000 });
}
const createPolicy = (rule: string, schema: Record<string, unknown> | null = null) =>
  registry(RegistrySubject.policyCreate, { name: `p-${Math.random().toString(36).slice(2)}`, rule, schema }, PolicyRecord);
/** Publishes the draft with `rule` (a new version); returns the version record. */
async function publish(draftId: string, patch: Record<string, unknown> = {}): Promise<PolicyRecord> {
  const reply = await registry(RegistrySubject.policyUpdate, { policyId: draftId, status: 'published', ...patch }, PolicyUpdateReply);
  expect(reply.outcome).toBe('published');
  return reply.record;
}
/** Opens a draft from a version, publishes it with `rule`; returns the new version. */
async function publishRule(versionId: string, rule: string): Promise<PolicyRecord> {
  const draft = await registry(RegistrySubject.policyDraft, { policyId: versionId }, PolicyDraftReply);
  return publish(draft.record.policyId, { rule });
}
const createFlow = (definition: FlowDefinition) =>
  registry(RegistrySubject.flowCreate, { name: `f-${Math.random().toString(36).slice(2)}`, definition }, FlowRecord);

/** POSTs `data` with the admin key, another key, or none (`null`). */
const run = (path: string, data: unknown, key: string | null = stack.adminKey) =>
  call(stack, 'POST', path, { ...(key !== null ? { key } : {}), body: data });

/** A flow: policy node `n1` (by base, optionally pinned) → `true` or the custom outcome `manual review`. */
function flowOf(node: Record<string, unknown>): FlowDefinition {
  return {
    start: 'n1',
    nodes: {
      n1: { type: 'policy', ...node, onTrue: 'ok', onFalse: 'review' },
      ok: { type: 'return', value: true },
      review: { type: 'custom', outcome: 'manual review' },
    },
  };
}

async function metric(opsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.split(/\s+/).at(-1)), 0);
}

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'gateway'],
    env: {
      EVENTS_FLUSH_MS: '200',
      // The outbox relays' sweep (every 30 s by default) is the stack's one periodic PostgreSQL
      // statement; they still run right after every commit. Off here so the per-run count is exact.
      REGISTRY_OUTBOX_INTERVAL_MS: '600000',
      GATEWAY_OUTBOX_INTERVAL_MS: '600000',
      // A key's grant is read from PostgreSQL once per TTL; long enough that no refill lands in the measured window.
      API_KEY_CACHE_TTL_SECONDS: '3600',
      // The keys' last-use times are written every 30 s by default: under load that write can land
      // in the measured window (it did once). Not during this file's runs.
      KEY_USAGE_FLUSH_MS: '600000',
    },
  });
  await stack.startService('execution', { replica: 2 });
  bus = await connectBus({
    url: stack.env.NATS_URL,
    prefix: stack.env.NATS_SUBJECT_PREFIX,
    name: 'e2e-stored-runs',
    logger: createLogger({ service: 'e2e', level: 'silent' }),
  });
  const key = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name: 'audit only', scopes: ['audit'] } });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  auditOnlyKey = key.body.key as string;
  const created = stack.admin(['create-org', 'globex', '--admin', 'boss']);
  expect(created.status, created.stderr).toBe(0);
  orgBKey = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
});

afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});

describe('POST /run/policy/{baseId} and /run/policy_version/{policyId}', () => {
  it('runs the draft of a never-published base, then the latest version; an exact version id keeps running its own text', async () => {
    const draft = await createPolicy(adultRule(18));
    const base = draft.baseId;
    const asDraft = await run(`/run/policy/${base}`, { applicant: { age: 19 } });
    expect(asDraft.status, JSON.stringify(asDraft.body)).toBe(200);
    expect(asDraft.body).toMatchObject({ result: true, outcomes: { adult: true }, policyId: draft.policyId, baseId: base, version: null });
    expect(asDraft.body.trace.at(-1)).toBe('result: true');

    const v1 = await publish(draft.policyId);
    expect((await run(`/run/policy/${base}`, { applicant: { age: 19 } })).body).toMatchObject({
      result: true,
      policyId: v1.policyId,
      version: 1,
    });

    const v2 = await publishRule(v1.policyId, adultRule(21));
    expect((await run(`/run/policy/${base}`, { applicant: { age: 19 } })).body).toMatchObject({
      result: false,
      policyId: v2.policyId,
      version: 2,
    });
    expect((await run(`/run/policy_version/${v1.policyId}`, { applicant: { age: 19 } })).body).toMatchObject({
      result: true,
      policyId: v1.policyId,
      version: 1,
    });
    expect((await run(`/run/policy_version/${v2.policyId}`, { applicant: { age: 19 } })).body).toMatchObject({ result: false, version: 2 });
  });

  it('reports engine errors as 200 results', async () => {
    const p = await createPolicy(adultRule(18));
    const res = await run(`/run/policy/${p.baseId}`, { person: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: false, errorCode: 'missing_selector', error: 'Missing selector: applicant', version: null });
  });

  it('validates the data against the policy schema: a mismatch is a 200 result naming the first failing path', async () => {
    const p = await createPolicy(adultRule(18), SCHEMA);
    const bad = await run(`/run/policy/${p.baseId}`, { applicant: { age: 'nineteen' } });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({
      result: false,
      outcomes: {},
      errorCode: 'schema_mismatch',
      error: 'Schema mismatch: `applicant.age`: must be integer',
    });
    const missing = await run(`/run/policy_version/${p.policyId}`, { applicant: {} });
    expect(missing.body).toMatchObject({
      result: false,
      errorCode: 'schema_mismatch',
      error: 'Schema mismatch: `applicant.age`: is required',
    });
    const good = await run(`/run/policy/${p.baseId}`, { applicant: { age: 30 } });
    expect(good.body).toMatchObject({ result: true, policyId: p.policyId });
    expect(good.body.error).toBeUndefined();
  });

  it('answers 404 by base id and by exact version id once the base is deleted', async () => {
    const v1 = await publish((await createPolicy(adultRule(18))).policyId);
    expect((await run(`/run/policy_version/${v1.policyId}`, { applicant: { age: 30 } })).status).toBe(200);
    await registry(RegistrySubject.policyDelete, { policyId: v1.policyId }, z.unknown());
    for (const path of [`/run/policy/${v1.baseId}`, `/run/policy_version/${v1.policyId}`]) {
      const res = await run(path, { applicant: { age: 30 } });
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('refuses without a key (401), with a key lacking `view` (403), other orgs and unknown or malformed ids (404), a non-object body (400)', async () => {
    const p = await createPolicy(adultRule(18));
    expect((await run(`/run/policy/${p.baseId}`, { applicant: { age: 1 } }, null)).status).toBe(401);
    expect((await run(`/run/policy/${p.baseId}`, { applicant: { age: 1 } }, 'arb_not_a_key_0123456789abcdef')).status).toBe(401);
    expect((await run(`/run/policy/${p.baseId}`, { applicant: { age: 1 } }, auditOnlyKey)).status).toBe(403);
    expect((await run(`/flow/test`, { definition: flowOf({ baseId: p.baseId }), data: {} }, auditOnlyKey)).status).toBe(403);
    expect((await run(`/run/policy/${p.baseId}`, { applicant: { age: 1 } }, orgBKey)).status).toBe(404);
    expect((await run(`/run/policy_version/${p.policyId}`, { applicant: { age: 1 } }, orgBKey)).status).toBe(404);
    expect((await run(`/run/policy/not-a-uuid`, {})).status).toBe(404);
    expect((await run(`/run/flow_version/not-a-uuid`, {})).status).toBe(404);
    expect((await run(`/run/policy/019a0000-0000-7000-8000-000000000000`, {})).status).toBe(404);
    // a policy id is not a flow id
    expect((await run(`/run/flow_version/${p.policyId}`, {})).status).toBe(404);
    const notObject = await run(`/run/policy/${p.baseId}`, [1, 2]);
    expect(notObject.status).toBe(400);
    expect(notObject.body.code).toBe('validation_failed');
  });
});

describe('flows', () => {
  it('runs a flow by base and by version; nodes by base, pinned version or exact id; /flow/test runs a definition unsaved', async () => {
    const v1 = await publish((await createPolicy(adultRule(18))).policyId);
    const v2 = await publishRule(v1.policyId, adultRule(21));
    const base = v1.baseId;
    const teen = { applicant: { age: 19 } };

    const flow = await createFlow(flowOf({ baseId: base }));
    const byBase = await run(`/run/flow/${flow.baseId}`, teen);
    expect(byBase.status, JSON.stringify(byBase.body)).toBe(200);
    expect(byBase.body).toMatchObject({
      result: 'manual review',
      flowId: flow.flowId,
      baseId: flow.baseId,
      version: null,
      path: [
        { nodeId: 'n1', type: 'policy', policyId: v2.policyId, version: 2, result: false },
        { nodeId: 'review', type: 'custom', result: 'manual review' },
      ],
      nodes: [{ nodeId: 'n1', result: false, outcomes: { adult: false }, error: null }],
    });

    const published = await registry(RegistrySubject.flowUpdate, { flowId: flow.flowId, status: 'published' }, FlowUpdateReply);
    const fv1 = published.record;
    expect((await run(`/run/flow_version/${fv1.flowId}`, { applicant: { age: 30 } })).body).toMatchObject({
      result: true,
      flowId: fv1.flowId,
      version: 1,
    });
    expect((await run(`/run/flow/${flow.baseId}`, { applicant: { age: 30 } })).body).toMatchObject({ result: true, version: 1 });

    const pinned = await run('/flow/test', { definition: flowOf({ baseId: base, version: 1 }), data: teen });
    expect(pinned.status, JSON.stringify(pinned.body)).toBe(200);
    expect(pinned.body).toMatchObject({ result: true, path: [{ policyId: v1.policyId, version: 1, result: true }, { nodeId: 'ok' }] });
    const exact = await run('/flow/test', { definition: flowOf({ policyId: v2.policyId }), data: teen });
    expect(exact.body).toMatchObject({ result: 'manual review', path: [{ policyId: v2.policyId, version: 2 }, { nodeId: 'review' }] });
    const noVersion = await run('/flow/test', { definition: flowOf({ baseId: base, version: 9 }), data: teen });
    expect(noVersion.body).toMatchObject({ result: false, errorCode: 'policy_not_found' });
    expect(noVersion.body.error).toBe(`node \`n1\`: policy \`${base}\` has no version 9`);
  });

  it('answers 400 with every problem for an invalid /flow/test definition', async () => {
    const res = await run('/flow/test', {
      definition: { start: 'n1', nodes: { n1: { type: 'policy', baseId: '019a0000-0000-7000-8000-000000000000', onTrue: 'n1' } } },
      data: {},
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((e: { code: string }) => e.code).sort()).toEqual(['cycle', 'missing_branch']);
  });

  it('stops with `policy_not_found` (HTTP 200) when a node names a deleted policy; a deleted flow is 404', async () => {
    const p = await createPolicy(adultRule(18));
    const flow = await createFlow(flowOf({ baseId: p.baseId }));
    expect((await run(`/run/flow/${flow.baseId}`, { applicant: { age: 30 } })).body.result).toBe(true);
    await registry(RegistrySubject.policyDelete, { policyId: p.policyId }, z.unknown());
    const res = await run(`/run/flow/${flow.baseId}`, { applicant: { age: 30 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      result: false,
      errorCode: 'policy_not_found',
      error: `node \`n1\`: policy \`${p.baseId}\` not found`,
      path: [{ nodeId: 'n1', policyId: p.baseId, result: false }],
      nodes: [{ nodeId: 'n1', errorCode: 'policy_not_found' }],
    });
    await registry(RegistrySubject.flowDelete, { flowId: flow.flowId }, z.unknown());
    expect((await run(`/run/flow/${flow.baseId}`, {})).status).toBe(404);
    expect((await run(`/run/flow_version/${flow.flowId}`, {})).status).toBe(404);
  });
});

describe('publish → next run, across two execution replicas', () => {
  it('never serves a stale version: 5 publishes, each followed at once by 100 runs spread over both replicas', async () => {
    const opsA = stack.opsUrl('execution');
    const opsB = stack.opsUrl('execution', { replica: 2 });
    const before = [await metric(opsA, 'arbiter_exec_resolutions_total'), await metric(opsB, 'arbiter_exec_resolutions_total')];
    let version = await publish((await createPolicy(adultRule(10))).policyId);
    let stale = 0;
    for (let round = 1; round <= 5; round++) {
      const threshold = 10 + round * 10; // 20, 30, ...: age 25 passes only round 1
      version = await publishRule(version.policyId, adultRule(threshold));
      for (let batch = 0; batch < 10; batch++) {
        const replies = await Promise.all(
          Array.from({ length: 10 }, () => run(`/run/policy/${version.baseId}`, { applicant: { age: 25 } })),
        );
        for (const r of replies) {
          expect(r.status).toBe(200);
          if (r.body.policyId !== version.policyId || r.body.version !== version.version || r.body.result !== 25 >= threshold) stale++;
        }
      }
    }
    expect(stale).toBe(0);
    const after = [await metric(opsA, 'arbiter_exec_resolutions_total'), await metric(opsB, 'arbiter_exec_resolutions_total')];
    // Both replicas served runs (the queue group spreads them).
    expect(after[0] - before[0]).toBeGreaterThan(0);
    expect(after[1] - before[1]).toBeGreaterThan(0);
    expect(after[0] - before[0] + (after[1] - before[1])).toBeGreaterThanOrEqual(500);
  });
});

describe('executed events', () => {
  it('publishes aggregated `executed` events on the stream for runs of stored resources', async () => {
    const p = await createPolicy(adultRule(18));
    for (const age of [30, 30, 5]) await run(`/run/policy/${p.baseId}`, { applicant: { age } });
    await run(`/run/policy_version/${p.policyId}`, { person: {} });
    const jsm = await jetstreamManager(bus.nc);
    const stream = eventStreamName(stack.env.NATS_SUBJECT_PREFIX);
    // The counts arrive after the aggregation window (EVENTS_FLUSH_MS): polled until all four are in.
    const events = await eventually(
      async () => {
        const found = (await streamMessages(jsm, stream))
          .filter((msg) => msg.subject.endsWith('.executed'))
          .map((msg) => ArbiterEvent.parse(msg.json()));
        const mine = found.filter((e) => e.resource.id === p.policyId);
        expect(mine.reduce((n, e) => n + (e.details.count as number), 0)).toBe(4);
        return mine;
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    const totals = { trueCount: 0, falseCount: 0, errorCount: 0 };
    for (const e of events) {
      expect(e).toMatchObject({ orgId: 'acme', kind: 'executed', resource: { type: 'policy', id: p.policyId, baseId: p.baseId } });
      expect(e.actor.userId).toBe('admin');
      expect(e.actor.apiKeyId).toEqual(expect.any(String));
      expect(e.details).toMatchObject({ aggregated: true, version: null });
      totals.trueCount += e.details.trueCount as number;
      totals.falseCount += e.details.falseCount as number;
      totals.errorCount += e.details.errorCount as number;
    }
    expect(totals).toEqual({ trueCount: 2, falseCount: 1, errorCount: 1 });
  });
});

describe('no PostgreSQL on the run path', () => {
  it('runs 200 warm stored policies and flows with no statement in the stack database', async () => {
    const v1 = await publish((await createPolicy(adultRule(18))).policyId);
    const flow = await createFlow(flowOf({ baseId: v1.baseId }));
    // Warm: both replicas' workers, the key cache.
    for (let i = 0; i < 20; i++) {
      await run(`/run/policy/${v1.baseId}`, { applicant: { age: 30 } });
      await run(`/run/flow/${flow.baseId}`, { applicant: { age: 30 } });
    }
    // Read from another database, so these queries do not count. pg_stat_activity is live (unlike
    // the cumulative counters, which a backend reports up to 10 s late): every statement a backend
    // of the stack's database runs moves its state_change, and a new connection adds a row.
    const client = new pg.Client({ connectionString: PG_ADMIN_URL });
    await client.connect();
    const database = new URL(stack.env.DATABASE_URL).pathname.slice(1);
    const activity = async () =>
      (
        await client.query<{ pid: number; backend_start: Date; state_change: Date | null; query: string }>(
          'SELECT pid, backend_start, state_change, query FROM pg_stat_activity WHERE datname = $1 ORDER BY pid',
          [database],
        )
      ).rows.map((r) => ({
        pid: r.pid,
        since: r.backend_start.toISOString(),
        lastStatementAt: r.state_change?.toISOString(),
        query: r.query,
      }));
    try {
      const before = await activity();
      for (let i = 0; i < 100; i++) {
        const [a, b] = await Promise.all([
          run(`/run/policy/${v1.baseId}`, { applicant: { age: 30 } }),
          run(`/run/flow_version/${flow.flowId}`, { applicant: { age: 30 } }),
        ]);
        expect(a.body.result).toBe(true);
        expect(b.body.result).toBe(true);
      }
      // A pooled connection closed for idleness ran nothing; any backend new or moved did.
      const moved = (await activity()).filter((a) => !before.some((b) => b.pid === a.pid && b.lastStatementAt === a.lastStatementAt));
      expect(moved).toEqual([]);
    } finally {
      await client.end();
    }
  }, 90_000);
});

describe('OpenAPI', () => {
  it('documents the run endpoints in a valid OpenAPI 3.1 document', async () => {
    const doc = (await call(stack, 'GET', '/openapi.json')).body;
    const result = await new Validator().validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    for (const p of [
      '/run/policy/{baseId}',
      '/run/policy_version/{policyId}',
      '/run/flow/{baseId}',
      '/run/flow_version/{flowId}',
      '/flow/test',
    ]) {
      expect(doc.paths[p]?.post, p).toBeDefined();
      expect(doc.paths[p].post.security).toEqual([{ apiKey: [] }]);
    }
  });
});
