import { eventSubject, type ArbiterEvent } from '@arbiter/contracts';
import { JetStreamApiError, jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { InvalidArgumentError, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ClaimedEvent, OutboxDropReason, OutboxStore } from './outbox.js';

/** Tuning of an {@link EventRelay}. */
export interface EventRelayOptions {
  /**
   * How often the relay sweeps for events nobody kicked it for (left by a replica that died between
   * its commit and its publish); it is kicked after every commit of its own process. 30 s by default.
   */
  intervalMs?: number;
  /** Delay of the next attempt while events wait because a publish failed or NATS is down. */
  retryMs?: number;
  /** Events claimed per pass. */
  batchSize?: number;
  /** Deadline of one JetStream publish acknowledgement. */
  publishTimeoutMs?: number;
  /** Whether publishing can work now (the bus is connected); a pass is skipped while it cannot. */
  canPublish?: () => boolean;
  /** Where the outbox metrics go. */
  metrics?: Registry;
  /**
   * Told of events removed from the outbox unpublished because the bus refuses them for good
   * (`too_large`: bigger than the server's `max_payload`), after they were removed and counted.
   */
  onDropped?: (events: readonly ArbiterEvent[], reason: OutboxDropReason) => void;
}

/** JetStream's answer to a message larger than the stream's `max_msg_size`. */
const JS_MESSAGE_TOO_LARGE = 10054;

const encoder = new TextEncoder();

/** Bytes of the headers a publish adds on the wire: only the message id (`NATS/1.0` block, as nats.js encodes it). */
function msgIdHeaderBytes(eventId: string): number {
  return encoder.encode(`NATS/1.0\r\nNats-Msg-Id: ${eventId}\r\n\r\n`).length;
}

/**
 * The largest serialised event (`JSON.stringify(event)`, UTF-8 bytes) the relay can publish on
 * `nc`: the server's `max_payload` less the message-id header; undefined before the connection
 * has the server's info.
 */
export function maxEventBytes(nc: NatsConnection): number | undefined {
  const max = nc.info?.max_payload;
  return max === undefined ? undefined : max - msgIdHeaderBytes('00000000-0000-0000-0000-000000000000');
}

/** An event the bus will never take: its message is larger than the server's (or the stream's) limit. */
class TooLargeForBus extends Error {
  constructor(
    readonly bytes: number | undefined,
    readonly maxBytes: number | undefined,
    cause?: unknown,
  ) {
    super(`event of ${bytes ?? '?'} bytes is larger than the bus takes (${maxBytes ?? '?'} bytes)`, { cause });
    this.name = 'TooLargeForBus';
  }
}

/** Whether `err` is NATS refusing a message for its size (client-side `max_payload` check, or the stream's limit). */
function refusedForSize(err: unknown): boolean {
  if (err instanceof InvalidArgumentError) return err.message.includes('max_payload');
  return err instanceof JetStreamApiError && err.code === JS_MESSAGE_TOO_LARGE;
}

/** How often sent events are pruned from the store (when it keeps them). */
const PRUNE_EVERY_MS = 10 * 60_000;

interface OutboxMetrics {
  published: Counter<'outbox'>;
  failed: Counter<'outbox'>;
  dropped: Counter<'outbox' | 'reason'>;
  /** The stores whose backlog the lag gauges read at each scrape. */
  stores: Set<OutboxStore>;
}

/** The outbox metrics of a registry, made once (several relays of one process share them by label). */
const metricsOf = new WeakMap<Registry, OutboxMetrics>();

function outboxMetrics(registry: Registry): OutboxMetrics {
  const known = metricsOf.get(registry);
  if (known) return known;
  const stores = new Set<OutboxStore>();
  const lagGauge = (name: string, help: string, pick: (b: { pending: number; oldestSeconds: number }) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['outbox'],
      registers: [registry],
      async collect() {
        for (const store of stores) {
          const backlog = await store.backlog().catch(() => undefined);
          if (backlog) this.set({ outbox: store.name }, pick(backlog));
        }
      },
    });
  lagGauge('arbiter_outbox_pending', 'Events in the outbox not yet published (outbox lag, in events)', (b) => b.pending);
  lagGauge('arbiter_outbox_oldest_seconds', 'Age of the oldest unpublished outbox event (outbox lag, in seconds)', (b) => b.oldestSeconds);
  const m: OutboxMetrics = {
    published: new Counter({
      name: 'arbiter_outbox_published_total',
      help: 'Events published from the outbox to JetStream',
      labelNames: ['outbox'],
      registers: [registry],
    }),
    failed: new Counter({
      name: 'arbiter_outbox_publish_failures_total',
      help: 'Failed publish attempts of outbox events',
      labelNames: ['outbox'],
      registers: [registry],
    }),
    dropped: new Counter({
      name: 'arbiter_outbox_dropped_total',
      help: 'Outbox events removed unpublished because the bus refuses them for good (reason too_large: over max_payload)',
      labelNames: ['outbox', 'reason'],
      registers: [registry],
    }),
    stores,
  };
  metricsOf.set(registry, m);
  return m;
}

/**
 * The one event publisher of every service (docs/design/events-and-audit.md): moves events from an {@link OutboxStore}
 * to the stack's JetStream stream, each under its subject with its `eventId` as the message id (the
 * stream drops a re-send within its duplicate window, and the audit store is idempotent on the id).
 * It runs when kicked after a commit; while events wait because a publish failed (NATS down, stream
 * missing) it retries every `retryMs` until they are out, so nothing is lost; and it sweeps every
 * `intervalMs` for events another process left behind. An idle relay touches its store only at that
 * sweep, and a pass never holds a database transaction. An event larger than the server's
 * `max_payload` (read from the connection's server info) can never be published: it is removed from
 * the store at its first attempt, counted in `arbiter_outbox_dropped_total{reason="too_large"}` and
 * logged, never retried.
 */
