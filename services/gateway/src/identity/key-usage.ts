import type { Knex } from 'knex';
import { touchLastUsed } from '../repositories/api-keys.js';

/**
 * When API keys were last used, kept without a write per request: authentication notes the key in
 * memory and one UPDATE a flush interval writes every key used since. Only keys that authenticated
 * are noted, so the map is bounded by the keys that exist; a failed flush keeps its notes for the next.
 */
export class KeyUsage {
  private pending = new Map<string, Date>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Knex,
    private readonly warn: (err: unknown, message: string) => void,
    flushMs: number,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs).unref();
  }

  /** Notes a use of the key now. O(1), no I/O. */
  used(apiKeyId: string): void {
    this.pending.set(apiKeyId, this.now());
  }

  /** Writes the uses noted so far (one statement); concurrent calls share one write. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await touchLastUsed(this.db, batch);
    } catch (err) {
      // Put them back unless a newer use was noted meanwhile.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.warn(err, `could not record when ${batch.size} API keys were last used; will retry`);
    }
  }
}
