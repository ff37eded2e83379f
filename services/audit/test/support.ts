import { randomBytes, randomUUID } from 'node:crypto';
import {
  deadEventStreamName,
  eventStreamName,
  eventSubject,
  type ArbiterEvent,
  type EventKind,
  type Principal,
  type Role,
} from '@arbiter/contracts';
import { connectBus, createLogger, createRegistry, ensureEventStream, inProcessKit, type Bus } from '@arbiter/service-kit';
import { dropDatabases, eventually, freePort, testServers, withDatabase } from '@arbiter/test-kit';
import type { Registry } from 'prom-client';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import knex, { type Knex } from 'knex';
import { AuditConfig } from '../src/config.js';
import { startAudit, type Audit } from '../src/service.js';

export const { postgres: PG_URL, nats: NATS_URL } = testServers();
export { freePort, withDatabase };

/** The environment variables of an audit service on this test's database and prefix. */
export function auditEnv(database: string, prefix: string, natsUrl = NATS_URL): Record<string, string> {
  return {
    NATS_URL: natsUrl,
    AUDIT_DATABASE_URL: withDatabase(PG_URL, database),
    NATS_SUBJECT_PREFIX: prefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DB_POOL_MAX: '4',
    AUDIT_ACK_WAIT_MS: '2000',
  };
}

/** A test's own database, prefix and stream, with a publisher of events and direct SQL. */
export interface TestEnv {
  prefix: string;
  database: string;
  env: Record<string, string>;
  /** A bus client on the prefix (what the gateway would be). */
  client: Bus;
  js: JetStreamClient;
  jsm: JetStreamManager;
  streamName: string;
  sql: Knex;
  /** Starts an audit service in-process (the one `close()` stops), its metrics in `metrics`. */
  startAudit(overrides?: Record<string, string>): Promise<Audit>;
  /** Metrics of the last audit service started in-process. */
  metrics: Registry;
  /** Publishes events on the stream (msgID = eventId) and waits for JetStream's acks. */
  publish(events: readonly ArbiterEvent[]): Promise<void>;
  /** Rows stored so far. */
  stored(orgId?: string): Promise<number>;
  /** Waits until `n` rows are stored (or fails after `ms`). */
  waitStored(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a test environment on the shared NATS, or on `natsUrl` (a test's own server). */
export async function startTestEnv(opts: { natsUrl?: string } = {}): Promise<TestEnv> {
  const id = randomBytes(6).toString('hex');
  const database = `arbiter_audit_test_${id}`;
  const prefix = `test_audit_${id}`;
  const natsUrl = opts.natsUrl ?? NATS_URL;
  const env = auditEnv(database, prefix, natsUrl);
  const logger = createLogger({ service: 'audit-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const client = await connectBus({ url: natsUrl, prefix, name: 'audit-test-client', logger });
  await ensureEventStream(client.nc, prefix);
  const js = jetstream(client.nc, { timeout: 10_000 });
  const jsm = await jetstreamManager(client.nc);
  const streamName = eventStreamName(prefix);
  const sql = knex({ client: 'pg', connection: env.AUDIT_DATABASE_URL, pool: { min: 0, max: 2 } });
  const started: Audit[] = [];

  const admin = knex({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  const stored = async (orgId?: string): Promise<number> => {
    // Until the service created its database, nothing is stored (and knex would log a connection error).
    const db = (await admin.raw(`select 1 from pg_database where datname = ?`, [database])) as { rows: unknown[] };
    if (db.rows.length === 0) return 0;
    const exists = (await sql.raw(`select to_regclass('audit_events') as t`)) as { rows: { t: string | null }[] };
    if (!exists.rows[0]?.t) return 0;
    const q = sql('audit_events').count<{ n: string }[]>('* as n');
    if (orgId) q.where('org_id', orgId);
    return Number((await q)[0]?.n ?? 0);
  };
  const out: TestEnv = {
    metrics: createRegistry('audit'),
    prefix,
    database,
    env,
    client,
    js,
    jsm,
    streamName,
    sql,
    async startAudit(overrides = {}) {
      const config = AuditConfig.parse({ ...env, ...overrides });
      out.metrics = createRegistry('audit');
      const audit = await startAudit(inProcessKit('audit', config, { logger, metrics: out.metrics }));
      started.push(audit);
      return audit;
    },
    async publish(events) {
      const pending: Promise<unknown>[] = [];
      for (const e of events) {
        pending.push(js.publish(eventSubject(prefix, e.orgId, e.kind), JSON.stringify(e), { msgID: e.eventId }));
        if (pending.length >= 500) await Promise.all(pending.splice(0));
      }
      await Promise.all(pending);
    },
    stored,
    async waitStored(n, ms = 20_000) {
      await eventually(
        async () => {
          const count = await stored();
          if (count < n) throw new Error(`expected ${n} stored events, found ${count}`);
        },
        { timeoutMs: ms, intervalMs: 100 },
      );
    },
    async close() {
      await Promise.allSettled(started.map((a) => a.close()));
      await jsm.streams.delete(streamName).catch(() => undefined);
      await jsm.streams.delete(deadEventStreamName(prefix)).catch(() => undefined);
      await client.close();
      await sql.destroy();
      await admin.destroy();
      await dropDatabases(PG_URL, [database]);
    },
  };
  return out;
}

let seq = 0;
/** An event of `kind` in org `orgId` (overridable field by field). */
export function event(kind: EventKind, over: Partial<ArbiterEvent> = {}): ArbiterEvent {
  seq += 1;
  return {
    eventId: randomUUID(),
    orgId: 'acme',
    kind,
    at: new Date(Date.now() - 1000 + (seq % 1000)).toISOString(),
    actor: { userId: 'alice', apiKeyId: 'key-1' },
    resource: { type: 'policy', id: randomUUID(), baseId: randomUUID() },
    details: { n: seq },
    ...over,
  };
}

/** A caller of org `orgId` with `role`. */
export function as(role: Role, opts: { orgId?: string; userId?: string; scopes?: Principal['scopes'] } = {}): Principal {
  return { orgId: opts.orgId ?? 'acme', userId: opts.userId ?? role, role, ...(opts.scopes ? { scopes: opts.scopes } : {}) };
}
