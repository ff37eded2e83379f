import { eventStreamName, type ArbiterEvent, type DecisionRecord } from '@arbiter/contracts';
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
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { decodeEvent } from './decode.js';

const CONSUMER_NOT_FOUND = 10014;
/** `AUDIT_MAX_DELIVERIES` when not given. */
export const DEFAULT_MAX_DELIVERIES = 5;
const NS_PER_MS = 1_000_000;
/** Wait before retrying after a failure (NATS away, database away). */
const RETRY_MS = 500;
/**
 * Batches being stored at once, each in its own transaction and connection, in line (see
 * {@link Turn}): while one batch commits and is acked, the next has begun and writes. With one, the
 * database would wait for every commit's answer, the acks and the next BEGIN.
 */
const STORES_IN_FLIGHT = 2;
/**
 * Batches one replica holds unacked at most: two being stored, one waiting for a store, one being
 * fetched. `max_ack_pending` leaves room for two replicas sharing the durable consumer.
 */
const BATCHES_UNACKED = STORES_IN_FLIGHT + 2;

/** Settings of {@link AuditConsumer}. */
export interface AuditConsumerOptions {
  /** The bus prefix: the stream is `<PREFIX>_EVENTS`. */
  prefix: string;
  /** Durable consumer name. */
  durable: string;
  batchSize: number;
  /** A fetch ends after this long even when the batch is not full. */
  expiresMs: number;
  /** JetStream redelivers an event not acked by then. */
  ackWaitMs: number;
  /** Deadline of each JetStream API call. */
  timeoutMs: number;
  /** Replicas of the events stream when this consumer creates it (`EVENTS_STREAM_REPLICAS`); 1 when absent. */
  streamReplicas?: number;
  /**
   * Deliveries of a message the store refuses before it is parked on the dead-letter stream
   * (`AUDIT_MAX_DELIVERIES`); {@link DEFAULT_MAX_DELIVERIES} when absent.
   */
  maxDeliveries?: number;
}

/** An event or decision record of a batch the store could not write, and why. */
export interface Unstorable {
  item: ArbiterEvent | DecisionRecord;
  reason: string;
}

/** What a store did with a batch: everything written and committed but the `unstorable` items. */
export interface StoreOutcome {
  unstorable: Unstorable[];
}

/** The valid content of a fetched batch: events of the trail and the records of `decided` events. */
export interface EventBatch {
  trail: ArbiterEvent[];
  decisions: DecisionRecord[];
}

/**
 * A batch's place in line behind the batch fetched before it, while both are being stored: the
 * store starts its writes once `previousWritten` resolves, calls `written()` after them, and
 * commits once `previousSettled` resolves (the batch before committed, or failed). So two stores
 * overlap, and yet no event becomes visible before one ahead of it on the stream.
 */
export interface Turn {
  previousWritten: Promise<void>;
  previousSettled: Promise<void>;
  written(): void;
}

/**
 * Stores a batch in its {@link Turn}; resolves once it is committed, naming the items it could not
 * write (nothing named, or no outcome: every item was written). Rejects when the batch should be
 * tried again whole (the database away).
 */
export type StoreBatch = (batch: EventBatch, turn: Turn) => Promise<StoreOutcome | void>;

/**
 * Result of one fetch: the messages and their valid content, or why the fetch failed (never
 * rejects, so a prefetch cannot go unhandled).
 */
type Fetched = { msgs: JsMsg[]; batch: EventBatch; owners: Map<object, JsMsg>; err?: Error };

/** Result of storing a batch and acking it: the error when it failed (never rejects, like {@link Fetched}). */
type Stored = Error | undefined;

