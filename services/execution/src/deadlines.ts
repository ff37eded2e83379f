/**
 * Task deadlines for the worker pool, one timer for all of them.
 *
 * Why not `AbortSignal.timeout` per task: it arms a timer and builds an EventTarget per task, and
 * on this service's hot path (thousands of tasks a second, each done in microseconds) that was a
 * visible share of the main thread. Every task gets the same time-out, so deadlines expire in
 * submission order: a FIFO queue and one timer armed for its oldest live entry do the same job.
 */

type AbortListener = () => void;

/** A task's abort signal, in the shape piscina accepts (`aborted`, `reason`, `addEventListener`). */
export class DeadlineSignal {
  aborted = false;
  reason: unknown = undefined;
  /** Set when the task settled: the deadline no longer matters. */
  settled = false;
  private listener: AbortListener | null = null;

  constructor(readonly deadline: number) {}

  addEventListener(type: string, listener: AbortListener): void {
    if (type === 'abort') this.listener = listener;
  }

  removeEventListener(type: string, listener: AbortListener): void {
    if (type === 'abort' && this.listener === listener) this.listener = null;
  }

  /** Marks the task finished; a later expiry is ignored. */
  settle(): void {
    this.settled = true;
    this.listener = null;
  }

  /** @internal Fired by {@link Deadlines} when the deadline passes before the task settled. */
  expire(reason: unknown): void {
    if (this.settled || this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }
}

/** Hands out {@link DeadlineSignal}s that abort `timeoutMs` after they were handed out. */
export class Deadlines {
  private queue: DeadlineSignal[] = [];
  /** Index of the oldest entry not yet expired or skipped. */
  private head = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A signal for a task submitted now. */
  start(): DeadlineSignal {
    const signal = new DeadlineSignal(this.now() + this.timeoutMs);
    this.queue.push(signal);
    if (this.timer === null && !this.closed) this.arm(this.timeoutMs);
    return signal;
  }

  /** Stops the timer; signals handed out never expire afterwards. */
  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
    this.head = 0;
  }

  private arm(delayMs: number): void {
    // unref: pending deadlines must not keep a shutting-down process alive.
    this.timer = setTimeout(this.expireDue, Math.max(0, Math.ceil(delayMs))).unref();
  }

  private readonly expireDue = (): void => {
    this.timer = null;
    const now = this.now();
    const queue = this.queue;
    let head = this.head;
    while (head < queue.length) {
      const signal = queue[head];
      if (signal.settled) {
        head++;
      } else if (signal.deadline <= now) {
        head++;
        signal.expire(new Error(`task deadline of ${this.timeoutMs} ms passed`));
      } else {
        break;
      }
    }
    // Drop the consumed prefix once it dominates, so the array does not grow without bound.
    if (head === queue.length) {
      this.queue = [];
      head = 0;
    } else if (head > 1024 && head * 2 > queue.length) {
      this.queue = queue.slice(head);
      head = 0;
    }
    this.head = head;
    if (head < this.queue.length && !this.closed) this.arm(this.queue[head].deadline - now);
  };
}
