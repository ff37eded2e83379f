/**
 * Decision records too large for the bus, over real NATS, Redis and PostgreSQL: this execution
 * service beside a registry (started in-process from its build) and a stand-in for the audit
 * service's two internal endpoints the recorder asks (an org's settings, the drops reports). A
 * record whose `decided` event would be larger than the bound (`DECISIONS_MAX_RECORD_BYTES`, and
 * never more than the server's `max_payload`) is dropped as `too_large` before the outbox and
 * counted; one that reaches the outbox anyway is removed by the relay at its first refusal and
 * counted for its base, never claimed again.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type ArbiterEvent,
  DecisionDropsReport,
  DecisionSettingsResolveRequest,
  DecisionSubject,
  eventStreamName,
  PolicyRecord,
  RegistrySubject,
  StoredRunSubject,
  type DecisionSettings,
  type Principal,
} from '@arbiter/contracts';
import { connectBus, defineEndpoint, EvalClient, inProcessKit, loadConfig, RedisOutbox, type Bus } from '@arbiter/service-kit';
import { dropDatabases, startNatsServer, streamMessages, testServers, type OwnServer } from '@arbiter/test-kit';
import { jetstreamManager } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { v7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecConfig } from '../src/config.js';
import { executedOutboxKey, startExecution, type Execution } from '../src/service.js';
import { dropKeys, eventually, NATS_URL, randomPrefix, REDIS_URL, silentLogger } from './helpers.js';

const PG_URL = testServers().postgres;
const logger = silentLogger();
const acme: Principal = { orgId: 'acme', userId: 'admin', role: 'admin', apiKeyId: 'key-1' };
const ADULT = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';

/**
 * Run data as JSON text of about `n` × 5 bytes whose record is about `n` × 22 bytes: `9e20` is
 * written again as 900000000000000000000.
 */
const inflating = (n: number) => `{"applicant":{"age":30},"x":[${Array.from({ length: n }, () => '9e20').join(',')}]}`;
const json = (v: unknown) => JSON.stringify(v);

/** Registry, execution service and the audit stand-in on one NATS server, with their own prefix and database. */
interface Setup {
  prefix: string;
  exec: Execution;
  client: Bus;
  metrics: Registry;
  /** Drops reports the execution service sent, in order. */
  reports: DecisionDropsReport[];
  createPolicy(): Promise<PolicyRecord>;
  /** A stored run of the policy `baseId` on `data` (JSON text, sent as it is, as the gateway does): its answer. */
  run(baseId: string, data: string): Promise<{ result: boolean }>;
  counter(name: string, labels?: Record<string, string>): Promise<number>;
  /** `decided` events in JetStream. */
  decided(): Promise<ArbiterEvent[]>;
  /** Drops reported for a base, summed by reason. */
  reported(baseId: string): Record<'outbox' | 'buffer' | 'settings' | 'tooLarge', number>;
  close(): Promise<void>;
}

