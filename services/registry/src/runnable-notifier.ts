import { RunnableSubject, type RunnableChanged } from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';
import pg from 'pg';
import type { Logger } from 'pino';

/** The PostgreSQL channel the runnable-feed triggers notify (migration `20261201000000_runnable_feed.js`). */
export const RUNNABLE_CHANNEL = 'registry_runnable';

const encoder = new TextEncoder();

/**
 * Relays the runnable feed's PostgreSQL notifications (`<orgId> <revision>`, sent once a change
 * commits) to the bus as `runnable.changed` (core NATS), where gateways wake the change streams of
 * that org. Every replica relays (duplicates are harmless: a gateway compares revisions). A lost
 * notification (the listening connection broke) delays a runtime only until the gateway's next
 * revision poll. Reconnects with back-off until closed.
 */
export class RunnableNotifier {
  private current: pg.Client | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly retryMs = 1000,
  ) {}

  /** Connects and listens; resolves once listening, or after the first failure (then retries in the background). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Stops listening. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.current;
    this.current = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 5000 });
    this.current = client;
    client.on('notification', (n) => {
      if (n.channel === RUNNABLE_CHANNEL && n.payload !== undefined) this.relay(n.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, undefined));
    try {
      await client.connect();
      await client.query(`listen ${RUNNABLE_CHANNEL}`);
    } catch (err) {
      this.lost(client, err);
    }
  }

  /** The listening connection broke (once per connection): reconnect after `retryMs`. */
  private lost(client: pg.Client, err: unknown): void {
    if (this.closed || client !== this.current) return;
    this.current = undefined;
    this.logger.warn({ err }, 'runnable notifications: the listening connection is lost; reconnecting');
    client.end().catch(() => undefined);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, this.retryMs).unref();
  }

  private relay(payload: string): void {
    const [orgId, rev] = payload.split(' ');
    const revision = Number(rev);
    if (!orgId || !Number.isSafeInteger(revision)) return;
    const message: RunnableChanged = { orgId, revision };
    try {
      this.bus.nc.publish(this.bus.subject(RunnableSubject.changed), encoder.encode(JSON.stringify(message)));
    } catch (err) {
      this.logger.warn({ err }, 'runnable notification not relayed (the bus is down); gateways poll');
    }
  }
}
