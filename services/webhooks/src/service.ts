import {
  ensureEventStream,
  PgOutbox,
  startService,
  type Bus,
  type EventRelay,
  type RunningService,
  type ServiceKit,
} from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { webhooksDatabaseUrl, type WebhooksConfig } from './config.js';
import { EventsConsumer } from './consumer.js';
import { Dispatcher } from './dispatcher.js';
import { webhooksService } from './endpoints.js';
import { fanOut } from './fan-out.js';
import { ManageService } from './manage-service.js';
import { migrateWebhooks } from './migrate.js';
import { pruneDeliveries } from './repositories/deliveries.js';

/** The webhooks service's outbox table. */
export const OUTBOX_TABLE = 'webhooks_outbox';
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** A running webhooks service, with its parts exposed for tests. */
export interface Webhooks extends RunningService {
  bus: Bus;
  db: Knex;
  relay: EventRelay;
  consumer: EventsConsumer;
  dispatcher: Dispatcher;
  /** Deletes deliveries finished, and attempts made, more than `WEBHOOKS_LOG_DAYS` ago. */
  prune(): Promise<number>;
}

/**
 * Starts the webhooks service: creates its database if missing and migrates it, connects NATS,
 * ensures the events stream, starts the outbox relay of its own events, serves `webhooks.*` in the
 * `webhooks` queue group, and starts the durable consumer of the events stream and the dispatcher.
 */
export function startWebhooks(kit: ServiceKit<WebhooksConfig>): Promise<Webhooks> {
  return startService(kit, async (s) => {
    const { config, logger } = kit;
    const db = await s.database(webhooksDatabaseUrl(config), migrateWebhooks);
    const bus = await s.bus();
    await ensureEventStream(bus.nc, config.NATS_SUBJECT_PREFIX, { replicas: config.EVENTS_STREAM_REPLICAS });
    const outbox = new PgOutbox(db, OUTBOX_TABLE);
    const relay = s.relay(bus.nc, outbox, { intervalMs: config.WEBHOOKS_OUTBOX_INTERVAL_MS, canPublish: () => bus.connected() });
    const events = { enqueue: outbox.enqueue.bind(outbox), committed: () => relay.kick() };
    const policy = { allowHttp: config.WEBHOOKS_ALLOW_HTTP, allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE };
    const dispatcher = s.add(
      'dispatcher',
      new Dispatcher(
        db,
        events,
        {
          ...policy,
          concurrency: config.WEBHOOKS_CONCURRENCY,
          timeoutMs: config.WEBHOOKS_ATTEMPT_TIMEOUT_MS,
          retryWindowMs: Math.round(config.WEBHOOKS_RETRY_HOURS * HOUR_MS),
          retryBaseMs: config.WEBHOOKS_RETRY_BASE_MS,
          retryMaxDelayMs: config.WEBHOOKS_RETRY_MAX_DELAY_MS,
          pollMs: config.WEBHOOKS_POLL_MS,
          userAgent: `Arbiter-Webhooks/${kit.version}`,
        },
        logger.child({ component: 'dispatcher' }),
        kit.metrics,
      ),
      (d) => d.stop(),
    );
    const manage = new ManageService({ db, events, policy, kick: () => dispatcher.kick() });
    const prune = () => pruneDeliveries(db, new Date(Date.now() - config.WEBHOOKS_LOG_DAYS * DAY_MS));
    const maintenance = setInterval(() => {
      prune().catch((err: unknown) => logger.warn({ err }, 'pruning webhook deliveries failed; retrying later'));
    }, config.WEBHOOKS_MAINTENANCE_INTERVAL_MS);
    maintenance.unref();
    s.add('delivery pruning', maintenance, clearInterval);
    await s.serve(bus, webhooksService(manage, kit.version));
    const consumer = s.add(
      'events consumer',
      new EventsConsumer(
        bus.nc,
        {
          prefix: config.NATS_SUBJECT_PREFIX,
          durable: config.WEBHOOKS_CONSUMER_NAME,
          ackWaitMs: config.WEBHOOKS_ACK_WAIT_MS,
          timeoutMs: config.WEBHOOKS_NATS_TIMEOUT_MS,
          streamReplicas: config.EVENTS_STREAM_REPLICAS,
          maxDeliveries: config.WEBHOOKS_MAX_DELIVERIES,
        },
        async (event) => {
          if ((await fanOut(db, event)) > 0) dispatcher.kick();
        },
        logger.child({ component: 'consumer' }),
        kit.metrics,
      ),
      (c) => c.stop(),
    );
    consumer.start();
    dispatcher.start();
    relay.kick();
    return { bus, db, relay, consumer, dispatcher, prune, ready: () => bus.connected() && consumer.isConnected() };
  });
}