async function setUp(natsUrl: string, env: Record<string, string>): Promise<Setup> {
  const prefix = randomPrefix();
  const database = `arbiter_exec_test_${randomBytes(5).toString('hex')}`;
  const dbUrl = new URL(PG_URL);
  dbUrl.pathname = `/${database}`;
  const metrics = new Registry();
  const reports: DecisionDropsReport[] = [];
  // The registry is another workspace package with no library entry: load its build directly.
  const { startRegistry } = await import('../../registry/dist/service.js');
  const { RegistryConfig } = await import('../../registry/dist/config.js');
  const registry = await startRegistry(
    inProcessKit(
      'registry',
      RegistryConfig.parse({
        NATS_URL: natsUrl,
        REDIS_URL,
        DATABASE_URL: dbUrl.toString(),
        NATS_SUBJECT_PREFIX: prefix,
        LOG_LEVEL: 'silent',
        REGISTRY_OUTBOX_INTERVAL_MS: '100',
      }),
      { logger },
    ),
  );
  // The audit service's internal endpoints the recorder asks: no masks, and every drops report kept.
  const audit = await connectBus({ url: natsUrl, prefix, name: 'decision-size-audit', logger });
  await audit.serve({
    name: 'audit-stand-in',
    version: '1.0.0',
    endpoints: {
      settings: defineEndpoint({
        subject: DecisionSubject.settingsResolve,
        request: DecisionSettingsResolveRequest,
        handler: async (): Promise<DecisionSettings> => ({ masks: [], bases: {} }),
      }),
      drops: defineEndpoint({
        subject: DecisionSubject.dropsReport,
        request: DecisionDropsReport,
        handler: async (report) => {
          reports.push(report);
          return { added: true };
        },
      }),
    },
  });
  const exec = await startExecution(
    inProcessKit(
      'exec-decision-size-test',
      loadConfig(ExecConfig, {
        NATS_URL: natsUrl,
        REDIS_URL,
        NATS_SUBJECT_PREFIX: prefix,
        EXEC_POOL_SIZE: '1',
        EXEC_INDEX_FLUSH_MS: '600000',
        DECISIONS_FLUSH_MS: '50',
        DECISIONS_PER_SECOND: '1000',
        ...env,
      }),
      { logger, metrics },
    ),
  );
  const client = await connectBus({ url: natsUrl, prefix, name: 'decision-size-client', logger });
  const jsm = await jetstreamManager(client.nc);
  const evals = new EvalClient(client, { coalesce: false });
  return {
    prefix,
    exec,
    client,
    metrics,
    reports,
    createPolicy: () =>
      client.request(RegistrySubject.policyCreate, { principal: acme, name: 'p', rule: ADULT, schema: null }, PolicyRecord, {
        timeoutMs: 20_000,
      }),
    async run(baseId, data) {
      const spec = { subject: StoredRunSubject.policyByBase, principal: acme, id: baseId, trace: false, timeoutMs: 20_000 };
      return JSON.parse(new TextDecoder().decode(await evals.one(spec, data))) as { result: boolean };
    },
    async counter(name, labels = {}) {
      const m = await metrics.getSingleMetric(name)?.get();
      return (m?.values ?? []).filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((n, v) => n + v.value, 0);
    },
    async decided() {
      const messages = await streamMessages(jsm, eventStreamName(prefix)).catch(() => []);
      return messages.map((m) => m.json<ArbiterEvent>()).filter((e) => e.kind === 'decided');
    },
    reported(baseId) {
      const sum = { outbox: 0, buffer: 0, settings: 0, tooLarge: 0 };
      for (const r of reports) {
        for (const d of r.drops) {
          if (d.baseId !== baseId) continue;
          sum.outbox += d.outbox;
          sum.buffer += d.buffer;
          sum.settings += d.settings;
          sum.tooLarge += d.tooLarge;
        }
      }
      return sum;
    },
    async close() {
      await exec.close();
      await registry.close();
      await audit.close();
      await jsm.streams.delete(eventStreamName(prefix)).catch(() => undefined);
      await client.close();
      await dropKeys(prefix);
      await dropDatabases(PG_URL, [database]);
    },
  };
}

let redis: Redis;
beforeAll(() => {
  redis = new Redis(REDIS_URL);
});
afterAll(() => redis?.disconnect());

