import { DecisionDropsReply, DecisionSubject } from '@arbiter/contracts';
import {
  closeRedis,
  connectNats,
  natsSecurityOf,
  natsTuningOf,
  createRedis,
  ensureEventStream,
  redisOptionsOf,
  RedisOutbox,
  maxEventBytes,
  startService,
  type Bus,
  type EventRelay,
  type RunningService,
  type ServiceKit,
} from '@arbiter/service-kit';
import type { Redis } from 'ioredis';
import type { ExecConfig } from './config.js';
import { DecisionRecorder } from './recording/recorder.js';
import { busSettingsSource, RecordingSettings } from './recording/settings.js';
import { WorkerPool } from './workers/worker-pool.js';
import { execService } from './intake/endpoints.js';
import { ExecutedEvents } from './recording/executed-events.js';
import { ExecMetrics } from './metrics.js';
import { RuleIndex } from './answers/rule-index.js';
import { RunnableResolver } from './answers/runnable-resolver.js';
import { RolloutGuard } from './answers/rollout-guard.js';
import { StoredRuns } from './answers/stored-runs.js';
import { ShadowRuns } from './answers/shadow-runs.js';

/** How long a closing service lets the relay publish the last window before leaving it in the outbox. */
const LAST_EVENTS_MS = 2000;

/** The Redis stream the execution service's `executed` events wait in until JetStream has them. */
export function executedOutboxKey(prefix: string): string {
  return `${prefix}:outbox:execution`;
}

/** A running execution service, with its parts exposed for tests. */
export interface Execution extends RunningService {
  bus: Bus;
  pool: WorkerPool;
  index: RuleIndex;
  metrics: ExecMetrics;
  redis: Redis;
  /** The `executed` events batcher. */
  events: ExecutedEvents;
  /** Publishes the outbox of `executed` events to JetStream. */
  relay: EventRelay;
  /** Decision records (undefined when `DECISIONS_ENABLED` is false). */
  decisions: DecisionRecorder | undefined;
  /** Shadow runs of bases with a candidate. */
  shadows: ShadowRuns;
}

/**
 * Starts the pool (waiting until a worker has loaded the engine), connects NATS and Redis, and
 * serves the `exec` endpoints. `executed` events go through a Redis-stream outbox (no PostgreSQL on
 * the run path) published by the event relay on its own NATS connection, which stays open after the
 * bus drains so the last window can still go out.
 */
