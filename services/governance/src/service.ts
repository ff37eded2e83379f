import {
  connectServiceBus,
  databaseOptionsOf,
  ensureDatabase,
  ensureEventStream,
  EvalClient,
  EventRelay,
  openDatabase,
  PgOutbox,
  type Bus,
  type RunningService,
  type ServiceKit,
} from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { governanceDatabaseUrl, type GovernanceConfig } from './config.js';
import { governanceService } from './endpoints.js';
import { migrateGovernance } from './migrate.js';
import { NatsRegistryPort } from './registry-port.js';
import { ImpactService } from './impact-service.js';
import { ReviewsService } from './reviews-service.js';

/** The governance service's outbox table. */
export const OUTBOX_TABLE = 'governance_outbox';

/** A running governance service, with its connections exposed for tests. */
export interface Governance extends RunningService {
  bus: Bus;
  db: Knex;
  relay: EventRelay;
}

/**
 * Starts the governance service: creates its database if missing and migrates it, connects NATS,
 * ensures the events stream, starts the outbox relay and serves the `governance.*` subjects in the
 * `governance` queue group. Closes what it opened when a step fails.
 */
export async function startGovernance(kit: ServiceKit<GovernanceConfig>): Promise<Governance> {
  const { config, logger } = kit;
  const databaseUrl = governanceDatabaseUrl(config);
  await ensureDatabase(databaseUrl, { connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS });
  const db = openDatabase(databaseUrl, databaseOptionsOf(config));
  let bus: Bus | undefined;
  try {
    await migrateGovernance(db);
    bus = await connectServiceBus(kit);
    await ensureEventStream(bus.nc, config.NATS_SUBJECT_PREFIX, { replicas: config.EVENTS_STREAM_REPLICAS });
  } catch (err) {
    await Promise.allSettled([db.destroy(), bus?.close()]);
    throw err;
  }
  const liveBus = bus;
  const outbox = new PgOutbox(db, OUTBOX_TABLE);
  const relay = new EventRelay(bus.nc, outbox, config.NATS_SUBJECT_PREFIX, logger.child({ component: 'outbox' }), {
    intervalMs: config.GOVERNANCE_OUTBOX_INTERVAL_MS,
    canPublish: () => liveBus.connected(),
    metrics: kit.metrics,
  });
  const reviews = new ReviewsService({
    db,
    registry: new NatsRegistryPort(liveBus, config.GOVERNANCE_REGISTRY_TIMEOUT_MS),
    events: { enqueue: outbox.enqueue.bind(outbox), committed: () => relay.kick() },
  });
  const impact = new ImpactService({
    db,
    bus: liveBus,
    evals: new EvalClient(liveBus, { coalesce: false }),
    registry: new NatsRegistryPort(liveBus, config.GOVERNANCE_REGISTRY_TIMEOUT_MS),
    timeoutMs: config.GOVERNANCE_IMPACT_TIMEOUT_MS,
  });
  const stopAll = async (): Promise<void> => {
    await liveBus.close().catch(() => undefined);
    await relay.stop();
    await db.destroy();
  };
  try {
    await bus.serve(governanceService(reviews, kit.version, impact));
  } catch (err) {
    await stopAll();
    throw err;
  }
  relay.kick();
  logger.info({ prefix: config.NATS_SUBJECT_PREFIX }, 'governance service started');

  let stopping: Promise<void> | undefined;
  return {
    bus: liveBus,
    db,
    relay,
    ready: () => liveBus.connected(),
    close: () => (stopping ??= stopAll()),
  };
}
