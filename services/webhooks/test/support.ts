import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { dropDatabases, eventually, testServers, withDatabase } from '@arbiter/test-kit';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import knex, { type Knex } from 'knex';
import type { Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { WebhooksConfig } from '../src/config.js';
import { startWebhooks, type Webhooks } from '../src/service.js';

export const { postgres: PG_URL, nats: NATS_URL } = testServers();
export { eventually };

/** A test's own database and prefix, a bus client, a publisher of events, direct SQL. */
export interface TestEnv {
  prefix: string;
  database: string;
  env: Record<string, string>;
  client: Bus;
  js: JetStreamClient;
  jsm: JetStreamManager;
  sql: Knex;
  /** Metrics of the last service started. */
  metrics: Registry;
  /** Starts a webhooks service in-process (private addresses and http allowed unless overridden). */
  start(overrides?: Record<string, string>): Promise<Webhooks>;
  /** Publishes events on the stream (msgID = eventId). */
  publish(events: readonly ArbiterEvent[]): Promise<void>;
  close(): Promise<void>;
}

export async function startTestEnv(): Promise<TestEnv> {
  const id = randomBytes(6).toString('hex');
  const database = `arbiter_webhooks_test_${id}`;
  const prefix = `test_webhooks_${id}`;
  const env: Record<string, string> = {
    NATS_URL,
    WEBHOOKS_DATABASE_URL: withDatabase(PG_URL, database),
    NATS_SUBJECT_PREFIX: prefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DB_POOL_MAX: '6',
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    WEBHOOKS_ALLOW_HTTP: 'true',
    WEBHOOKS_RETRY_BASE_MS: '100',
    WEBHOOKS_RETRY_MAX_DELAY_MS: '400',
    WEBHOOKS_POLL_MS: '100',
    WEBHOOKS_OUTBOX_INTERVAL_MS: '500',
  };
  const logger = createLogger({ service: 'webhooks-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const client = await connectBus({ url: NATS_URL, prefix, name: 'webhooks-test-client', logger });
  await ensureEventStream(client.nc, prefix);
  const js = jetstream(client.nc, { timeout: 10_000 });
  const jsm = await jetstreamManager(client.nc);
  const sql = knex({ client: 'pg', connection: env.WEBHOOKS_DATABASE_URL, pool: { min: 0, max: 2 } });
  const started: Webhooks[] = [];
  const out: TestEnv = {
    metrics: createRegistry('webhooks'),
    prefix,
    database,
    env,
    client,
    js,
    jsm,
    sql,
    async start(overrides = {}) {
      const config = WebhooksConfig.parse({ ...env, ...overrides });
      out.metrics = createRegistry('webhooks');
      const service = await startWebhooks(inProcessKit('webhooks', config, { logger, metrics: out.metrics }));
      started.push(service);
      return service;
    },
    async publish(events) {
      for (const e of events) await js.publish(eventSubject(prefix, e.orgId, e.kind), JSON.stringify(e), { msgID: e.eventId });
    },
    async close() {
      await Promise.allSettled(started.map((s) => s.close()));
      await jsm.streams.delete(eventStreamName(prefix)).catch(() => undefined);
      await jsm.streams.delete(deadEventStreamName(prefix)).catch(() => undefined);
      await client.close();
      await sql.destroy();
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
    at: new Date().toISOString(),
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

/** One request a {@link Receiver} got, with whether each secret it knows verified it. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  verified: Record<string, boolean>;
}

/** Whether `secret` verifies a received request (the `standardwebhooks` package, as a receiver would). */
export function verifies(r: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature });
    return true;
  } catch {
    return false;
  }
}

/** How a {@link Receiver} answers: a status (with a body and headers), or never. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | { hang: true };

/**
 * A real local HTTP receiver verifying each request with the `standardwebhooks` package, as a
 * receiver would, against every secret it was told.
 */
export class Receiver {
  readonly received: Received[] = [];
  readonly secrets = new Map<string, string>();
  answer: (req: Received, n: number) => Answer = () => ({ status: 204 });
  private readonly server: Server;
  private readonly hanging = new Set<ServerResponse>();

  private constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  ids(): string[] {
    return this.received.map((r) => r.id);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const h = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    const verified: Record<string, boolean> = {};
    for (const [name, secret] of this.secrets) {
      try {
        new Webhook(secret).verify(body, h);
        verified[name] = true;
      } catch {
        verified[name] = false;
      }
    }
    const got: Received = { id: h['webhook-id'], timestamp: h['webhook-timestamp'], signature: h['webhook-signature'], body, verified };
    this.received.push(got);
    const a = this.answer(got, this.received.length);
    if ('hang' in a) {
      this.hanging.add(res);
      return;
    }
    res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers }).end(a.body ?? '');
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
