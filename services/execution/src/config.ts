import { availableParallelism } from 'node:os';
import { BaseConfig } from '@arbiter/service-kit';
import { z } from 'zod';

const positiveInt = () => z.coerce.number().int().positive();

/** Environment of the execution service (DESIGN.md §1 and §4 limits). */
export const ExecConfig = BaseConfig.extend({
  /** Worker threads in the evaluation pool; one less than the cores by default, at least 1. */
  EXEC_POOL_SIZE: positiveInt().default(Math.max(1, availableParallelism() - 1)),
  EXEC_TASK_TIMEOUT_MS: positiveInt().default(1000),
  /** Compiled policies each worker keeps. */
  EXEC_CACHE_SIZE: positiveInt().default(1000),
  /** How often the rule-hash index is written to Redis. */
  EXEC_INDEX_FLUSH_MS: positiveInt().default(1000),
  /** How often `executed` events are aggregated and published (DESIGN.md §7). */
  EVENTS_FLUSH_MS: positiveInt().default(1000),
  /** Open aggregates (org, record, actor) that close a window before `EVENTS_FLUSH_MS`. */
  EVENTS_BATCH_MAX: positiveInt().default(1000),
  /** Events kept for retry while JetStream is unreachable; the oldest are dropped beyond it. */
  EVENTS_BUFFER_MAX: positiveInt().default(10000),
  /** Deadline of `registry.*.resolve`, asked only on a runnable-index miss. */
  REGISTRY_TIMEOUT_MS: positiveInt().default(5000),
  MAX_RULE_BYTES: positiveInt().default(65536),
  MAX_DATA_DEPTH: positiveInt().default(64),
  /** Port of `/healthz`, `/readyz`, `/metrics`; 0 turns the ops server off. */
  OPS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  OPS_HOST: z.string().default('0.0.0.0'),
});
export type ExecConfig = z.infer<typeof ExecConfig>;
