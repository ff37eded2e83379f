import type { EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AddressPolicy } from './address.js';
import { webhookEvent } from './manage-service.js';
import {
  claimDeliveries,
  dueDeliveries,
  firstAttemptAt,
  recordAttempt,
  releaseDelivery,
  type DeliveryRow,
} from './repositories/deliveries.js';
import { disableEndpoint, endpointsByIds, markFailing, markHealthy, type EndpointRow } from './repositories/endpoints.js';
import { sendDelivery, type SendResult } from './sender.js';
import { signBody } from './signing.js';

/** Settings of {@link Dispatcher}. */
export interface DispatcherOptions extends AddressPolicy {
  /** Deliveries in flight at most per endpoint. */
  concurrency: number;
  timeoutMs: number;
  /** How long a delivery is retried, and how long an endpoint may fail before it is disabled. */
  retryWindowMs: number;
  retryBaseMs: number;
  retryMaxDelayMs: number;
  /** Sweep for due deliveries this often when nothing wakes the dispatcher. */
  pollMs: number;
  userAgent: string;
}

/** Deliveries taken in one sweep at most. */
const SWEEP_LIMIT = 500;
/** A lease outlives the attempt's deadline by this much (the attempt's bookkeeping). */
const LEASE_MARGIN_MS = 30_000;

/** The wait before attempt `n + 1` after `n` failed ones: doubling from `base`, capped, with jitter (half to all of it). */
export function backoffMs(failedAttempts: number, baseMs: number, maxMs: number, random = Math.random): number {
  const full = Math.min(maxMs, baseMs * 2 ** Math.min(failedAttempts - 1, 40));
  return Math.round(full * (0.5 + random() / 2));
}

/** What an answer means for a delivery. */
export function outcomeOf(r: SendResult): 'delivered' | 'gone' | 'retry' {
  if (r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300) return 'delivered';
  if (r.statusCode === 410) return 'gone';
  return 'retry';
}

/**
 * Sends due deliveries (docs/design/webhooks.md). A sweep leases the due deliveries of each enabled
 * endpoint, at most `concurrency` in flight per endpoint, so a slow receiver only ever holds its own
 * slots and every other endpoint's deliveries go on. Each attempt is signed at send time (both
 * secrets during a rotation's overlap), recorded with its answer, and decides the delivery: a 2xx
 * delivers it; 410 fails it and disables the endpoint at once; anything else (a timeout, no
 * connection, a refused address, another status) retries it with exponential backoff and jitter
 * until the retry window is over, then fails it; an endpoint failing for the whole window is
 * disabled. A crashed dispatcher's leases lapse and its deliveries are sent again: at least once.
 */
export class Dispatcher {
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private stopping = false;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private kicked = false;
  private readonly attemptsTotal: Counter;
  private readonly disabled: Counter;
  private readonly latency: Histogram;

