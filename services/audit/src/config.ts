import { DatabaseConfig, LogConfig, NatsConfig, OpsConfig, companionDatabaseUrl, serviceConfig } from '@arbiter/service-kit';
import { z } from 'zod';

const positiveInt = () => z.coerce.number().int().positive();

/**
 * Environment of the audit service: the shared parts plus its own `AUDIT_*` variables
 * (docs/configuration.md). It keeps its own database (`AUDIT_DATABASE_URL`, else `DATABASE_URL`'s
 * database with `_audit` appended), so the trail's size and retention never weigh on the other
 * services' database, and each stack has its own trail.
 */
export const AuditConfig = serviceConfig([LogConfig, NatsConfig, DatabaseConfig, OpsConfig], {
  /** The audit database; created on first start. Unset: beside `DATABASE_URL` ({@link auditDatabaseUrl}). */
  AUDIT_DATABASE_URL: z.url().optional(),
  /** Days of events to keep; 0 keeps everything. Whole monthly partitions older than that are dropped. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(0).default(0),
  /** Days of decision records to keep (0 keeps everything); whole monthly partitions older than that are dropped. */
  DECISIONS_RETENTION_DAYS: z.coerce.number().int().min(0).default(30),
  /** Name of the durable JetStream consumer (replicas share it and split the events). */
  AUDIT_CONSUMER_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .default('audit'),
  /** Events fetched and written per INSERT. */
  AUDIT_BATCH_SIZE: positiveInt().max(5000).default(500),
  /** How long a fetch waits for events before the next one (JetStream's minimum is 1000). */
  AUDIT_FETCH_EXPIRES_MS: z.coerce.number().int().min(1000).default(1000),
  /** Time JetStream waits for an ack before redelivering an event (longer than a batch's INSERT may take). */
  AUDIT_ACK_WAIT_MS: positiveInt().default(30_000),
  /**
   * Deliveries of a message the database refuses (a row it cannot hold, a month without a partition)
   * before it is parked on the dead-letter stream `<events stream>_DEAD`; the events after it flow meanwhile.
   */
  AUDIT_MAX_DELIVERIES: positiveInt().max(100).default(5),
  /** How often partitions ahead are created and expired ones dropped. */
  AUDIT_MAINTENANCE_INTERVAL_MS: positiveInt().default(3_600_000),
  /** Deadline of the audit service's own bus requests (JetStream API calls). */
  AUDIT_NATS_TIMEOUT_MS: positiveInt().default(5000),
});
export type AuditConfig = z.infer<typeof AuditConfig>;

/** The audit database: `AUDIT_DATABASE_URL`, else `<DATABASE_URL's database>_audit` on the same server. */
export function auditDatabaseUrl(c: Pick<AuditConfig, 'DATABASE_URL' | 'AUDIT_DATABASE_URL'>): string {
  return c.AUDIT_DATABASE_URL ?? companionDatabaseUrl(c.DATABASE_URL, 'audit');
}
