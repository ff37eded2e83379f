import {
  ensureEventStream,
  EvalClient,
  type EventRelay,
  PgOutbox,
  startService,
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
import { reportBudget } from './impact-report.js';
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
export function startGovernance(kit: ServiceKit<GovernanceConfig>): Promise<Governance> {
  return startService(kit, async (s) => {
    const { config } = kit;
    const db = await s.database(governanceDatabaseUrl(config), migrateGovernance);
    const bus = await s.bus();
    await ensureEventStream(bus.nc, config.NATS_SUBJECT_PREFIX, { replicas: config.EVENTS_STREAM_REPLICAS });
    const outbox = new PgOutbox(db, OUTBOX_TABLE);
    const relay = s.relay(bus.nc, outbox, { intervalMs: config.GOVERNANCE_OUTBOX_INTERVAL_MS, canPublish: () => bus.connected() });
    // Reports are bounded to fit the review summary that carries them in one bus message.
    const maxReportBytes = reportBudget(bus.nc.info?.max_payload);
    const reviews = new ReviewsService({
      db,
      registry: new NatsRegistryPort(bus, config.GOVERNANCE_REGISTRY_TIMEOUT_MS),
      events: { enqueue: outbox.enqueue.bind(outbox), committed: () => relay.kick() },
      maxReportBytes,
    });
    const impact = new ImpactService({
      db,
      bus,
      evals: new EvalClient(bus, { coalesce: false }),
      registry: new NatsRegistryPort(bus, config.GOVERNANCE_REGISTRY_TIMEOUT_MS),
      timeoutMs: config.GOVERNANCE_IMPACT_TIMEOUT_MS,
      replaysPerSecond: config.GOVERNANCE_IMPACT_REPLAYS_PER_SECOND,
      maxReportBytes,
    });
    await s.serve(bus, governanceService(reviews, kit.version, impact));
    relay.kick();
    return { bus, db, relay, ready: () => bus.connected() };
  });
}
