import { BatchedWriter } from '@arbiter/service-kit/lifecycle';
import type { Knex } from 'knex';
import { touchLastUsed } from './repositories/grants.js';

/**
 * When API keys were last used, kept without a write per request: authentication notes the key in
 * memory and one UPDATE a flush interval writes every key used since. Only keys that authenticated
 * are noted, so the map is bounded by the keys that exist; a failed flush keeps its notes for the next.
 */
export class KeyUsage {
  private readonly writer: BatchedWriter<string, Date>;

  constructor(
    db: Knex,
    warn: (err: unknown, message: string) => void,
    flushMs: number,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.writer = new BatchedWriter({
      flushMs,
      write: (batch) => touchLastUsed(db, batch),
      onFailure: 'retry',
      onError: (err, batch) => warn(err, `could not record when ${batch.size} API keys were last used; will retry`),
    });
  }

  /** Notes a use of the key now. O(1), no I/O. */
  used(apiKeyId: string): void {
    const at = this.now();
    this.writer.note(apiKeyId, () => at);
  }

  /** Writes the uses noted so far (one statement). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Stops the timer and writes what is left. */
  close(): Promise<void> {
    return this.writer.close();
  }
}
