import { DatabaseConfig, LogConfig, NatsConfig, OpsConfig, companionDatabaseUrl, serviceConfig } from '@arbiter/service-kit';
import { z } from 'zod';

const positiveInt = () => z.coerce.number().int().positive();
/** `true`/`false` (and 1/0) from the environment; `z.coerce.boolean` would read "false" as true. */
const flag = () =>
  z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1');

/**
 * Environment of the webhooks service: the shared parts plus its own `WEBHOOKS_*` variables
 * (docs/configuration.md, docs/webhooks.md). It keeps its endpoints and deliveries in a database of
 * its own: `WEBHOOKS_DATABASE_URL`, else `DATABASE_URL`'s database with `_webhooks` appended.
 */
export const WebhooksConfig = serviceConfig([LogConfig, NatsConfig, DatabaseConfig, OpsConfig], {
  /** The webhooks database; created when missing. Unset: beside `DATABASE_URL` ({@link webhooksDatabaseUrl}). */
  WEBHOOKS_DATABASE_URL: z.url().optional(),
  /** How long a delivery is retried (hours, fractions allowed); an endpoint failing for that long is disabled. */
  WEBHOOKS_RETRY_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(24),
  /** First retry delay; each next one doubles (with jitter), up to `WEBHOOKS_RETRY_MAX_DELAY_MS`. */
  WEBHOOKS_RETRY_BASE_MS: positiveInt().default(5000),
  /** Longest wait between two attempts of one delivery. */
  WEBHOOKS_RETRY_MAX_DELAY_MS: positiveInt().default(3_600_000),
  /** Deliveries in flight at most per endpoint (per replica), so one slow receiver holds only its own. */
  WEBHOOKS_CONCURRENCY: positiveInt().max(100).default(4),
  /** Deadline of one attempt: connecting, sending and the answer's status and first KiB. */
  WEBHOOKS_ATTEMPT_TIMEOUT_MS: positiveInt().default(10_000),
  /** Days finished deliveries and their attempts are kept. */
  WEBHOOKS_LOG_DAYS: positiveInt().default(14),
  /** Deliver to loopback, private, link-local, CGNAT and metadata addresses (development and tests only). */
  WEBHOOKS_ALLOW_PRIVATE: flag(),
  /** Accept `http://` endpoint URLs (development and tests only). */
  WEBHOOKS_ALLOW_HTTP: flag(),
  /** Name of the durable JetStream consumer (replicas share it and split the events). */
  WEBHOOKS_CONSUMER_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .default('webhooks'),
  /** Time JetStream waits for an ack before redelivering an event. */
  WEBHOOKS_ACK_WAIT_MS: positiveInt().default(30_000),
  /**
   * Deliveries of an event the service cannot fan out (its database refusing it) before it is parked on
   * the dead-letter stream `<events stream>_DEAD`; the events after it flow meanwhile.
   */
  WEBHOOKS_MAX_DELIVERIES: positiveInt().max(100).default(5),
  /** How often the dispatcher looks for due deliveries when nothing woke it (new events and answers wake it). */
  WEBHOOKS_POLL_MS: positiveInt().default(1000),
  /** How often old deliveries are pruned. */
  WEBHOOKS_MAINTENANCE_INTERVAL_MS: positiveInt().default(3_600_000),
  /** How often the outbox relay sweeps for the service's own events left behind (it runs right after each commit). */
  WEBHOOKS_OUTBOX_INTERVAL_MS: positiveInt().default(30_000),
  /** Deadline of the service's own bus requests (JetStream API calls). */
  WEBHOOKS_NATS_TIMEOUT_MS: positiveInt().default(5000),
});
export type WebhooksConfig = z.infer<typeof WebhooksConfig>;

/** The webhooks database: `WEBHOOKS_DATABASE_URL`, else `<DATABASE_URL's database>_webhooks` on the same server. */
export function webhooksDatabaseUrl(c: Pick<WebhooksConfig, 'DATABASE_URL' | 'WEBHOOKS_DATABASE_URL'>): string {
  return c.WEBHOOKS_DATABASE_URL ?? companionDatabaseUrl(c.DATABASE_URL, 'webhooks');
}
