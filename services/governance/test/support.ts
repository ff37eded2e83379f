import { randomBytes } from 'node:crypto';
import {
  eventStreamName,
  isArbiterError,
  PolicyRecord,
  PolicyUpdateReply,
  PolicyDraftReply,
  RegistrySubject,
  type ArbiterError,
  type ArbiterEvent,
  type Principal,
  type Role,
  type Scope,
} from '@arbiter/contracts';
import { RegistryConfig } from '@arbiter/registry/config';
import { startRegistry, type Registry } from '@arbiter/registry/service';
import { connectBus, createLogger, inProcessKit, type Bus } from '@arbiter/service-kit';
import { deleteRedisKeys, dropDatabases, principals, rejectionOf, streamMessages, testServers, withDatabase } from '@arbiter/test-kit';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import knex, { type Knex } from 'knex';
import { z } from 'zod';
import { GovernanceConfig, governanceDatabaseUrl } from '../src/config.js';
import { startGovernance, type Governance } from '../src/service.js';

const { postgres: PG_URL, nats: NATS_URL, redis: REDIS_URL } = testServers();
const anyReply = z.unknown();

/** A registry and a governance service running in-process, each with its own database, on one subject prefix. */
export interface TestEnv {
  prefix: string;
  registry: Registry;
  governance: Governance;
  governanceConfig: GovernanceConfig;
  /** A client connection on the same prefix (what the gateway would be). */
  client: Bus;
  /** Direct SQL on the governance database. */
  sql: Knex;
  jsm: JetStreamManager;
  /** The events stream of the prefix. */
  streamName: string;
  /** Sends a request and returns the reply data. */
  call<T>(subject: string, payload: unknown, reply: z.ZodType<T>): Promise<T>;
  /** The ArbiterError a request fails with. */
  fail(subject: string, payload: unknown): Promise<ArbiterError>;
  /** The events on the stream so far, in order. */
  events(): Promise<ArbiterEvent[]>;
  /** Stops the governance service (the registry keeps running). */
  stopGovernance(): Promise<void>;
  /** Starts the governance service again on the same database and prefix. */
  startGovernance(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a registry and a governance service for one test file; `close()` removes everything they made. */
export async function startTestEnv(): Promise<TestEnv> {
  const id = randomBytes(6).toString('hex');
  const registryDb = `arbiter_test_${id}`;
  const governanceDb = `arbiter_test_gov_${id}`;
  const prefix = `test_gov_${id}`;
  const logger = createLogger({ service: 'governance-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const registryConfig = RegistryConfig.parse({
    NATS_URL,
    REDIS_URL,
    DATABASE_URL: withDatabase(PG_URL, registryDb),
    NATS_SUBJECT_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    DB_POOL_MAX: '5',
    REGISTRY_OUTBOX_INTERVAL_MS: '100',
    // publish checks share 2 cores with other suites: a generous deadline keeps a slow compile from failing a publish
    REGISTRY_CHECK_TIMEOUT_MS: '10000',
  });
  const governanceConfig = GovernanceConfig.parse({
    NATS_URL,
    GOVERNANCE_DATABASE_URL: withDatabase(PG_URL, governanceDb),
    NATS_SUBJECT_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    DB_POOL_MAX: '5',
    GOVERNANCE_OUTBOX_INTERVAL_MS: '100',
  });
  const registry = await startRegistry(inProcessKit('registry', registryConfig, { logger }));
  let governance = await startGovernance(inProcessKit('governance', governanceConfig, { logger }));
  const client = await connectBus({ url: NATS_URL, prefix, name: 'governance-test-client', logger });
  const sql = knex({ client: 'pg', connection: governanceDatabaseUrl(governanceConfig), pool: { min: 0, max: 2 } });
  const jsm = await jetstreamManager(client.nc);
  const streamName = eventStreamName(prefix);
  let governanceUp = true;

  const call = <T>(subject: string, payload: unknown, reply: z.ZodType<T>) =>
    client.request(subject, payload, reply, { timeoutMs: 20_000 });
  const fail = (subject: string, payload: unknown): Promise<ArbiterError> =>
    rejectionOf(client.request(subject, payload, anyReply, { timeoutMs: 20_000 }), isArbiterError, `\`${subject}\``);
  const events = async (): Promise<ArbiterEvent[]> => (await streamMessages(jsm, streamName)).map((m) => m.json<ArbiterEvent>());
  return {
    prefix,
    registry,
    get governance() {
      return governance;
    },
    governanceConfig,
    client,
    sql,
    jsm,
    streamName,
    call,
    fail,
    events,
    async stopGovernance() {
      governanceUp = false;
      await governance.close();
    },
    async startGovernance() {
      governance = await startGovernance(inProcessKit('governance', governanceConfig, { logger }));
      governanceUp = true;
    },
    async close() {
      if (governanceUp) await governance.close();
      await registry.close();
      await jsm.streams.delete(streamName).catch(() => undefined);
      await client.close();
      await sql.destroy();
      await deleteRedisKeys(REDIS_URL, `${prefix}:`);
      await dropDatabases(PG_URL, [registryDb, governanceDb]);
    },
  };
}

/** A caller of org `orgId` (`acme` by default) with `role`; the user id defaults to the role's name. */
export const as = principals<Role, Scope>();

/** Polls a check until it stops throwing, with a deadline (not a timing assertion). */
export { eventually } from '@arbiter/test-kit';

/** A rule with one golden rule reading `applicant.age`. */
export const ADULT_RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';

/** Registry helpers on a test env. */
export function registryOf(env: TestEnv) {
  return {
    createPolicy: (p: Principal, rule = ADULT_RULE, extra: Record<string, unknown> = {}) =>
      env.call(RegistrySubject.policyCreate, { principal: p, name: 'p', rule, ...extra }, PolicyRecord),
    editPolicy: (p: Principal, policyId: string, edits: Record<string, unknown>) =>
      env.call(RegistrySubject.policyUpdate, { principal: p, policyId, status: 'draft', ...edits }, PolicyUpdateReply),
    getPolicy: (p: Principal, policyId: string) => env.call(RegistrySubject.policyGet, { principal: p, policyId }, PolicyRecord),
    /** Publishes a draft directly (as an org without governance does). */
    publishPolicy: async (p: Principal, policyId: string) =>
      (await env.call(RegistrySubject.policyUpdate, { principal: p, policyId, status: 'published' }, PolicyUpdateReply)).record,
    /** The base's draft, made from the given version when there is none. */
    draftOf: async (p: Principal, policyId: string) =>
      (await env.call(RegistrySubject.policyDraft, { principal: p, policyId }, PolicyDraftReply)).record,
  };
}
