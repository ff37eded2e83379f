import { createRequire } from 'node:module';
import { connectBus, createRedis, type Bus } from '@arbiter/service-kit';
import { connect } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ExecConfig } from './config.js';
import { EnginePool } from './engine-pool.js';
import { execService } from './endpoints.js';
import { ExecutedEvents } from './executed-events.js';
import { ExecMetrics } from './metrics.js';
import { RuleIndex } from './rule-index.js';
import { RunnableResolver } from './runnable-resolver.js';
import { StoredRunner } from './stored-runner.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/** A running execution service. */
export interface Execution {
  bus: Bus;
  pool: EnginePool;
  index: RuleIndex;
  metrics: ExecMetrics;
  redis: Redis;
  /** The `executed` events batcher. */
  events: ExecutedEvents;
  /** Connected to NATS with live workers. */
  ready(): boolean;
  /** Stops taking requests, finishes in-flight ones, drains NATS, publishes the last events, flushes the index, ends the pool. */
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
  const limits = { maxRuleBytes: config.MAX_RULE_BYTES, maxDataDepth: config.MAX_DATA_DEPTH };
  let bus: Bus | undefined;
  let events: ExecutedEvents | undefined;
  try {
    await pool.operators();
    bus = await connectBus({ url: config.NATS_URL, prefix: config.NATS_SUBJECT_PREFIX, name: deps.name ?? 'execution', logger });
    // Events have their own connection: it stays open after the bus drains, to publish the last window.
    const eventsNc = await connect({ servers: config.NATS_URL, name: `${deps.name ?? 'execution'}-events`, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    events = new ExecutedEvents(eventsNc, config.NATS_SUBJECT_PREFIX, logger.child({ component: 'events' }), metrics, {
      flushMs: config.EVENTS_FLUSH_MS,
      batchMax: config.EVENTS_BATCH_MAX,
      bufferMax: config.EVENTS_BUFFER_MAX,
    });
    const resolver = new RunnableResolver(redis, bus, config.NATS_SUBJECT_PREFIX, metrics, config.REGISTRY_TIMEOUT_MS);
    const stored = new StoredRunner({ resolver, pool, events, metrics, limits });
    await bus.serve(execService({ pool, metrics, index, stored, version, limits }));
  } catch (err) {
    await Promise.allSettled([pool.close(), index.close().then(() => redis.quit()), bus?.close(), events?.close()]);
    throw err;
  }
  const liveEvents = events;
  logger.info({ prefix: config.NATS_SUBJECT_PREFIX, poolSize: config.EXEC_POOL_SIZE }, 'execution service started');

  let closing: Promise<void> | undefined;
  return {
    bus,
    pool,
    index,
    metrics,
    redis,
    events: liveEvents,
    ready: () => bus.connected() && pool.threads > 0,
    close: () =>
      (closing ??= (async () => {
        await bus.close();
        await liveEvents.close();
        await index.close();
        await redis.quit().catch(() => redis.disconnect());
        await pool.close();
      })()),
  };
}
