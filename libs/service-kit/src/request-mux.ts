import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';

/** Why a request ended without a reply. */
export type RequestMissReason = 'no_responders' | 'timeout' | 'disconnected' | 'closed';

/** A request that got no reply; `reason` says why. */
export class RequestMiss extends Error {
  constructor(readonly reason: RequestMissReason) {
    super(`request ended without a reply: ${reason}`);
    this.name = 'RequestMiss';
  }
}

interface Pending {
  resolve: (msg: Msg) => void;
  reject: (err: unknown) => void;
}

/** Requests of one time-out, in the order they were sent (so also in the order they expire). */
interface Expiries {
  tokens: string[];
  at: number[];
  head: number;
}

/**
 * Request/reply over one wildcard inbox subscription, as nats.js muxes its own requests, without
 * the `RequestError` (and stack trace) nats.js builds when it completes each request: profiled
 * at the gateway's rates, that was about 4 % of the process's CPU time.
 *
 * Deadlines: one timer for the whole process, not one per request. Requests of the same time-out
 * expire in the order they were sent, so each time-out keeps a FIFO of (token, deadline) and the
 * timer is armed for the earliest live head. An answered request is not unlinked from its FIFO: it
 * is no longer pending, so the sweep skips it, and at the gateway's rates nearly every head is such
 * an entry, so the timer fires about once per time-out, not once per request.
 */
export class RequestMux {
  private readonly inbox = `${createInbox()}.`;
  private readonly pending = new Map<string, Pending>();
  private readonly expiries = new Map<number, Expiries>();
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Infinity;

  constructor(
    private readonly nc: NatsConnection,
    private readonly now: () => number = () => performance.now(),
  ) {
    nc.subscribe(`${this.inbox}*`, { callback: (err, msg) => (err ? this.failAll(new RequestMiss('closed')) : this.settle(msg)) });
  }

  /** Publishes `data` to `subject` and resolves with the first reply; rejects with {@link RequestMiss} or the publish error. */
  request(subject: string, data: Uint8Array, opts: { timeoutMs: number; headers?: MsgHdrs }): Promise<Msg> {
    return new Promise<Msg>((resolve, reject) => {
      const token = (this.next++).toString(36);
      this.pending.set(token, { resolve, reject });
      this.expireLater(token, opts.timeoutMs);
      try {
        this.nc.publish(subject, data, { reply: `${this.inbox}${token}`, ...(opts.headers ? { headers: opts.headers } : {}) });
      } catch (err) {
        this.finish(token)?.reject(err);
      }
    });
  }

  /** Requests waiting for a reply. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Fails every request in flight, e.g. when the connection drops: their replies cannot come any more. */
  failAll(err: RequestMiss): void {
    for (const token of [...this.pending.keys()]) this.finish(token)?.reject(err);
  }

  private settle(msg: Msg): void {
    const waiting = this.finish(msg.subject.slice(this.inbox.length));
    if (waiting === undefined) return; // late reply of a request that timed out
    // With no subscriber on the subject the server answers at once with an empty 503 status message.
    if (msg.data.length === 0 && msg.headers?.code === 503) waiting.reject(new RequestMiss('no_responders'));
    else waiting.resolve(msg);
  }

  private finish(token: string): Pending | undefined {
    const waiting = this.pending.get(token);
    if (waiting === undefined) return undefined;
    this.pending.delete(token);
    return waiting;
  }

  private expireLater(token: string, timeoutMs: number): void {
    let fifo = this.expiries.get(timeoutMs);
    if (fifo === undefined) {
      fifo = { tokens: [], at: [], head: 0 };
      this.expiries.set(timeoutMs, fifo);
    }
    const at = this.now() + timeoutMs;
    fifo.tokens.push(token);
    fifo.at.push(at);
    if (at < this.armedFor) this.arm(at);
  }

  private arm(at: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.armedFor = at;
    // unref: pending deadlines must not keep a closing process alive.
    this.timer = setTimeout(this.sweep, Math.max(0, Math.ceil(at - this.now()))).unref();
  }

  private readonly sweep = (): void => {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.now();
    let earliest = Infinity;
    for (const [timeoutMs, fifo] of this.expiries) {
      let head = fifo.head;
      while (head < fifo.tokens.length) {
        const token = fifo.tokens[head];
        if (!this.pending.has(token))
          head++; // answered (or failed) already
        else if (fifo.at[head] <= now) {
          head++;
          this.finish(token)?.reject(new RequestMiss('timeout'));
        } else break;
      }
      if (head === fifo.tokens.length) {
        this.expiries.delete(timeoutMs);
        continue;
      }
      if (head > 1024 && head * 2 > fifo.tokens.length) {
        fifo.tokens = fifo.tokens.slice(head);
        fifo.at = fifo.at.slice(head);
        head = 0;
      }
      fifo.head = head;
      earliest = Math.min(earliest, fifo.at[head]);
    }
    if (earliest < Infinity) this.arm(earliest);
  };
}
