import { ArbiterEvent, eventStreamName } from '@arbiter/contracts';
import { DeadLetters, ensureEventStream } from '@arbiter/service-kit';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type Consumer,
  type JetStreamClient,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';

const CONSUMER_NOT_FOUND = 10014;
const NS_PER_MS = 1_000_000;
/** Wait before retrying after a failure (NATS away, database away), and before a handed-back event comes again. */
const RETRY_MS = 500;
/** Messages fetched at once. */
const BATCH = 200;

/** Settings of {@link EventsConsumer}. */
export interface EventsConsumerOptions {
  /** The bus prefix: the stream is `<PREFIX>_EVENTS`. */
  prefix: string;
  durable: string;
  ackWaitMs: number;
  /** Deadline of each JetStream API call. */
  timeoutMs: number;
  streamReplicas: number;
  /** Deliveries of an event the fan-out refuses before it is parked on the dead-letter stream. */
  maxDeliveries: number;
  /** A fetch ends after this long even when the batch is not full. */
  expiresMs?: number;
}

/** Turns one event into its deliveries (rejects when it should be tried again). */
export type FanOut = (event: ArbiterEvent) => Promise<void>;

/**
 * The webhooks service's durable pull consumer of the events stream (docs/design/webhooks.md):
 * each event of the trail is handed to the fan-out and acked once its deliveries are stored, so a
 * crash leaves it to be redelivered (and the deliveries' unique key makes the second fan-out a
 * no-op). `decided` records are acked unread: they are never sent. A message that is not an event
 * is acked and counted; one the fan-out refuses `maxDeliveries` times is parked on the dead-letter
 * stream (`<events stream>_DEAD`, as the audit service does) and counted, so it never holds the
 * events after it. Any failure of NATS ends the inner loop; the outer one attaches again.
 */
export class EventsConsumer {
  private stopping = false;
  private running: Promise<void> | undefined;
  private connected = false;
  private readonly streamName: string;
  private readonly deadLetters: DeadLetters;
  private js: JetStreamClient | undefined;
  private readonly fannedOut: Counter;
  private readonly rejected: Counter;
  private readonly deadLettered: Counter;
  private readonly failures: Counter;

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: EventsConsumerOptions,
    private readonly fanOut: FanOut,
    private readonly logger: Logger,
    metrics: Registry,
  ) {
    this.streamName = eventStreamName(opts.prefix);
    this.deadLetters = new DeadLetters(nc, {
      prefix: opts.prefix,
      streamReplicas: opts.streamReplicas,
      timeoutMs: opts.timeoutMs,
      consumer: opts.durable,
    });
    const registers = [metrics];
    this.fannedOut = new Counter({
      name: 'arbiter_webhooks_events_consumed_total',
      help: 'Events of the trail turned into deliveries and acked',
      registers,
    });
    this.rejected = new Counter({
      name: 'arbiter_webhooks_events_rejected_total',
      help: 'Messages on the events stream that are not valid events (acked and skipped, logged)',
      registers,
    });
    this.deadLettered = new Counter({
      name: 'arbiter_webhooks_events_dead_lettered_total',
      help: 'Events the fan-out refused at each of WEBHOOKS_MAX_DELIVERIES deliveries, parked on the dead-letter stream (<events stream>_DEAD)',
      registers,
    });
    this.failures = new Counter({
      name: 'arbiter_webhooks_consumer_failures_total',
      help: 'Times the consumer loop failed (NATS unavailable) and started again',
      registers,
    });
  }

  start(): void {
    this.running ??= this.loop();
  }

  isConnected(): boolean {
    return this.connected;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      try {
        const consumer = await this.attach();
        this.connected = true;
        while (!this.stopping) {
          const iter = await consumer.fetch({ max_messages: BATCH, expires: this.opts.expiresMs ?? 1000 });
          for await (const m of iter) await this.handle(m);
        }
      } catch (err) {
        this.connected = false;
        if (this.stopping) break;
        this.failures.inc();
        this.logger.warn({ err }, 'webhooks consumer failed; retrying');
        await sleep(RETRY_MS);
      }
    }
    this.connected = false;
  }

  /** Ensures the stream and the durable consumer and returns it. */
  private async attach(): Promise<Consumer> {
    await ensureEventStream(this.nc, this.opts.prefix, { timeoutMs: this.opts.timeoutMs, replicas: this.opts.streamReplicas });
    const jsm = await jetstreamManager(this.nc, { timeout: this.opts.timeoutMs });
    const config = {
      durable_name: this.opts.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      ack_wait: this.opts.ackWaitMs * NS_PER_MS,
      max_ack_pending: BATCH * 4,
    };
    try {
      const info = await jsm.consumers.info(this.streamName, this.opts.durable);
      if (info.config.ack_wait !== config.ack_wait)
        await jsm.consumers.update(this.streamName, this.opts.durable, { ack_wait: config.ack_wait });
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== CONSUMER_NOT_FOUND) throw err;
      await jsm.consumers.add(this.streamName, config);
      this.logger.info({ stream: this.streamName, consumer: this.opts.durable }, 'created the durable webhooks consumer');
    }
    this.js = jetstream(this.nc, { timeout: this.opts.timeoutMs });
    return this.js.consumers.get(this.streamName, this.opts.durable);
  }

  private async handle(m: JsMsg): Promise<void> {
    // Decision records are never sent: acked without reading them (they are most of the stream).
    if (m.subject.endsWith('.decided')) {
      m.ack();
      return;
    }
    let event: ArbiterEvent;
    try {
      const parsed = ArbiterEvent.safeParse(JSON.parse(m.string()));
      if (!parsed.success) throw new Error(parsed.error.message);
      event = parsed.data;
    } catch (err) {
      this.rejected.inc();
      this.logger.error({ subject: m.subject, seq: m.seq, err }, 'skipped a message that is not a valid event');
      m.ack();
      return;
    }
    if (event.kind === 'decided') {
      m.ack();
      return;
    }
    try {
      await this.fanOut(event);
    } catch (err) {
      await this.refuse(m, err);
      return;
    }
    m.ack();
    this.fannedOut.inc();
  }

  /** An event the fan-out refused: handed back for a later try, or parked after its last delivery. */
  private async refuse(m: JsMsg, err: unknown): Promise<void> {
    const deliveries = m.info.deliveryCount;
    const reason = err instanceof Error ? err.message : String(err);
    const where = { subject: m.subject, seq: m.seq, deliveries, reason };
    if (deliveries < this.opts.maxDeliveries) {
      this.logger.warn(where, 'could not fan out an event; it will be tried again');
      m.nak(RETRY_MS);
      return;
    }
    try {
      await this.deadLetters.park(this.js!, m, { streamName: this.streamName, deliveries, reason });
      m.ack();
      this.deadLettered.inc();
      this.logger.error(where, 'parked an event that could not be fanned out on the dead-letter stream');
    } catch (parkErr) {
      this.logger.warn({ ...where, err: parkErr }, 'could not park an event on the dead-letter stream; it will be tried again');
      m.nak(RETRY_MS);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