export function startExecution(kit: ServiceKit<ExecConfig>, opts: { workerFile?: URL } = {}): Promise<Execution> {
  return startService(kit, async (s) => {
    const { config, logger } = kit;
    const prefix = config.NATS_SUBJECT_PREFIX;
    const pool = s.add(
      'worker pool',
      new WorkerPool({
        size: config.EXEC_POOL_SIZE,
        taskTimeoutMs: config.EXEC_TASK_TIMEOUT_MS,
        cacheSize: config.EXEC_CACHE_SIZE,
        stepBudget: config.EXEC_STEP_BUDGET,
        traceStepBudget: config.EXEC_TRACE_STEP_BUDGET,
        perCallerMax: config.EXEC_CALLER_MAX,
        ...(config.EXEC_PERSON_MAX !== undefined ? { perPersonMax: config.EXEC_PERSON_MAX } : {}),
        queueMax: config.EXEC_QUEUE_MAX,
        queueWaitMs: config.EXEC_QUEUE_WAIT_MS,
        batchMax: config.EXEC_BATCH_MAX,
        taskTargetMs: config.EXEC_TASK_TARGET_MS,
        perCallerItemsMax: config.EXEC_CALLER_ITEMS_MAX,
        ...(config.EXEC_PERSON_ITEMS_MAX !== undefined ? { perPersonItemsMax: config.EXEC_PERSON_ITEMS_MAX } : {}),
        queueItemsMax: config.EXEC_QUEUE_ITEMS_MAX,
        maxTraceBytes: config.MAX_TRACE_BYTES,
        maxDataDepth: config.MAX_DATA_DEPTH,
        ...(opts.workerFile ? { workerFile: opts.workerFile } : {}),
      }),
      (p) => p.close(),
    );
    await pool.warmUp();
    logger.info({ poolSize: config.EXEC_POOL_SIZE }, 'worker pool ready');
    const redis = s.add('redis', createRedis(config.REDIS_URL, logger, redisOptionsOf(config)), closeRedis);
    const index = s.add(
      'rule index',
      new RuleIndex(redis, prefix, logger, config.EXEC_INDEX_FLUSH_MS, {
        ttlSeconds: config.EXEC_INDEX_TTL_SECONDS,
        maxRules: config.EXEC_INDEX_MAX_RULES,
      }),
      (i) => i.close(),
    );
    const metrics = new ExecMetrics(kit.metrics);
    metrics.watchQueue(() => pool.stats());
    const limits = { maxRuleBytes: config.MAX_RULE_BYTES, maxDataDepth: config.MAX_DATA_DEPTH, maxTraceBytes: config.MAX_TRACE_BYTES };
    const eventsNc = s.add(
      'events connection',
      await connectNats(config.NATS_URL, `${kit.name}-events`, natsSecurityOf(config), natsTuningOf(config)),
      (nc) => (nc.isClosed() ? undefined : nc.drain().catch(() => nc.close())),
    );
    const outbox = s.add('outbox', new RedisOutbox(redis, executedOutboxKey(prefix)), (o) => o.close().catch(() => undefined));
    await ensureEventStream(eventsNc, prefix, { replicas: config.EVENTS_STREAM_REPLICAS });
    // The recorder is made below; the relay tells it of records the bus refused (too large), for the bases' stats.
    const recorder: { current?: DecisionRecorder } = {};
    const relay = s.relay(eventsNc, outbox, {
      canPublish: () => !eventsNc.isClosed(),
      onDropped: (dropped, reason) => recorder.current?.droppedFromOutbox(reason, dropped),
    });
    // On close, the relay gets a moment to publish the last window before it stops.
    s.add('last events', relay, (r) => Promise.race([r.settled(), new Promise((resolve) => setTimeout(resolve, LAST_EVENTS_MS).unref())]));
    const sink = {
      enqueue: async (closed: Parameters<RedisOutbox['enqueue']>[0]) => {
        await outbox.enqueue(closed);
        relay.kick();
      },
      enqueueSerialized: async (serialized: readonly string[]) => {
        await outbox.enqueueSerialized(serialized);
        relay.kick();
      },
    };
    const busMaxEventBytes = maxEventBytes(eventsNc);
    if (config.DECISIONS_ENABLED && busMaxEventBytes !== undefined && config.DECISIONS_MAX_RECORD_BYTES > busMaxEventBytes) {
      logger.warn(
        { configured: config.DECISIONS_MAX_RECORD_BYTES, maxBytes: busMaxEventBytes },
        "DECISIONS_MAX_RECORD_BYTES is above what the bus takes (its max_payload): records are bounded by the bus's limit",
      );
    }
    const events = s.add(
      'executed events',
      new ExecutedEvents(sink, logger.child({ component: 'events' }), metrics, {
        flushMs: config.EVENTS_FLUSH_MS,
        batchMax: config.EVENTS_BATCH_MAX,
        bufferMax: config.EVENTS_BUFFER_MAX,
      }),
      (e) => e.close(),
    );
    // Decision records read their settings over the bus, which connects next; added before it, the
    // recorder closes after the bus has drained, so runs answered while it drains are still recorded.
    const connected: { bus?: Bus } = {};
    const decisions = config.DECISIONS_ENABLED
      ? s.add(
          'decision records',
          new DecisionRecorder(
            { enqueue: (_events, serialized) => sink.enqueueSerialized(serialized), length: () => redis.xlen(executedOutboxKey(prefix)) },
            new RecordingSettings(
              (orgId) =>
                connected.bus
                  ? busSettingsSource(connected.bus, config.REGISTRY_TIMEOUT_MS)(orgId)
                  : Promise.reject(new Error('the bus is not connected yet')),
              config.DECISIONS_SETTINGS_TTL_MS,
              config.DECISIONS_SETTINGS_MAX_AGE_MS,
            ),
            logger.child({ component: 'decisions' }),
            kit.metrics,
            {
              perSecond: config.DECISIONS_PER_SECOND,
              flushMs: config.DECISIONS_FLUSH_MS,
              bufferMax: config.DECISIONS_BUFFER_MAX,
              outboxMax: config.DECISIONS_OUTBOX_MAX,
              // What the bus takes now (a reconnect may bring another max_payload), never above the setting.
              maxRecordBytes: () => Math.min(config.DECISIONS_MAX_RECORD_BYTES, maxEventBytes(eventsNc) ?? Number.POSITIVE_INFINITY),
              reportDrops: (report) =>
                connected.bus
                  ? connected.bus.request(DecisionSubject.dropsReport, report, DecisionDropsReply, {
                      timeoutMs: config.REGISTRY_TIMEOUT_MS,
                    })
                  : Promise.reject(new Error('the bus is not connected yet')),
            },
          ),
          (d) => d.close(),
        )
      : undefined;
    if (decisions) recorder.current = decisions;
    const bus = await s.bus();
    connected.bus = bus;
    const resolver = new RunnableResolver(redis, bus, prefix, metrics, config.REGISTRY_TIMEOUT_MS);
    const guard = s.add(
      'rollout guard',
      new RolloutGuard(redis, bus, prefix, logger.child({ component: 'rollout-guard' }), config.REGISTRY_TIMEOUT_MS),
      (g) => g.close(),
    );
    const shadows = s.add(
      'shadow runs',
      new ShadowRuns(
        {
          redis,
          prefix,
          pool,
          resolver,
          ...(decisions ? { decisions } : {}),
          logger: logger.child({ component: 'shadows' }),
          metrics: kit.metrics,
        },
        {
          maxInFlight: config.EXEC_SHADOW_MAX,
          maxPerPerson: config.EXEC_SHADOW_PERSON_MAX,
          waitMs: config.EXEC_SHADOW_WAIT_MS,
          flushMs: config.EXEC_SHADOW_FLUSH_MS,
        },
      ),
      (sh) => sh.close(),
    );
    const stored = new StoredRuns({ resolver, pool, events, metrics, guard, shadows, ...(decisions ? { decisions } : {}) });
    const maxReplyBytes = bus.nc.info?.max_payload ?? 1024 * 1024;
    await s.serve(bus, execService({ pool, metrics, index, stored, version: kit.version, limits, maxReplyBytes }));
    // Events a stopped replica left in the outbox go out now, not at the first sweep.
    relay.kick();
    return { bus, pool, index, metrics, redis, events, relay, decisions, shadows, ready: () => bus.connected() && pool.readyThreads > 0 };
  });
}
