import { eventSubject, type ArbiterEvent } from '@arbiter/contracts';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { Bus } from '@arbiter/service-kit';
import type { FastifyBaseLogger } from 'fastify';
import type { EventSink } from './event-sink.js';

/** Tuning of {@link JetStreamEventPublisher}. */
export interface EventPublisherOptions {
  /** Events kept while JetStream is unavailable; beyond it the oldest are dropped (logged). */
  maxQueue?: number;
  /** First retry delay after a failed publish; doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Deadline of one publish acknowledgement. */
  publishTimeoutMs?: number;
}

type Log = Pick<FastifyBaseLogger, 'warn' | 'error'>;

/**
 * Publishes the gateway's events to the stack's JetStream stream (created by the registry), each
 * under `eventSubject(...)` with its `eventId` as the message id, so a re-send is dropped by the
 * stream's duplicate window. The gateway has no outbox: events wait in a bounded in-memory queue,
 * in order, and are retried with backoff while JetStream is unavailable. A request never fails or
 * waits because of an event; failures and drops are logged. Events still queued when the process
 * ends are lost (logged by {@link close}).
 */
export class JetStreamEventPublisher implements EventSink {
  private readonly js: JetStreamClient;
  private readonly queue: ArbiterEvent[] = [];
  private readonly maxQueue: number;
  private readonly retryMs: number;
  private readonly maxRetryMs: number;
  private readonly publishTimeoutMs: number;
  private draining: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private dropped = 0;
  private closed = false;

  constructor(
    nc: Bus['nc'],
    private readonly prefix: string,
    private readonly logger: Log,
    options: EventPublisherOptions = {},
  ) {
    this.js = jetstream(nc);
    this.maxQueue = options.maxQueue ?? 10_000;
    this.retryMs = options.retryMs ?? 500;
    this.maxRetryMs = options.maxRetryMs ?? 30_000;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 2000;
  }

  /** Queues the event and starts publishing unless a retry is already scheduled. */
  emit(event: ArbiterEvent): void {
    if (this.closed) {
      this.logger.error({ eventId: event.eventId, kind: event.kind }, 'event emitted after the publisher was closed: dropped');
      return;
    }
    if (this.queue.length >= this.maxQueue) {
      const lost = this.queue.shift()!;
      this.dropped++;
      this.logger.error({ eventId: lost.eventId, kind: lost.kind, orgId: lost.orgId, dropped: this.dropped }, 'event queue full: oldest event dropped');
    }
    this.queue.push(event);
    if (this.retryTimer === null) this.drain();
  }

  /** Events waiting to be published. */
  pending(): number {
    return this.queue.length;
  }

  /** Events dropped because the queue was full. */
  droppedCount(): number {
    return this.dropped;
  }

  /** Resolves once the queue is empty or a publish failed (a retry is then scheduled). */
  async settled(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Stops retrying, tries the queue once more within `timeoutMs`, and logs what is left unsent. */
  async close(timeoutMs = 2000): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.settled();
    if (this.queue.length > 0 && timeoutMs > 0) {
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
      this.drain();
      await Promise.race([this.settled(), deadline]);
    }
    if (this.queue.length > 0) {
      this.logger.error({ lost: this.queue.length, eventIds: this.queue.slice(0, 20).map((e) => e.eventId) }, 'publisher closed with unsent events: they are lost');
    }
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = this.publishQueued().finally(() => {
      this.draining = null;
    });
  }

  /** Publishes the queue head first; on a failure keeps the event and schedules a retry. */
  private async publishQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const event = this.queue[0]!;
      try {
        await this.js.publish(eventSubject(this.prefix, event.orgId, event.kind), JSON.stringify(event), {
          msgID: event.eventId,
          timeout: this.publishTimeoutMs,
        });
      } catch (err) {
        this.failures++;
        if (this.failures === 1 || this.failures % 30 === 0) {
          this.logger.warn({ err, eventId: event.eventId, pending: this.queue.length, failures: this.failures }, 'event publish failed: will retry');
        }
        this.scheduleRetry();
        return;
      }
      // A full queue may have dropped this very event meanwhile: remove it only if still first.
      if (this.queue[0]?.eventId === event.eventId) this.queue.shift();
      this.failures = 0;
    }
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer !== null) return;
    const delay = Math.min(this.maxRetryMs, this.retryMs * 2 ** Math.min(this.failures - 1, 16));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.drain();
    }, delay);
    this.retryTimer.unref();
  }
}
