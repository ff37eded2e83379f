import { DatabaseConfig, LogConfig, NatsConfig, OpsConfig, serviceConfig } from '@arbiter/service-kit';
import { z } from 'zod';

const positiveInt = () => z.coerce.number().int().positive();

/**
 * Environment of the governance service: the shared parts plus its own `GOVERNANCE_*` variables
 * (README: Configuration). It keeps its tables in a database of its own, so `DATABASE_URL` (shared
 * by the gateway and the registry) is replaced by `GOVERNANCE_DATABASE_URL`; the pool and deadline
 * variables are the shared ones.
 */
export const GovernanceConfig = serviceConfig([LogConfig, NatsConfig, DatabaseConfig.omit({ DATABASE_URL: true }), OpsConfig], {
  /** The governance database; created when missing. */
  GOVERNANCE_DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/arbiter_governance'),
  /** Deadline of a request to the registry (reading a draft, publishing): below the gateway's `GOVERNANCE_TIMEOUT_MS`. */
  GOVERNANCE_REGISTRY_TIMEOUT_MS: positiveInt().default(5000),
  /** How often the outbox relay sweeps for events left behind by another process (it runs right after each commit). */
  GOVERNANCE_OUTBOX_INTERVAL_MS: positiveInt().default(30_000),
});
export type GovernanceConfig = z.infer<typeof GovernanceConfig>;