export class EventRelay {
  private readonly js: JetStreamClient;
  private readonly timer: NodeJS.Timeout;
  private readonly batchSize: number;
  private readonly publishTimeoutMs: number;
  private readonly metrics: OutboxMetrics | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private lastPrune = Date.now();
  private failuresInARow = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Events are known to wait after a failed publish: keep retrying until the store has none left. */
  private owed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly store: OutboxStore,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly opts: EventRelayOptions = {},
  ) {
    this.js = jetstream(nc);
    this.batchSize = opts.batchSize ?? 200;
    this.publishTimeoutMs = opts.publishTimeoutMs ?? 2000;
    this.metrics = opts.metrics ? outboxMetrics(opts.metrics) : undefined;
    this.metrics?.stores.add(store);
    this.timer = setInterval(() => this.kick(), opts.intervalMs ?? 30_000).unref();
  }

  /** Asks for a pass soon; passes never overlap, and a kick during one causes another. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  /** Resolves when the pass in progress (and any it asked for) is over. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops the timer and waits for the pass in progress; unsent events stay in the outbox. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.metrics?.stores.delete(this.store);
    await this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      if (this.opts.canPublish && !this.opts.canPublish()) {
        this.retrySoon();
        return;
      }
      try {
        while (!this.stopped && (await this.pass()) === this.batchSize);
        // Failed events come back after their backoff, so an empty claim does not prove them gone.
        if (this.owed && (await this.store.backlog()).pending === 0) this.owed = false;
        if (this.owed) this.retrySoon();
        if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
          this.lastPrune = Date.now();
          await this.store.prune?.();
        }
      } catch (err) {
        this.logger.warn({ err, outbox: this.store.name }, 'outbox relay pass failed: will retry');
        this.retrySoon();
      }
    } while (this.again && !this.stopped);
  }

  /** Another pass after `retryMs` (one timer at most). */
  private retrySoon(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.kick();
    }, this.opts.retryMs ?? 1000);
    this.retryTimer.unref();
  }

  /** Publishes one claimed batch; returns how many events were claimed. */
  private async pass(): Promise<number> {
    const claimed = await this.store.claim(this.batchSize);
    if (claimed.length === 0) return 0;
    // Published together: nats.js writes them to the socket in order, so the stream keeps their order.
    const results = await Promise.allSettled(claimed.map((c) => this.publish(c)));
    const sent: string[] = [];
    const tooLarge: Array<{ claimed: ClaimedEvent; reason: TooLargeForBus }> = [];
    const failed: ClaimedEvent[] = [];
    let failure: unknown;
    claimed.forEach((c, i) => {
      const r = results[i];
      if (r.status === 'fulfilled') sent.push(c.ref);
      else if (r.reason instanceof TooLargeForBus) tooLarge.push({ claimed: c, reason: r.reason });
      else {
        failed.push(c);
        failure ??= r.reason;
      }
    });
    await this.store.markSent(sent);
    this.metrics?.published.inc({ outbox: this.store.name }, sent.length);
    if (tooLarge.length > 0) await this.dropTooLarge(tooLarge);
    if (failed.length > 0) {
      await this.store.markFailed(
        failed.map((c) => c.ref),
        failure instanceof Error ? failure.message : String(failure),
      );
      this.metrics?.failed.inc({ outbox: this.store.name }, failed.length);
      this.owed = true;
      if (this.failuresInARow++ % 30 === 0) {
        this.logger.warn({ err: failure, outbox: this.store.name, failed: failed.length }, 'event publish failed: will retry');
      }
      return 0;
    }
    this.failuresInARow = 0;
    return claimed.length;
  }

  /** Removes events the bus refused for their size (retrying could never succeed), counts and logs them. */
  private async dropTooLarge(dropped: ReadonlyArray<{ claimed: ClaimedEvent; reason: TooLargeForBus }>): Promise<void> {
    await this.store.markDropped(
      dropped.map((d) => d.claimed.ref),
      'too_large',
    );
    this.metrics?.dropped.inc({ outbox: this.store.name, reason: 'too_large' }, dropped.length);
    this.logger.error(
      {
        outbox: this.store.name,
        reason: 'too_large',
        events: dropped.slice(0, 20).map(({ claimed: { event }, reason }) => ({
          eventId: event.eventId,
          orgId: event.orgId,
          kind: event.kind,
          bytes: reason.bytes,
          maxBytes: reason.maxBytes,
        })),
        dropped: dropped.length,
      },
      'events larger than the bus takes were removed from the outbox unpublished',
    );
    try {
      this.opts.onDropped?.(
        dropped.map((d) => d.claimed.event),
        'too_large',
      );
    } catch (err) {
      this.logger.warn({ err }, 'onDropped failed');
    }
  }

  private async publish(c: ClaimedEvent): Promise<void> {
    const data = encoder.encode(JSON.stringify(c.event));
    const max = this.nc.info?.max_payload;
    if (max !== undefined && data.length + msgIdHeaderBytes(c.event.eventId) > max) {
      throw new TooLargeForBus(data.length, max);
    }
    try {
      await this.js.publish(eventSubject(this.prefix, c.event.orgId, c.event.kind), data, {
        msgID: c.event.eventId,
        timeout: this.publishTimeoutMs,
      });
    } catch (err) {
      throw refusedForSize(err) ? new TooLargeForBus(data.length, max, err) : err;
    }
  }
}
