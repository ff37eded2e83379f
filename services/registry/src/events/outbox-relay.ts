import { eventSubject } from '@arbiter/contracts';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { Bus } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';
import { claimPending, markFailed, markSent, pruneSent } from '../repositories/outbox.js';

const BATCH = 100;
const PUBLISH_TIMEOUT_MS = 2000;
const KEEP_SENT_MS = 24 * 3600 * 1000;

/**
 * Publishes the outbox to JetStream: each event under its subject with its `eventId` as message
 * id (JetStream drops a duplicate sent again after a crash), then marks it sent. Runs when kicked
 * after a commit and every `intervalMs`, so a failed publish (stream missing, NATS down) is
 * retried until it succeeds; nothing is lost. Events go out in commit order within one relay.
 */
export class OutboxRelay {
  private readonly js: JetStreamClient;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private ticks = 0;

  constructor(
    nc: Bus['nc'],
    private readonly db: Knex,
    private readonly prefix: string,
    private readonly logger: Logger,
    intervalMs = 1000,
  ) {
    this.js = jetstream(nc);
    this.timer = setInterval(() => this.kick(), intervalMs).unref();
  }

  /** Asks for a relay pass soon; passes never overlap, and a kick during one causes another. */
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

  /** Stops the timer and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        while (!this.stopped && (await this.pass()) === BATCH);
        if (++this.ticks % 600 === 0) await pruneSent(this.db, new Date(Date.now() - KEEP_SENT_MS));
      } catch (err) {
        this.logger.warn({ err }, 'outbox relay pass failed');
      }
    } while (this.again && !this.stopped);
  }

  /** Publishes one batch; returns how many were sent (stops at the first failure, to keep order). */
  private async pass(): Promise<number> {
    return this.db.transaction(async (trx) => {
      const rows = await claimPending(trx, BATCH);
      let sent = 0;
      for (const row of rows) {
        const subject = eventSubject(this.prefix, row.event.orgId, row.event.kind);
        try {
          await this.js.publish(subject, JSON.stringify(row.event), { msgID: row.event.eventId, timeout: PUBLISH_TIMEOUT_MS });
        } catch (err) {
          await markFailed(trx, row.id, (err as Error).message);
          if (row.attempts === 0 || row.attempts % 30 === 0) this.logger.warn({ err, eventId: row.event.eventId, attempts: row.attempts + 1 }, 'event publish failed: will retry');
          return -1;
        }
        await markSent(trx, row.id);
        sent++;
      }
      return sent;
    });
  }
}