  constructor(
    private readonly db: Knex,
    private readonly events: EventOutbox<Knex.Transaction>,
    private readonly opts: DispatcherOptions,
    private readonly logger: Logger,
    metrics: Registry,
  ) {
    const registers = [metrics];
    this.attemptsTotal = new Counter({
      name: 'arbiter_webhooks_attempts_total',
      help: 'Delivery attempts by outcome (delivered, gone, retry, failed, refused)',
      labelNames: ['outcome'],
      registers,
    });
    this.disabled = new Counter({
      name: 'arbiter_webhooks_endpoints_disabled_total',
      help: 'Endpoints disabled by the dispatcher (410 Gone, or failing for the whole retry window)',
      labelNames: ['reason'],
      registers,
    });
    this.latency = new Histogram({
      name: 'arbiter_webhooks_delivery_seconds',
      help: 'From a delivery being created to its 2xx answer',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60, 600, 3600],
      registers,
    });
    const inFlight = this.inFlight;
    new Gauge({
      name: 'arbiter_webhooks_in_flight',
      help: 'Attempts under way in this replica',
      registers,
      collect() {
        let n = 0;
        for (const v of inFlight.values()) n += v;
        this.set(n);
      },
    });
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Sweeps again soon (a delivery became due, an attempt ended). */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  /** Stops taking deliveries and waits for the attempts under way (their deadline bounds the wait). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    await Promise.allSettled([...this.attempts]);
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.kicked = false;
      try {
        await this.sweep();
      } catch (err) {
        this.logger.warn({ err }, 'webhooks dispatcher sweep failed; retrying');
      }
      if (this.kicked || this.stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.opts.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async sweep(): Promise<void> {
    const { concurrency } = this.opts;
    const now = new Date();
    const full = [...this.inFlight].filter(([, n]) => n >= concurrency).map(([id]) => id);
    const due = await dueDeliveries(this.db, { now, perEndpoint: concurrency, limit: SWEEP_LIMIT, skip: full });
    const room = new Map<string, number>();
    const take: string[] = [];
    for (const d of due) {
      const left = room.get(d.endpoint_id) ?? concurrency - (this.inFlight.get(d.endpoint_id) ?? 0);
      if (left <= 0) continue;
      room.set(d.endpoint_id, left - 1);
      take.push(d.id);
    }
    const claimed = await claimDeliveries(this.db, take, now, new Date(now.getTime() + this.opts.timeoutMs + LEASE_MARGIN_MS));
    if (claimed.length === 0) return;
    const endpoints = new Map((await endpointsByIds(this.db, [...new Set(claimed.map((d) => d.endpoint_id))])).map((e) => [e.id, e]));
    for (const d of claimed) {
      this.inFlight.set(d.endpoint_id, (this.inFlight.get(d.endpoint_id) ?? 0) + 1);
      const attempt = this.attempt(d, endpoints.get(d.endpoint_id))
        .catch((err: unknown) =>
          this.logger.warn({ err, delivery: d.id }, 'recording a webhook attempt failed; its lease will lapse and it is sent again'),
        )
        .finally(() => {
          const n = (this.inFlight.get(d.endpoint_id) ?? 1) - 1;
          if (n <= 0) this.inFlight.delete(d.endpoint_id);
          else this.inFlight.set(d.endpoint_id, n);
          this.attempts.delete(attempt);
          this.kick();
        });
      this.attempts.add(attempt);
    }
  }

  private async attempt(d: DeliveryRow, endpoint: EndpointRow | undefined): Promise<void> {
    if (!endpoint?.enabled) {
      await releaseDelivery(this.db, d.id);
      return;
    }
    const at = new Date();
    const secrets = [endpoint.secret];
    if (endpoint.previous_secret !== null && endpoint.previous_secret_until !== null && endpoint.previous_secret_until > at) {
      secrets.push(endpoint.previous_secret);
    }
    const signed = signBody(d.event_id, at, d.body, secrets);
    const result = await sendDelivery(endpoint.url, d.body, signed, { ...this.opts, userAgent: this.opts.userAgent });
    const done = new Date();
    const attempt = {
      delivery_id: d.id,
      at,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
      error: result.error,
      response: result.response,
    };
    const outcome = outcomeOf(result);
    if (outcome === 'delivered') {
      await recordAttempt(this.db, attempt, { status: 'delivered', next_attempt_at: null, delivered_at: done, finished_at: done });
      await markHealthy(this.db, endpoint.id);
      this.attemptsTotal.inc({ outcome });
      this.latency.observe((done.getTime() - d.retry_from.getTime()) / 1000);
      return;
    }
    if (outcome === 'gone') {
      await recordAttempt(this.db, attempt, { status: 'failed', next_attempt_at: null, delivered_at: null, finished_at: done });
      this.attemptsTotal.inc({ outcome });
      await this.disable(endpoint, 'gone', done);
      return;
    }
    const next = new Date(done.getTime() + backoffMs(d.attempts + 1, this.opts.retryBaseMs, this.opts.retryMaxDelayMs));
    const windowEnd = d.retry_from.getTime() + this.opts.retryWindowMs;
    const giveUp = next.getTime() > windowEnd;
    await recordAttempt(
      this.db,
      attempt,
      giveUp
        ? { status: 'failed', next_attempt_at: null, delivered_at: null, finished_at: done }
        : { status: 'pending', next_attempt_at: next, delivered_at: null, finished_at: null },
    );
    this.attemptsTotal.inc({ outcome: result.refused ? 'refused' : giveUp ? 'failed' : 'retry' });
    const failingSince = await markFailing(this.db, endpoint.id, at);
    if (failingSince === undefined) return;
    // Failing for the whole window: for that long, or since before this delivery that has now run out its window.
    const failedThroughout =
      done.getTime() - failingSince.getTime() >= this.opts.retryWindowMs ||
      (giveUp && failingSince.getTime() <= ((await firstAttemptAt(this.db, d.id)) ?? at).getTime());
    if (failedThroughout) await this.disable(endpoint, 'failing', done);
  }

  /** Disables an endpoint and records `webhook disabled` (once: only the call that turned it off). */
  private async disable(endpoint: EndpointRow, reason: 'gone' | 'failing', at: Date): Promise<void> {
    const changed = await this.db.transaction(async (trx) => {
      const row = await disableEndpoint(trx, endpoint.id, reason, at);
      if (!row) return false;
      const event = webhookEvent('webhook disabled', { orgId: row.org_id, userId: 'webhooks' }, row.id, { reason, url: row.url }, at);
      await this.events.enqueue(trx, [event]);
      return true;
    });
    if (!changed) return;
    this.events.committed();
    this.disabled.inc({ reason });
    this.logger.warn({ webhook: endpoint.id, org: endpoint.org_id, reason }, 'disabled a webhook endpoint');
  }
}
