import { type ArbiterError, eventStreamName, isArbiterError, type ArbiterEvent, type Role, type Scope } from '@arbiter/contracts';
import {
  deleteRedisKeys,
  dropDatabases,
  randomPrefix,
  principals,
  rejectionOf,
  streamMessages,
  testServers,
  withDatabase,
} from '@arbiter/test-kit';
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

/** Starts a registry on its own database and subject prefix for one test file (`env` overrides its configuration); `close()` removes everything it made. */
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
    // Publish checks and schema compiles run in a worker with this deadline (default 1000 ms); on a
    // loaded 2-core machine a worker may not get a core for that long. The deadline tests set their own.
    REGISTRY_CHECK_TIMEOUT_MS: '15000',
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
  const fail = (subject: string, payload: unknown): Promise<ArbiterError> =>
    rejectionOf(client.request(subject, payload, anyReply, { timeoutMs: 20_000 }), isArbiterError, `\`${subject}\``);
  const events = async (): Promise<ArbiterEvent[]> => (await streamMessages(jsm, streamName)).map((m) => m.json<ArbiterEvent>());
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
      await dropDatabases(PG_URL, [database]);
    },
  };
}

/** A caller of org `orgId` (`acme` by default) with `role`; the user id defaults to the role's name. */
export const as = principals<Role, Scope>();

/** Polls a check until it stops throwing, with a deadline (not a timing assertion). */
export { eventually } from '@arbiter/test-kit';

/** A rule with one golden rule reading `applicant.age`. */
export const ADULT_RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
