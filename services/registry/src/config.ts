import { BaseConfig } from '@arbiter/service-kit';
import { z } from 'zod';

const positiveInt = () => z.coerce.number().int().positive();

/** Environment of the registry service (DESIGN.md §1). */
export const RegistryConfig = BaseConfig.extend({
  /** Port of `/healthz`, `/readyz`, `/metrics`; 0 turns the ops server off. */
  OPS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  OPS_HOST: z.string().default('0.0.0.0'),
  /** Connections in the PostgreSQL pool. */
  REGISTRY_DB_POOL_MAX: positiveInt().default(10),
  /** How often the outbox relay retries unsent events (it also runs right after each commit). */
  REGISTRY_OUTBOX_INTERVAL_MS: positiveInt().default(1000),
  /** How often failed runnable-index writes are retried. */
  REGISTRY_INDEX_RETRY_MS: positiveInt().default(1000),
  /** Worker threads running publish checks (rule compiles and saved tests). */
  REGISTRY_CHECK_THREADS: positiveInt().default(1),
  /** Time a publish check may take per saved test, and once more for the rule (DESIGN.md §4's evaluation time-out). */
  REGISTRY_CHECK_TIMEOUT_MS: positiveInt().default(1000),
});
export type RegistryConfig = z.infer<typeof RegistryConfig>;
