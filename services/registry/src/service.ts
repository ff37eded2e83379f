import { createRequire } from 'node:module';
import { connectBus, connectRedis, type Bus } from '@arbiter/service-kit';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Logger } from './logger.js';
import type { RegistryConfig } from './config.js';
import { PublishChecks } from './checks/check-pool.js';
import { ensureDatabase, migrateLatest, openDatabase } from './db/database.js';
import { registryService } from './endpoints.js';
import { OutboxRelay } from './events/outbox-relay.js';
import { ensureEventStream } from './events/stream.js';
import { GroupsService } from './groups-service.js';
import { flowKind, policyKind } from './kinds.js';
import { RecordsService } from './records-service.js';
import { RunnableIndexWriter } from './runnable-index.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/** A running registry. */
export interface Registry {
  bus: Bus;
  db: Knex;
  redis: Redis;
  relay: OutboxRelay;
  index: RunnableIndexWriter;
  /** Connected to NATS and Redis. */
  ready(): boolean;
  /** Stops taking requests, finishes in-flight ones, stops the outbox relay (unsent events wait in PostgreSQL), closes every connection. */
  stop(): Promise<void>;
}

/**
 * Starts the registry: creates the database if missing and migrates it, connects Redis and NATS,
 * ensures the events stream, starts the outbox relay and serves the `registry.*` subjects in the
 * `registry` queue group.
 */
export async function startRegistry(config: RegistryConfig, logger: Logger, opts: { name?: string } = {}): Promise<Registry> {
  await ensureDatabase(config.DATABASE_URL);
  const db = openDatabase(config.DATABASE_URL, config.REGISTRY_DB_POOL_MAX);
  let redis: Redis | undefined;
  let bus: Bus | undefined;
  try {
    await migrateLatest(db);
    redis = await connectRedis(config.REDIS_URL, logger);
    bus = await connectBus({ url: config.NATS_URL, prefix: config.NATS_SUBJECT_PREFIX, name: opts.name ?? 'registry', logger });
    await ensureEventStream(bus.nc, config.NATS_SUBJECT_PREFIX);
  } catch (err) {
    await Promise.allSettled([db.destroy(), bus?.close(), redis?.quit()]);
    throw err;
  }
  const relay = new OutboxRelay(bus.nc, db, config.NATS_SUBJECT_PREFIX, logger.child({ component: 'outbox' }), config.REGISTRY_OUTBOX_INTERVAL_MS);
  const index = new RunnableIndexWriter(redis, db, config.NATS_SUBJECT_PREFIX, logger.child({ component: 'index' }), config.REGISTRY_INDEX_RETRY_MS);
  const kickRelay = () => relay.kick();
  const checks = new PublishChecks({ threads: config.REGISTRY_CHECK_THREADS, timeoutMs: config.REGISTRY_CHECK_TIMEOUT_MS });
  const services = {
    policies: new RecordsService({ db, index, kickRelay }, policyKind(checks)),
    flows: new RecordsService({ db, index, kickRelay }, flowKind(checks)),
    groups: new GroupsService({ db, kickRelay }),
  };
  try {
    await bus.serve(registryService(services, version));
  } catch (err) {
    await Promise.allSettled([relay.stop(), bus.close(), redis.quit(), db.destroy(), checks.close()]);
    index.close();
    throw err;
  }
  relay.kick();
  logger.info({ prefix: config.NATS_SUBJECT_PREFIX }, 'registry service started');

  const liveBus = bus;
  const liveRedis = redis;
  let stopping: Promise<void> | undefined;
  return {
    bus: liveBus,
    db,
    redis: liveRedis,
    relay,
    index,
    ready: () => liveBus.connected() && liveRedis.status === 'ready',
    stop: () =>
      (stopping ??= (async () => {
        await liveBus.close().catch(() => undefined);
        await relay.stop();
        await checks.close();
        index.close();
        await liveRedis.quit().catch(() => liveRedis.disconnect());
        await db.destroy();
      })()),
  };
}
