import { DatabaseConfig, LogConfig, NatsConfig, OpsConfig, companionDatabaseUrl, serviceConfig } from '@arbiter/service-kit';
import { z } from 'zod';

const positiveInt = () => z.coerce.number().int().positive();

/**
 * Environment of the governance service: the shared parts plus its own `GOVERNANCE_*` variables
 * (docs/configuration.md). It keeps its tables in a database of its own: `GOVERNANCE_DATABASE_URL`,
 * else `DATABASE_URL`'s database with `_governance` appended, so each stack has its own; the pool
 * and deadline variables are the shared ones.
 */
export const GovernanceConfig = serviceConfig([LogConfig, NatsConfig, DatabaseConfig, OpsConfig], {
  /** The governance database; created when missing. Unset: beside `DATABASE_URL` ({@link governanceDatabaseUrl}). */
  GOVERNANCE_DATABASE_URL: z.url().optional(),
  /** Deadline of a request to the registry (reading a draft, publishing): below the gateway's `GOVERNANCE_TIMEOUT_MS`. */
  GOVERNANCE_REGISTRY_TIMEOUT_MS: positiveInt().default(5000),
  /** Deadline of each step of an impact analysis (a history page, a batch of replays): below the gateway's `GOVERNANCE_TIMEOUT_MS`. */
  GOVERNANCE_IMPACT_TIMEOUT_MS: positiveInt().default(8000),
  /**
   * Decisions an impact analysis replays per second at most (0: as fast as the machine goes): the
   * analysis is background work, paced so live runs of others keep their latency.
   */
  GOVERNANCE_IMPACT_REPLAYS_PER_SECOND: z.coerce.number().int().min(0).default(3000),
  /** How often the outbox relay sweeps for events left behind by another process (it runs right after each commit). */
  GOVERNANCE_OUTBOX_INTERVAL_MS: positiveInt().default(30_000),
});
export type GovernanceConfig = z.infer<typeof GovernanceConfig>;

/** The governance database: `GOVERNANCE_DATABASE_URL`, else `<DATABASE_URL's database>_governance` on the same server. */
export function governanceDatabaseUrl(c: Pick<GovernanceConfig, 'DATABASE_URL' | 'GOVERNANCE_DATABASE_URL'>): string {
  return c.GOVERNANCE_DATABASE_URL ?? companionDatabaseUrl(c.DATABASE_URL, 'governance');
}
