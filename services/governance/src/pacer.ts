import { setTimeout as sleep } from 'node:timers/promises';

/** Waits shorter than this are not slept (a timer's own granularity): the work starts a little early. */
const MIN_WAIT_MS = 1;

/**
 * Spaces work out to at most `perSecond` units a second, without bursts: each `take(n)` starts
 * `n / perSecond` seconds after the previous one started, or at once when the work itself fell
 * behind (time lost is never made up by running faster). `perSecond` 0: unpaced. An impact
 * analysis takes it so it never holds more than a share of the machine's CPU from live runs, as
 * PostgreSQL's cost-based vacuum delay does for maintenance.
 */
export class Pacer {
  /** When the next unit may start (the clock's ms). */
  private next = -Infinity;

  constructor(
    private readonly perSecond: number,
    private readonly clock: () => number = () => performance.now(),
    private readonly wait: (ms: number) => Promise<unknown> = (ms) => sleep(ms),
  ) {}

  /** Resolves when `units` more may start. */
  async take(units: number): Promise<void> {
    if (this.perSecond <= 0) return;
    const now = this.clock();
    const at = Math.max(this.next, now);
    this.next = at + (units / this.perSecond) * 1000;
    if (at - now >= MIN_WAIT_MS) await this.wait(at - now);
  }
}
