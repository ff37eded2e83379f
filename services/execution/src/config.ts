import { availableParallelism } from 'node:os';
import { RUN_DEFAULTS } from '@arbiter/contracts';
import { EvaluationConfig, LogConfig, NatsConfig, OpsConfig, RedisConfig, serviceConfig } from '@arbiter/service-kit';
import { z } from 'zod';

const positiveInt = () => z.coerce.number().int().positive();

/** Environment of the execution service: the shared parts plus its own variables (docs/configuration.md#execution, docs/api.md#limits-on-what-a-request-may-carry). */
export const ExecConfig = serviceConfig([LogConfig, NatsConfig, RedisConfig, OpsConfig, EvaluationConfig], {
  /** Worker threads in the evaluation pool; one less than the cores by default, at least 1. */
  EXEC_POOL_SIZE: positiveInt().default(Math.max(1, availableParallelism() - 1)),
  /** Deadline of one task from when a worker starts it (the last resort: the step budget stops runaway rules first). */
  EXEC_TASK_TIMEOUT_MS: positiveInt().default(RUN_DEFAULTS.itemTimeoutMs),
  /**
   * Evaluation jobs (a single run, or one message's group of batch items) and other tasks one caller
   * (API key, else bearer user) may have queued or running; past it 429 `rate_limited`.
   */
  EXEC_CALLER_MAX: positiveInt().default(64),
  /** The same, over all the keys of one person (a key's owner, or a bearer's user); default EXEC_CALLER_MAX. */
  EXEC_PERSON_MAX: positiveInt().optional(),
  /** Tasks waiting for a thread in all; past it 503 `dependency_unavailable`. */
  EXEC_QUEUE_MAX: positiveInt().default(1000),
  /** Longest wait for a thread; past it 503. Plus EXEC_TASK_TIMEOUT_MS it stays under the gateway's ENGINE_TIMEOUT_MS. */
  EXEC_QUEUE_WAIT_MS: positiveInt().default(RUN_DEFAULTS.queueWaitMs),
  /** Items of evaluation jobs one caller may have queued or running (a job counts once against EXEC_CALLER_MAX); past it 429. */
  EXEC_CALLER_ITEMS_MAX: positiveInt().default(4096),
  /** The same, over all the keys of one person; default EXEC_CALLER_ITEMS_MAX. */
  EXEC_PERSON_ITEMS_MAX: positiveInt().optional(),
  /** Items of evaluation jobs queued or running in all; past it 503. */
  EXEC_QUEUE_ITEMS_MAX: positiveInt().default(16_384),
  /** Items one worker task carries at most, from one or several callers' jobs (1: one task each). */
  EXEC_BATCH_MAX: positiveInt().default(256),
  /**
   * Worker time (ms) one task aims at: a task is filled with chunks of callers' jobs, by their
   * measured cost per item, until it is expected to take this long; others wait behind at most
   * about one task (plus one item slower than this alone).
   */
  EXEC_TASK_TARGET_MS: positiveInt().default(5),
  /** Compiled policies each worker keeps. */
  EXEC_CACHE_SIZE: positiveInt().default(1000),
  /** How often the rule-hash index is written to Redis. */
  EXEC_INDEX_FLUSH_MS: positiveInt().default(1000),
  /** A rule-index record not run for this long expires. */
  EXEC_INDEX_TTL_SECONDS: positiveInt().default(86_400),
  /** Records the rule index keeps at most; the least recently run are deleted beyond it. */
  EXEC_INDEX_MAX_RULES: positiveInt().default(10_000),
  /** How often `executed` events are aggregated and written to the outbox (docs/design/events-and-audit.md). */
  EVENTS_FLUSH_MS: positiveInt().default(1000),
  /** Open aggregates (org, record, actor) that close a window before `EVENTS_FLUSH_MS`. */
  EVENTS_BATCH_MAX: positiveInt().default(1000),
  /** Events kept in memory while the outbox (Redis) is unreachable; the oldest are dropped beyond it. */
  EVENTS_BUFFER_MAX: positiveInt().default(10000),
  /** Record decisions of stored runs (docs/decisions.md); off: none are built or sent. */
  DECISIONS_ENABLED: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** Decisions recorded per base per second by each replica, unless the base sets its own cap; errors are always recorded. */
  DECISIONS_PER_SECOND: z.coerce.number().int().min(0).default(50),
  /** How often built decision records are written to the outbox. */
  DECISIONS_FLUSH_MS: positiveInt().default(200),
  /** Decision records waiting in memory for the outbox; beyond it they are dropped (counted). */
  DECISIONS_BUFFER_MAX: positiveInt().default(10_000),
  /** Entries of the execution outbox past which decision records are dropped (counted) instead of written. */
  DECISIONS_OUTBOX_MAX: positiveInt().default(200_000),
  /**
   * Largest decision record (its serialised `decided` event, UTF-8 bytes) written to the outbox;
   * larger ones are dropped as `too_large`. The bus's `max_payload` bounds it too: the smaller applies.
   */
  DECISIONS_MAX_RECORD_BYTES: positiveInt().default(1_000_000),
  /** How long an org's decision settings are used before they are read again from the audit service. */
  DECISIONS_SETTINGS_TTL_MS: positiveInt().default(5000),
  /**
   * How long an org's settings are still used while no audit replica answers (a change cannot be
   * made then either); past it the org's records are dropped (reason `settings`) until a read answers.
   */
  DECISIONS_SETTINGS_MAX_AGE_MS: positiveInt().default(30_000),
  /**
   * Shadow runs (docs/design/shadow-runs.md): candidate items queued or running at once in this
   * replica; a sampled run past it, or while live work waits for a thread, is dropped (counted).
   */
  EXEC_SHADOW_MAX: positiveInt().default(64),
  /**
   * Shadow jobs (one run's sampled items) of one person queued or running at once in this replica;
   * past it, or while the person uses half of its own EXEC_PERSON_MAX / EXEC_PERSON_ITEMS_MAX, a
   * sampled run is dropped (counted): shadow work never takes the room the person's live runs need.
   */
  EXEC_SHADOW_PERSON_MAX: positiveInt().default(4),
  /** Longest wait of a shadow run for a thread; one not started by then is dropped (counted). */
  EXEC_SHADOW_WAIT_MS: positiveInt().default(2000),
  /** How often shadow counters and examples are written to Redis. */
  EXEC_SHADOW_FLUSH_MS: positiveInt().default(500),
  /** Deadline of `registry.*.resolve`, asked only on a runnable-index miss. */
  REGISTRY_TIMEOUT_MS: positiveInt().default(5000),
  MAX_RULE_BYTES: positiveInt().default(65536),
  MAX_DATA_DEPTH: positiveInt().default(RUN_DEFAULTS.maxDataDepth),
  /** UTF-8 bytes of one evaluation's trace; longer traces are cut, ending with a marker line. */
  MAX_TRACE_BYTES: positiveInt().default(RUN_DEFAULTS.maxTraceBytes),
});
export type ExecConfig = z.infer<typeof ExecConfig>;
