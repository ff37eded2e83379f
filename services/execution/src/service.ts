import { createRequire } from 'node:module';
import { connectBus, type Bus } from '@arbiter/service-kit';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ExecConfig } from './config.js';
import { EnginePool } from './engine-pool.js';
import { execService } from './endpoints.js';
import { ExecMetrics } from './metrics.js';
import { createRedis } from './redis.js';
import { RuleIndex } from './rule-index.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/** A running execution service. */
export interface Execution {
  bus: Bus;
  pool: EnginePool;
  index: RuleIndex;
  metrics: ExecMetrics;
  redis: Redis;
  /** Connected to NATS with live workers. */
  ready(): boolean;
  /** Stops taking requests, finishes in-flight ones, drains NATS, flushes the index, ends the pool. */
  close(): Promise<void>;
}

/**
 * Starts the pool (waiting until a worker has loaded the engine), connects NATS and Redis, and
 * serves the `exec` endpoints.
 */
export async function startExecution(
  config: ExecConfig,
  deps: { logger: Logger; registry: Registry; name?: string; workerFile?: URL },
): Promise<Execution> {
  const { logger, registry } = deps;
  const pool = new EnginePool({
    size: config.EXEC_POOL_SIZE,
    taskTimeoutMs: config.EXEC_TASK_TIMEOUT_MS,
    cacheSize: config.EXEC_CACHE_SIZE,
    workerFile: deps.workerFile,
  });
  const redis = createRedis(config.REDIS_URL, logger);
  const index = new RuleIndex(redis, config.NATS_SUBJECT_PREFIX, logger, config.EXEC_INDEX_FLUSH_MS);
  const metrics = new ExecMetrics(registry);
  let bus: Bus;
  try {
    await pool.operators();
    bus = await connectBus({ url: config.NATS_URL, prefix: config.NATS_SUBJECT_PREFIX, name: deps.name ?? 'execution', logger });
    await bus.serve(
      execService({
        pool,
        metrics,
        index,
        version,
        limits: { maxRuleBytes: config.MAX_RULE_BYTES, maxDataDepth: config.MAX_DATA_DEPTH },
      }),
    );
  } catch (err) {
    await Promise.allSettled([pool.close(), index.close().then(() => redis.quit())]);
    throw err;
  }
  logger.info({ prefix: config.NATS_SUBJECT_PREFIX, poolSize: config.EXEC_POOL_SIZE }, 'execution service started');

  let closing: Promise<void> | undefined;
  return {
    bus,
    pool,
    index,
    metrics,
    redis,
    ready: () => bus.connected() && pool.threads > 0,
    close: () =>
      (closing ??= (async () => {
        await bus.close();
        await index.close();
        await redis.quit().catch(() => redis.disconnect());
        await pool.close();
      })()),
  };
}