/**
 * The durable pull consumer of the events stream, as a pipeline: a batch is fetched (each message
 * decoded as it arrives) while up to two earlier batches are stored, each in one transaction, and
 * acked — a batch's messages only after its own commit — so a crash at any point leaves the unacked
 * events to be redelivered (and the INSERTs skip those already stored). The stores keep the
 * stream's order: a batch writes once the batch before has written and commits once it has
 * committed, so no event becomes visible before one ahead of it. Any failure — NATS restarting,
 * the consumer or stream missing, PostgreSQL away — ends the inner loop once the stores under way
 * have settled, and the batches fetched but not stored are handed back for redelivery; the outer
 * loop waits a moment, re-creates what is missing and goes on by itself.
 */
export class AuditConsumer {
  private stopping = false;
  private running: Promise<void> | undefined;
  private lastLag = 0;
  private readonly streamName: string;
  private readonly ingested: Counter;
  private readonly rejected: Counter;
  private readonly failures: Counter;
  private readonly batchSeconds: Histogram;
  private readonly deadLettered: Counter;
  private readonly refusedByStore: Counter;
  private readonly deadLetters: DeadLetters;
  private readonly maxDeliveries: number;
  private js: JetStreamClient | undefined;
  private connected = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: AuditConsumerOptions,
    private readonly store: StoreBatch,
    private readonly logger: Logger,
    metrics: Registry,
  ) {
    this.streamName = eventStreamName(opts.prefix);
    this.deadLetters = new DeadLetters(nc, { prefix: opts.prefix, streamReplicas: opts.streamReplicas ?? 1, timeoutMs: opts.timeoutMs });
    this.maxDeliveries = opts.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
    const registers = [metrics];
    this.ingested = new Counter({ name: 'arbiter_audit_events_ingested_total', help: 'Events stored and acked', registers });
    this.rejected = new Counter({
      name: 'arbiter_audit_events_rejected_total',
      help: 'Messages on the events stream that are not valid events (acked and skipped, logged)',
      registers,
    });
    this.failures = new Counter({
      name: 'arbiter_audit_consumer_failures_total',
      help: 'Times the consumer loop failed (NATS or PostgreSQL unavailable) and started again',
      registers,
    });
    this.deadLettered = new Counter({
      name: 'arbiter_audit_events_dead_lettered_total',
      help: 'Messages the store refused at each of AUDIT_MAX_DELIVERIES deliveries, parked on the dead-letter stream (<events stream>_DEAD) so the rest flows',
      registers,
    });
    this.refusedByStore = new Counter({
      name: 'arbiter_audit_events_unstorable_total',
      help: 'Deliveries of a message the store could not write (handed back for a later try, or parked at the last)',
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'arbiter_audit_batch_seconds',
      help: 'Time to store one batch: its wait behind the batch before, INSERT, commit and acks',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    const lag = (): Promise<number> => this.lag();
    new Gauge({
      name: 'arbiter_audit_consumer_lag',
      help: 'Events on the stream not yet stored and acked by the audit consumer (pending + unacked)',
      registers,
      async collect() {
        this.set(await lag());
      },
    });
  }

  /** Starts consuming in the background. */
  start(): void {
    this.running ??= this.loop();
  }

  /** Whether the consumer is attached to its stream right now. */
  isConnected(): boolean {
    return this.connected;
  }

  /** Stops fetching, stores what was already fetched, and resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  /** Events not yet stored: pending on the stream plus delivered and unacked (the last known value if NATS does not answer in time). */
  async lag(): Promise<number> {
    try {
      const jsm = await jetstreamManager(this.nc, { timeout: Math.min(this.opts.timeoutMs, 1000) });
      const info = await jsm.consumers.info(this.streamName, this.opts.durable);
      this.lastLag = info.num_pending + info.num_ack_pending;
    } catch {
      // keep the last known value
    }
    return this.lastLag;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      try {
        const consumer = await this.attach();
        this.connected = true;
        await this.consume(consumer);
      } catch (err) {
        this.connected = false;
        if (this.stopping) break;
        this.failures.inc();
        this.logger.warn({ err }, 'audit consumer failed; retrying');
        await sleep(RETRY_MS);
      }
    }
    this.connected = false;
  }

  /** Ensures the stream and the durable consumer (with this configuration) and returns it. */
  private async attach(): Promise<Consumer> {
    await ensureEventStream(this.nc, this.opts.prefix, { timeoutMs: this.opts.timeoutMs, replicas: this.opts.streamReplicas ?? 1 });
    const jsm = await jetstreamManager(this.nc, { timeout: this.opts.timeoutMs });
    const config = {
      durable_name: this.opts.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: this.opts.ackWaitMs * NS_PER_MS,
      max_ack_pending: this.opts.batchSize * BATCHES_UNACKED * 2,
      max_waiting: 64,
    };
    try {
      const info = await jsm.consumers.info(this.streamName, this.opts.durable);
      if (info.config.ack_wait !== config.ack_wait || info.config.max_ack_pending !== config.max_ack_pending) {
        await jsm.consumers.update(this.streamName, this.opts.durable, {
          ack_wait: config.ack_wait,
          max_ack_pending: config.max_ack_pending,
        });
      }
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== CONSUMER_NOT_FOUND) throw err;
      await jsm.consumers.add(this.streamName, config);
      this.logger.info({ stream: this.streamName, consumer: this.opts.durable }, 'created the durable audit consumer');
    }
    // Not fatal: without it (a NATS user not yet allowed it) events still flow; only parking waits.
    await this.deadLetters
      .ensure()
      .catch((err: unknown) =>
        this.logger.error(
          { err, stream: this.deadLetters.streamName },
          'could not create the dead-letter stream; events that cannot be stored are tried again until it exists',
        ),
      );
    const js = jetstream(this.nc, { timeout: this.opts.timeoutMs });
    this.js = js;
    return js.consumers.get(this.streamName, this.opts.durable);
  }

  private async consume(consumer: Consumer): Promise<void> {
    let next: Promise<Fetched> | undefined = this.fetch(consumer, this.opts.batchSize);
    // Stores (each with its acks) under way while the next batch is fetched and decoded; the first failure.
    const storing = new Set<Promise<void>>();
    const failed: { err?: Error } = {};
    // The turn of the last batch handed to a store: the next one lines up behind it.
    let previous = { written: Promise.resolve(), settled: Promise.resolve() };
    const store = (fetched: Fetched): void => {
      let written!: () => void;
      const writes = new Promise<void>((resolve) => (written = resolve));
      const turn: Turn = { previousWritten: previous.written, previousSettled: previous.settled, written };
      const done: Promise<void> = this.storeAndAck(fetched, turn).then((err) => {
        // A store that failed before its writes never called `written()`: the next one must not wait for it.
        written();
        storing.delete(done);
        failed.err ??= err;
      });
      previous = { written: writes, settled: done };
      storing.add(done);
    };
    while (next !== undefined && failed.err === undefined) {
      const fetched: Fetched = await next;
      // Fetch the next batch while this one waits for a free store (unless stopping or the fetch failed).
      next = this.stopping || fetched.err !== undefined ? undefined : this.fetch(consumer, this.nextBatchSize(fetched.msgs));
      if (fetched.msgs.length > 0) {
        while (storing.size >= STORES_IN_FLIGHT && failed.err === undefined) await Promise.race(storing);
        if (failed.err === undefined) store(fetched);
        else redeliver(fetched.msgs);
      }
      failed.err ??= fetched.err;
    }
    // Every store settles (its acks sent, or its messages handed back) before the loop ends.
    await Promise.all(storing);
    if (failed.err !== undefined) {
      // A fetch still under way: its messages are not stored now.
      void next?.then((f) => redeliver(f.msgs));
      throw failed.err;
    }
  }

  /**
   * How many messages to ask for next: the events left on the stream after the last message (its
   * `pending`), up to a batch. A fetch ends when it has all it asked for or when it expires, so
   * asking a full batch for the last few events of a backlog would hold them back until then.
   */
  private nextBatchSize(msgs: JsMsg[]): number {
    const pending = msgs.at(-1)?.info.pending ?? 0;
    return pending > 0 ? Math.min(pending, this.opts.batchSize) : this.opts.batchSize;
  }

  /**
   * Fetches a batch, decoding each message as it arrives: while the previous batch is stored, its
   * decoding runs in small steps between the store's round trips rather than in one block before them.
   */
  private async fetch(consumer: Consumer, maxMessages: number): Promise<Fetched> {
    const msgs: JsMsg[] = [];
    const batch: EventBatch = { trail: [], decisions: [] };
    const owners = new Map<object, JsMsg>();
    try {
      const iter = await consumer.fetch({ max_messages: maxMessages, expires: this.opts.expiresMs });
      for await (const m of iter) {
        msgs.push(m);
        this.decode(m, batch, owners);
      }
      return { msgs, batch, owners };
    } catch (err) {
      return { msgs, batch, owners, err: asError(err) };
    }
  }

  /** Adds a message's valid content to `batch`; an invalid message is counted and logged (and acked with the batch). */
  private decode(m: JsMsg, batch: EventBatch, owners: Map<object, JsMsg>): void {
    const decoded = decodeEvent(m.string());
    if ('decision' in decoded) {
      batch.decisions.push(decoded.decision);
      owners.set(decoded.decision, m);
    } else if ('event' in decoded) {
      batch.trail.push(decoded.event);
      owners.set(decoded.event, m);
    } else {
      this.rejected.inc();
      this.logger.error({ subject: m.subject, seq: m.seq, reason: decoded.rejected }, 'skipped a message that is not a valid event');
    }
  }

  /**
   * Stores a decoded batch, then acks every message of it; on failure asks for their redelivery.
   * A message whose content the store could not write is handed back alone, for a later try, and
   * once it has been delivered `maxDeliveries` times it is parked on the dead-letter stream and
   * acked: it never holds back the events after it.
   */
  private async storeAndAck({ msgs, batch, owners }: Fetched, turn: Turn): Promise<Stored> {
    const started = process.hrtime.bigint();
    let outcome: StoreOutcome | void;
    try {
      outcome = await this.store(batch, turn);
    } catch (err) {
      redeliver(msgs);
      return asError(err);
    }
    const refused = new Map<JsMsg, string>();
    for (const { item, reason } of outcome?.unstorable ?? []) {
      const m = owners.get(item);
      if (m !== undefined && !refused.has(m)) refused.set(m, reason);
    }
    try {
      for (const m of msgs) if (!refused.has(m)) m.ack();
    } catch (err) {
      // The connection is closed: the messages not acked come back once their ack wait is over.
      return asError(err);
    }
    for (const [m, reason] of refused) await this.refuse(m, reason);
    this.ingested.inc(batch.trail.length + batch.decisions.length - refused.size);
    this.lastLag = msgs[msgs.length - 1]?.info.pending ?? this.lastLag;
    this.batchSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    return undefined;
  }

  /** A message the store could not write: handed back for a later try, or parked after its last delivery. */
  private async refuse(m: JsMsg, reason: string): Promise<void> {
    this.refusedByStore.inc();
    const deliveries = m.info.deliveryCount;
    const where = { subject: m.subject, seq: m.seq, deliveries, reason };
    if (deliveries < this.maxDeliveries) {
      this.logger.warn(where, 'could not store an event; it will be tried again');
      redeliver([m]);
      return;
    }
    try {
      await this.deadLetters.park(this.js!, m, { streamName: this.streamName, deliveries, reason });
      m.ack();
      this.deadLettered.inc();
      this.logger.error(where, 'parked an event that could not be stored on the dead-letter stream');
    } catch (err) {
      this.logger.warn({ ...where, err }, 'could not park an event on the dead-letter stream; it will be tried again');
      redeliver([m]);
    }
  }
}

/**
 * Asks JetStream to deliver these messages again, after a pause. Never throws (it runs in promise
 * callbacks): on a closed connection the messages come back once their ack wait is over.
 */
function redeliver(msgs: JsMsg[]): void {
  try {
    for (const m of msgs) m.nak(RETRY_MS);
  } catch {
    // see above
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
