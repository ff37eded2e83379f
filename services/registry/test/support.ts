import { type ArbiterError, eventStreamName, isArbiterError, type ArbiterEvent, type Principal, type Role } from '@arbiter/contracts';
import { deleteRedisKeys, randomPrefix, testServers, withDatabase } from '@arbiter/test-kit';
import { connectBus, createLogger, inProcessKit, type Bus } from '@arbiter/service-kit';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import knex, { type Knex } from 'knex';
import { z } from 'zod';
import { RegistryConfig } from '../src/config.js';
import { startRegistry, type Registry } from '../src/service.js';

const { postgres: PG_URL, nats: NATS_URL, redis: REDIS_URL } = testServers();
const anyReply = z.unknown();

/** A registry running in-process against its own database, subject prefix, Redis keys and stream. */
export interface TestEnv {
  prefix: string;
  registry: Registry;
  /** A client connection on the same prefix (what the gateway would be). */
  client: Bus;
  /** Direct SQL on the test database. */
  sql: Knex;
  redis: Redis;
  jsm: JetStreamManager;
  streamName: string;
  /** Sends a registry request and returns the reply data. */
  call<T>(subject: string, payload: unknown, reply: z.ZodType<T>): Promise<T>;
  /** The ArbiterError a registry request fails with. */
  fail(subject: string, payload: unknown): Promise<ArbiterError>;
  /** The events on the stream so far, in order. */
  events(): Promise<ArbiterEvent[]>;
  close(): Promise<void>;
}

/** Starts a registry for one test file; `close()` removes everything it made. */
/** Starts a registry on its own database and subject prefix; `env` overrides its configuration. */
export async function startTestEnv(env: Record<string, string> = {}): Promise<TestEnv> {
  const prefix = randomPrefix('test_reg');
  const database = prefix.replace('test_reg_', 'arbiter_test_');
  const config = RegistryConfig.parse({
    NATS_URL,
    REDIS_URL,
    DATABASE_URL: withDatabase(PG_URL, database),
    NATS_SUBJECT_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    DB_POOL_MAX: '5',
    REGISTRY_OUTBOX_INTERVAL_MS: '100',
    ...env,
  });
  const logger = createLogger({ service: 'registry-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const registry = await startRegistry(inProcessKit('registry', config, { logger }));
  const client = await connectBus({ url: NATS_URL, prefix, name: 'registry-test-client', logger });
  const sql = knex({ client: 'pg', connection: config.DATABASE_URL, pool: { min: 0, max: 2 } });
  const redis = new Redis(REDIS_URL);
  const jsm = await jetstreamManager(client.nc);
  const streamName = eventStreamName(prefix);

  const call = <T>(subject: string, payload: unknown, reply: z.ZodType<T>) =>
    client.request(subject, payload, reply, { timeoutMs: 20_000 });
  const fail = async (subject: string, payload: unknown): Promise<ArbiterError> => {
    try {
      await client.request(subject, payload, anyReply, { timeoutMs: 20_000 });
    } catch (err) {
      if (isArbiterError(err)) return err;
      throw err;
    }
    throw new Error(`expected \`${subject}\` to fail`);
  };
  const events = async (): Promise<ArbiterEvent[]> => {
    const info = await jsm.streams.info(streamName);
    const out: ArbiterEvent[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const msg = await jsm.streams.getMessage(streamName, { seq });
      if (msg) out.push(msg.json<ArbiterEvent>());
    }
    return out;
  };
  return {
    prefix,
    registry,
    client,
    sql,
    redis,
    jsm,
    streamName,
    call,
    fail,
    events,
    async close() {
      await registry.close();
      await jsm.streams.delete(streamName).catch(() => undefined);
      await client.close();
      await sql.destroy();
      redis.disconnect();
      await deleteRedisKeys(REDIS_URL, `${prefix}:`);
      const admin = knex({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
      try {
        await admin.raw('drop database if exists ?? with (force)', [database]);
      } finally {
        await admin.destroy();
      }
    },
  };
}

/** A caller of org `orgId` with `role`; the user id defaults to the role's name. */
export function as(role: Role, opts: { orgId?: string; userId?: string; scopes?: Principal['scopes'] } = {}): Principal {
  return { orgId: opts.orgId ?? 'acme', userId: opts.userId ?? role, role, ...(opts.scopes ? { scopes: opts.scopes } : {}) };
}

/** Polls a check until it stops throwing, with a deadline (not a timing assertion). */
export { eventually } from '@arbiter/test-kit';

/** A rule with one golden rule reading `applicant.age`. */
export const ADULT_RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
