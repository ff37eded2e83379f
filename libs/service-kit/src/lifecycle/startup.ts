import type { NatsConnection } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { z } from 'zod';
import type { Bus, ServiceDef } from '../bus.js';
import type { DatabaseConfig, NatsConfig, RedisConfig } from '../config.js';
import { databaseOptionsOf, ensureDatabase, openDatabase } from '../database.js';
import { EventRelay, type EventRelayOptions } from '../events/event-relay.js';
import type { OutboxStore } from '../events/outbox.js';
import { closeRedis, connectRedis, redisOptionsOf } from '../redis.js';
import type { RunningService, ServiceKit } from '../run-service.js';
import { connectServiceBus } from '../service-bus.js';

type DatabaseSettings = z.infer<typeof DatabaseConfig>;
type NatsSettings = z.infer<typeof NatsConfig>;
type RedisSettings = z.infer<typeof RedisConfig>;

/**
 * What a starting service has opened, to be closed in the reverse order: the last thing opened is the
 * first closed. Serving is opened last, so at close a service first stops taking requests and
 * finishes those in flight, then closes what they used.
 */
export class Startup<C> {
  private readonly closers: { what: string; close: () => unknown }[] = [];
  private closing: Promise<void> | undefined;

  constructor(readonly kit: ServiceKit<C>) {}

  /** Registers how `value` is closed (`what` names it in a log line if closing fails); returns `value`. */
  add<T>(what: string, value: T, close: (value: T) => unknown): T {
    this.closers.push({ what, close: () => close(value) });
    return value;
  }

  /** Creates the database at `url` if it is missing, opens the service's pool on it and migrates it. */
  async database(this: Startup<DatabaseSettings>, url: string, migrate: (db: Knex) => Promise<void>): Promise<Knex> {
    await ensureDatabase(url, { connectTimeoutMs: this.kit.config.DB_CONNECT_TIMEOUT_MS });
    const db = this.add('database', openDatabase(url, databaseOptionsOf(this.kit.config)), (d) => d.destroy());
    await migrate(db);
    return db;
  }

  /** Connects Redis (`REDIS_URL`) and waits until it is ready. */
  async redis(this: Startup<RedisSettings>): Promise<Redis> {
    const { config, logger } = this.kit;
    return this.add('redis', await connectRedis(config.REDIS_URL, logger, redisOptionsOf(config)), closeRedis);
  }

  /** Connects the service's bus. */
  async bus(this: Startup<NatsSettings>): Promise<Bus> {
    return this.add('bus', await connectServiceBus(this.kit), (b) => b.close());
  }

  /**
   * Starts the relay that publishes `outbox`'s events to the events stream on `nc`, while `canPublish`
   * says the connection is up; a pass every `intervalMs` (or on `kick()`).
   */
  relay(
    this: Startup<NatsSettings>,
    nc: NatsConnection,
    outbox: OutboxStore,
    opts: { intervalMs?: number; canPublish: () => boolean; onDropped?: EventRelayOptions['onDropped'] },
  ): EventRelay {
    const { config, logger, metrics } = this.kit;
    const relay = new EventRelay(nc, outbox, config.NATS_SUBJECT_PREFIX, logger.child({ component: 'outbox' }), {
      ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
      ...(opts.onDropped !== undefined ? { onDropped: opts.onDropped } : {}),
      canPublish: opts.canPublish,
      metrics,
    });
    return this.add('outbox relay', relay, (r) => r.stop());
  }

  /** Serves `def` on `bus`: closed first, so nothing else closes under a request in flight. */
  async serve(bus: Bus, def: ServiceDef): Promise<void> {
    await bus.serve(def);
    this.add('serving', bus, (b) => b.close());
  }

  /**
   * Closes everything, the last opened first (once: later calls share the first). A closer that throws
   * is logged and the rest still close.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const { what, close } of this.closers.splice(0).reverse()) {
        try {
          await close();
        } catch (err) {
          this.kit.logger.warn({ err, what }, `closing the ${what} failed`);
        }
      }
    })();
    return this.closing;
  }
}

/**
 * The one start-up skeleton of a service: `open` opens the service's parts through a {@link Startup}
 * (database, Redis, bus, outbox relay, serving, or anything else with `add`) and returns the service's
 * handles with its readiness. When `open` throws, what it had opened is closed (last first) and the
 * error is rethrown; otherwise `<name> service started` is logged and the service's `close` closes it
 * all, once, in the same order.
 */
export async function startService<C, T extends Pick<RunningService, 'ready'>>(
  kit: ServiceKit<C>,
  open: (startup: Startup<C>) => Promise<T>,
): Promise<T & RunningService> {
  const startup = new Startup(kit);
  let service: T;
  try {
    service = await open(startup);
  } catch (err) {
    await startup.close();
    throw err;
  }
  const prefix = (kit.config as { NATS_SUBJECT_PREFIX?: string }).NATS_SUBJECT_PREFIX;
  kit.logger.info(prefix !== undefined ? { prefix } : {}, `${kit.name} service started`);
  return Object.assign(service, { close: () => startup.close() });
}
