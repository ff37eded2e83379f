/**
 * The dead-letter stream of the events stream (`<events stream>_DEAD`): where a consumer parks a
 * message it has failed at its last allowed delivery, so the messages behind it flow. The audit
 * and webhooks services share the one stream; either creates it.
 */

import { deadEventStreamName, deadEventSubject } from '@arbiter/contracts';
import { DiscardPolicy, JetStreamApiError, jetstreamManager, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';

/** JetStream's "stream not found" error code. */
const STREAM_NOT_FOUND = 10059;
/** Parked messages the dead-letter stream keeps at most (the oldest go first). */
const DEAD_LETTERS_KEPT = 100_000;

/** Settings of {@link DeadLetters}. */
export interface DeadLettersOptions {
  /** The bus prefix: the stream and subject are named after it. */
  prefix: string;
  /** Replicas when this creates the stream (like the events stream's). */
  streamReplicas: number;
  /** Deadline of each JetStream API call. */
  timeoutMs: number;
  /** The parking consumer, named in a header and in the message id (several consumers may park one message); none for the audit trail's. */
  consumer?: string;
}

/** Why and where a message is parked. */
export interface ParkedFrom {
  /** The events stream's name (the message id is `<stream>:<seq>[:<consumer>]`). */
  streamName: string;
  deliveries: number;
  reason: string;
}

export class DeadLetters {
  private ready = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: DeadLettersOptions,
  ) {}

  get streamName(): string {
    return deadEventStreamName(this.opts.prefix);
  }

  /** Creates the dead-letter stream unless it exists. */
  async ensure(): Promise<void> {
    if (this.ready) return;
    const jsm = await jetstreamManager(this.nc, { timeout: this.opts.timeoutMs });
    try {
      await jsm.streams.info(this.streamName);
      this.ready = true;
      return;
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== STREAM_NOT_FOUND) throw err;
    }
    try {
      await jsm.streams.add({
        name: this.streamName,
        subjects: [deadEventSubject(this.opts.prefix)],
        num_replicas: this.opts.streamReplicas,
        max_msgs: DEAD_LETTERS_KEPT,
        discard: DiscardPolicy.Old,
      });
    } catch (err) {
      // Another replica created it since the lookup: fine as long as it now exists.
      await jsm.streams.info(this.streamName).catch(() => {
        throw err;
      });
    }
    this.ready = true;
  }

  /**
   * Publishes `m` on the dead-letter stream with where it came from and why (headers of one line
   * each); the caller acks it afterwards. Throws when it could not: the stream is then looked up
   * again next time (it may have been removed).
   */
  async park(js: JetStreamClient, m: JsMsg, from: ParkedFrom): Promise<void> {
    try {
      await this.ensure();
      const h = headers();
      h.set('Arbiter-Subject', m.subject);
      h.set('Arbiter-Stream-Seq', String(m.seq));
      h.set('Arbiter-Deliveries', String(from.deliveries));
      if (this.opts.consumer !== undefined) h.set('Arbiter-Consumer', this.opts.consumer);
      h.set('Arbiter-Reason', from.reason.replace(/\s+/g, ' ').slice(0, 1000));
      // The message id makes a park sent twice (a crash before the ack) one message.
      const msgID = `${from.streamName}:${m.seq}${this.opts.consumer !== undefined ? `:${this.opts.consumer}` : ''}`;
      await js.publish(deadEventSubject(this.opts.prefix), m.data, { headers: h, msgID });
    } catch (err) {
      this.ready = false;
      throw err;
    }
  }
}
