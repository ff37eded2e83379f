import { startService, type Bus, type RunningService, type ServiceKit } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { auditDatabaseUrl, type AuditConfig } from './config.js';
import { AuditConsumer } from './consumer.js';
import { DecisionIngestMetrics } from './decision-metrics.js';
import { auditService } from './endpoints.js';
import { migrateAudit } from './migrate.js';
import { Partitions } from './partitions.js';
import { pruneDropReports } from './repositories/decision-stats.js';
import { batchStore } from './store.js';

const DAY_MS = 86_400_000;

/** A running audit service, with its parts exposed for tests. */
export interface Audit extends RunningService {
  bus: Bus;
  db: Knex;
  consumer: AuditConsumer;
  partitions: Partitions;
  /** The monthly partitions of `decisions` (retention `DECISIONS_RETENTION_DAYS`). */
  decisionPartitions: Partitions;
}

/**
 * Starts the audit service: creates its database if missing and migrates it, makes the monthly
 * partitions ahead (and drops expired ones), connects NATS, starts the durable consumer of the
 * events stream and serves `audit.query` in the `audit` queue group.
 */
export function startAudit(kit: ServiceKit<AuditConfig>): Promise<Audit> {
  return startService(kit, async (s) => {
    const { config, logger } = kit;
    const db = await s.database(auditDatabaseUrl(config), migrateAudit);
    const partitions = new Partitions(db, config.AUDIT_RETENTION_DAYS, logger.child({ component: 'partitions' }));
    const decisionPartitions = new Partitions(db, config.DECISIONS_RETENTION_DAYS, logger.child({ component: 'partitions' }), 'decisions');
    await partitions.maintain();
    await decisionPartitions.maintain();
    const bus = await s.bus();
    const store = batchStore({
      db,
      partitions,
      decisionPartitions,
      retentionDays: config.AUDIT_RETENTION_DAYS,
      decisionRetentionDays: config.DECISIONS_RETENTION_DAYS,
      decisionMetrics: new DecisionIngestMetrics(kit.metrics),
    });
    const maintenance = setInterval(() => {
      partitions.maintain().catch((err: unknown) => logger.warn({ err }, 'audit partition maintenance failed; retrying later'));
      decisionPartitions.maintain().catch((err: unknown) => logger.warn({ err }, 'decision partition maintenance failed; retrying later'));
      pruneDropReports(db, new Date(Date.now() - DAY_MS)).catch((err: unknown) =>
        logger.warn({ err }, 'pruning decision drop reports failed; retrying later'),
      );
    }, config.AUDIT_MAINTENANCE_INTERVAL_MS);
    maintenance.unref();
    s.add('partition maintenance', maintenance, clearInterval);
    await s.serve(bus, auditService(db, kit.version));
    // Closed first: it stores and acks what it already fetched, which needs the connection.
    const consumer = s.add(
      'events consumer',
      new AuditConsumer(
        bus.nc,
        {
          prefix: config.NATS_SUBJECT_PREFIX,
          durable: config.AUDIT_CONSUMER_NAME,
          batchSize: config.AUDIT_BATCH_SIZE,
          expiresMs: config.AUDIT_FETCH_EXPIRES_MS,
          ackWaitMs: config.AUDIT_ACK_WAIT_MS,
          timeoutMs: config.AUDIT_NATS_TIMEOUT_MS,
          streamReplicas: config.EVENTS_STREAM_REPLICAS,
          maxDeliveries: config.AUDIT_MAX_DELIVERIES,
        },
        store,
        logger.child({ component: 'consumer' }),
        kit.metrics,
      ),
      (c) => c.stop(),
    );
    consumer.start();
    return { bus, db, consumer, partitions, decisionPartitions, ready: () => bus.connected() && consumer.isConnected() };
  });
}
