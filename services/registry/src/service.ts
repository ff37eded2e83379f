import {
  ensureEventStream,
  type EventRelay,
  PgOutbox,
  startService,
  type Bus,
  type RunningService,
  type ServiceKit,
} from '@arbiter/service-kit';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { RegistryConfig } from './config.js';
import { PublishChecks } from './checks/check-pool.js';
import { registryService } from './endpoints.js';
import { GroupsService } from './groups-service.js';
import { flowKind, policyKind } from './kinds.js';
import { migrateRegistry } from './migrate.js';
import { RecordsService } from './records-service.js';
import { ExportService } from './export-service.js';
import { ImportService } from './import-service.js';
import { RunnableIndexWriter } from './runnable-index.js';
import { runnableEndpoints } from './runnable-endpoints.js';
import { rolloutEndpoints } from './rollout-endpoints.js';
import { RolloutsService } from './rollouts-service.js';
import { RunnableNotifier } from './runnable-notifier.js';
import { RunnableSyncService } from './runnable-sync-service.js';
import { shadowEndpoints } from './shadow-endpoints.js';
import { ShadowService } from './shadow-service.js';

/** The registry's outbox table. */
export const OUTBOX_TABLE = 'registry_outbox';

/** A running registry, with its connections exposed for tests. */
export interface Registry extends RunningService {
  bus: Bus;
  db: Knex;
  redis: Redis;
  relay: EventRelay;
  index: RunnableIndexWriter;
}

/**
 * Starts the registry: creates the database if missing and migrates it, connects Redis and NATS,
 * ensures the events stream, starts the outbox relay and serves the `registry.*` subjects in the
 * `registry` queue group. Closes what it opened when a step fails.
 */
export function startRegistry(kit: ServiceKit<RegistryConfig>): Promise<Registry> {
  return startService(kit, async (s) => {
    const { config, logger } = kit;
    const db = await s.database(config.DATABASE_URL, migrateRegistry);
    const redis = await s.redis();
    const bus = await s.bus();
    await ensureEventStream(bus.nc, config.NATS_SUBJECT_PREFIX, { replicas: config.EVENTS_STREAM_REPLICAS });
    const outbox = new PgOutbox(db, OUTBOX_TABLE);
    const relay = s.relay(bus.nc, outbox, { intervalMs: config.REGISTRY_OUTBOX_INTERVAL_MS, canPublish: () => bus.connected() });
    const events = { enqueue: outbox.enqueue.bind(outbox), committed: () => relay.kick() };
    const index = s.add(
      'runnable index',
      new RunnableIndexWriter(redis, db, config.NATS_SUBJECT_PREFIX, logger.child({ component: 'index' }), config.REGISTRY_INDEX_RETRY_MS),
      (i) => i.close(),
    );
    const checks = s.add(
      'publish checks',
      new PublishChecks({
        threads: config.REGISTRY_CHECK_THREADS,
        timeoutMs: config.REGISTRY_CHECK_TIMEOUT_MS,
        stepBudget: config.EXEC_STEP_BUDGET,
      }),
      (c) => c.close(),
    );
    const kinds = { policy: policyKind(checks), flow: flowKind(checks) };
    const services = {
      policies: new RecordsService({ db, index, events }, kinds.policy),
      flows: new RecordsService({ db, index, events }, kinds.flow),
      groups: new GroupsService({ db, events }),
      exports: new ExportService(db),
      imports: new ImportService({
        db,
        index,
        events,
        logger: logger.child({ component: 'import' }),
        publishProblems: {
          policy: (content, trx, orgId) => kinds.policy.publishProblems(content, trx, orgId),
          flow: (content, trx, orgId) => kinds.flow.publishProblems(content, trx, orgId),
        },
        definitionProblems: (definitions) => checks.definitions(definitions),
      }),
    };
    const sync = new RunnableSyncService({
      db,
      limits: {
        stepBudget: config.EXEC_STEP_BUDGET,
        traceStepBudget: config.EXEC_TRACE_STEP_BUDGET,
        maxTraceBytes: config.MAX_TRACE_BYTES,
      },
      outboxTable: OUTBOX_TABLE,
      committed: events.committed,
    });
    // Workers load the engine before the first publish, so their start-up never counts against a check's deadline.
    await checks.warmUp();
    const def = registryService(services, kit.version);
    const rolloutDeps = { db, redis, prefix: config.NATS_SUBJECT_PREFIX, index, events };
    const rollouts = { policy: new RolloutsService(rolloutDeps, 'policy'), flow: new RolloutsService(rolloutDeps, 'flow') };
    const shadows = new ShadowService({
      db,
      redis,
      prefix: config.NATS_SUBJECT_PREFIX,
      index,
      events,
      logger: logger.child({ component: 'shadows' }),
    });
    await s.serve(bus, {
      ...def,
      endpoints: { ...def.endpoints, ...runnableEndpoints(sync), ...rolloutEndpoints(rollouts), ...shadowEndpoints(shadows) },
    });
    // Started after serving, so it is closed before the bus it publishes on.
    const notifier = s.add(
      'runnable notifier',
      new RunnableNotifier(config.DATABASE_URL, bus, logger.child({ component: 'runnable-notifier' })),
      (n) => n.close(),
    );
    await notifier.start();
    relay.kick();
    return { bus, db, redis, relay, index, ready: () => bus.connected() && redis.status === 'ready' };
  });
}