describe('a decision record over DECISIONS_MAX_RECORD_BYTES', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(NATS_URL, { DECISIONS_MAX_RECORD_BYTES: '20000' });
  }, 60_000);
  afterAll(async () => s?.close());

  it('is dropped as too_large before the outbox (measured as re-serialised), counted in the metric and reported for its base', async () => {
    const p = await s.createPolicy();
    // A record that fits first: recorded and published.
    expect(await s.run(p.baseId, json({ applicant: { age: 30 } }))).toMatchObject({ result: true });
    await eventually(async () => expect(await s.decided()).toHaveLength(1));

    // About 10 KB of data, under the bound as sent; its record is about 44 KB once written again.
    const data = inflating(2000);
    expect(data.length).toBeLessThan(20_000);
    expect(await s.run(p.baseId, data)).toMatchObject({ result: true });

    await eventually(async () => expect(await s.counter('arbiter_decisions_dropped_total', { reason: 'too_large' })).toBe(1));
    await eventually(() => expect(s.reported(p.baseId)).toEqual({ outbox: 0, buffer: 0, settings: 0, tooLarge: 1 }));
    expect(await s.counter('arbiter_decisions_recorded_total')).toBe(1);
    // Nothing of it reached the outbox: the outbox empties and only the first record was published.
    const key = executedOutboxKey(s.prefix);
    await eventually(async () => expect(await redis.xlen(key)).toBe(0));
    expect(await s.counter('arbiter_outbox_dropped_total')).toBe(0);

    // Records that fit still flow.
    expect(await s.run(p.baseId, json({ applicant: { age: 12 } }))).toMatchObject({ result: false });
    await eventually(async () => expect(await s.decided()).toHaveLength(2));
    expect((await s.decided()).every((e) => JSON.stringify(e).length < 20_000)).toBe(true);
  }, 60_000);
});

describe('on a NATS server whose max_payload is smaller than DECISIONS_MAX_RECORD_BYTES', () => {
  const MAX_PAYLOAD = 65_536;
  let server: OwnServer;
  let confDir: string;
  let s: Setup;

  beforeAll(async () => {
    confDir = mkdtempSync(path.join(tmpdir(), 'exec-max-payload-'));
    const conf = path.join(confDir, 'nats.conf');
    writeFileSync(conf, `max_payload: ${MAX_PAYLOAD}\n`);
    server = await startNatsServer(['-c', conf]);
    s = await setUp(server.url, {}); // the default bound (1,000,000 bytes) is above this server's limit
  }, 60_000);

  afterAll(async () => {
    await s?.close();
    await server?.stop();
    rmSync(confDir, { recursive: true, force: true });
  });

  it("bounds records by the server's max_payload, read from the connection", async () => {
    const p = await s.createPolicy();
    expect(await s.run(p.baseId, json({ applicant: { age: 30 } }))).toMatchObject({ result: true });
    await eventually(async () => expect(await s.decided()).toHaveLength(1));
    // About 20 KB of data (the run request fits the server), about 88 KB of record (it would not).
    expect(await s.run(p.baseId, inflating(4000))).toMatchObject({ result: true });
    await eventually(() => expect(s.reported(p.baseId)).toMatchObject({ tooLarge: 1 }));
    expect(await s.counter('arbiter_decisions_dropped_total', { reason: 'too_large' })).toBe(1);
    await eventually(async () => expect(await redis.xlen(executedOutboxKey(s.prefix))).toBe(0));
    expect(await s.counter('arbiter_outbox_publish_failures_total')).toBe(0);
  }, 60_000);

  it('removes a record the bus refuses that is already in the outbox (left by an older replica) at its first refusal, counted for its base', async () => {
    const baseId = `base-${v7()}`;
    const decisionId = v7();
    const at = new Date().toISOString();
    const big: ArbiterEvent = {
      eventId: decisionId,
      orgId: 'acme',
      kind: 'decided',
      at,
      actor: { userId: 'admin' },
      resource: { type: 'policy', id: v7(), baseId },
      details: { decisionId, input: { pad: 'x'.repeat(MAX_PAYLOAD) } },
    };
    const key = executedOutboxKey(s.prefix);
    await new RedisOutbox(redis, key).enqueue([big]);
    s.exec.relay.kick();
    await eventually(async () => expect(await redis.xlen(key)).toBe(0));
    expect((await redis.xpending(key, 'relay'))[0]).toBe(0);
    expect(await s.counter('arbiter_outbox_dropped_total', { reason: 'too_large' })).toBe(1);
    await eventually(() => expect(s.reported(baseId)).toEqual({ outbox: 0, buffer: 0, settings: 0, tooLarge: 1 }));
    expect((await s.decided()).map((e) => e.eventId)).not.toContain(decisionId);
  }, 60_000);
});
