/**
 * A bound on the work of a static check, counted in units rather than timed, so a check finishes
 * the same way on any machine: once more is spent than `limit`, it is stopped and says so.
 */
export class Work {
  spent = 0;
  stopped = false;
  constructor(readonly limit: number) {}

  /** Spends `units`; false once the bound is passed (and from then on). */
  spend(units: number): boolean {
    this.spent += units;
    if (this.spent > this.limit) this.stopped = true;
    return !this.stopped;
  }
}
