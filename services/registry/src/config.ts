import { DatabaseConfig, EvaluationConfig, LogConfig, NatsConfig, OpsConfig, RedisConfig, serviceConfig } from '@arbiter/service-kit';
import { RUN_DEFAULTS } from '@arbiter/contracts';
import { z } from 'zod';

const positiveInt = () => z.coerce.number().int().positive();

/** Environment of the registry service: the shared parts plus its own `REGISTRY_*` variables (docs/configuration.md). */
export const RegistryConfig = serviceConfig([LogConfig, NatsConfig, RedisConfig, DatabaseConfig, OpsConfig, EvaluationConfig], {
  /** How often the outbox relay sweeps for events left behind by another process (it runs right after each commit, and retries every second while a publish fails). */
  REGISTRY_OUTBOX_INTERVAL_MS: positiveInt().default(30_000),
  /** How often failed runnable-index writes are retried. */
  REGISTRY_INDEX_RETRY_MS: positiveInt().default(1000),
  /** Worker threads running publish checks (rule compiles and saved tests). */
  REGISTRY_CHECK_THREADS: positiveInt().default(1),
  /** Time a publish check may take per saved test, and once more for the rule (the evaluation time-out of docs/configuration.md#registry). */
  REGISTRY_CHECK_TIMEOUT_MS: positiveInt().default(1000),
  /**
   * The execution service's trace limit (same variable, same default), told to SDK runtimes with
   * the runnable records so their local runs cut traces where a remote run would.
   */
  MAX_TRACE_BYTES: positiveInt().default(RUN_DEFAULTS.maxTraceBytes),
});
export type RegistryConfig = z.infer<typeof RegistryConfig>;
