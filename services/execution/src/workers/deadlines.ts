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

/** Signals of one time-out, in the order they were handed out (so also in the order they expire). */
interface Fifo {
  queue: DeadlineSignal[];
  /** Index of the oldest entry not yet expired or skipped. */
  head: number;
}

/**
 * Hands out {@link DeadlineSignal}s that abort `timeoutMs` after they were handed out (or the
 * time-out given to {@link start}). Signals of one time-out expire in the order they were handed
 * out, so each time-out keeps a FIFO and one timer is armed for the earliest live head of all.
 */
export class Deadlines {
  private readonly fifos = new Map<number, Fifo>();
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Infinity;
  private closed = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A signal for a task started now, aborting `timeoutMs` (default: the one given at construction) later. */
  start(timeoutMs: number = this.timeoutMs): DeadlineSignal {
    const signal = new DeadlineSignal(this.now() + timeoutMs);
    let fifo = this.fifos.get(timeoutMs);
    if (fifo === undefined) {
      fifo = { queue: [], head: 0 };
      this.fifos.set(timeoutMs, fifo);
    }
    fifo.queue.push(signal);
    if (!this.closed && signal.deadline < this.armedFor) this.arm(signal.deadline);
    return signal;
  }

  /** Stops the timer; signals handed out never expire afterwards. */
  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = Infinity;
    this.fifos.clear();
  }

  private arm(at: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.armedFor = at;
    // unref: pending deadlines must not keep a shutting-down process alive.
    this.timer = setTimeout(this.expireDue, Math.max(0, Math.ceil(at - this.now()))).unref();
  }

  private readonly expireDue = (): void => {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.now();
    let earliest = Infinity;
    for (const [timeoutMs, fifo] of this.fifos) {
      const queue = fifo.queue;
      let head = fifo.head;
      while (head < queue.length) {
        const signal = queue[head];
        if (signal.settled) {
          head++;
        } else if (signal.deadline <= now) {
          head++;
          signal.expire(new Error(`task deadline of ${timeoutMs} ms passed`));
        } else {
          break;
        }
      }
      // Drop the consumed prefix once it dominates, so the array does not grow without bound.
      if (head === queue.length) {
        this.fifos.delete(timeoutMs);
        continue;
      }
      if (head > 1024 && head * 2 > queue.length) {
        fifo.queue = queue.slice(head);
        head = 0;
      }
      fifo.head = head;
      earliest = Math.min(earliest, fifo.queue[head].deadline);
    }
    if (earliest < Infinity && !this.closed) this.arm(earliest);
  };
}
