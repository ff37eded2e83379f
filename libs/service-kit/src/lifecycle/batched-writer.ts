/** Options of a {@link BatchedWriter}. */
export interface BatchedWriterOptions<K, V> {
  /** How often what was noted is written. */
  flushMs: number;
  /** Writes one batch (one statement or pipeline, say); a throw is handed to {@link onError}. */
  write(batch: ReadonlyMap<K, V>): Promise<void>;
  /**
   * What becomes of a batch whose write failed: `retry` keeps its entries for the next write (an
   * entry noted again meanwhile wins over the failed one), `drop` forgets them.
   */
  onFailure: 'retry' | 'drop';
  /** Told of each failed write. */
  onError(err: unknown, batch: ReadonlyMap<K, V>): void;
  /** At most this many keys wait for a write; a note for one more key is ignored (no bound by default). */
  maxKeys?: number;
}

/**
 * Writes kept off the request path: callers note values by key in memory (O(1), no I/O) and one
 * write per `flushMs` takes every entry noted since. One write runs at a time; the timer is unref'd.
 */
export class BatchedWriter<K, V> {
  private pending = new Map<K, V>();
  private readonly timer: NodeJS.Timeout;
  private writing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly opts: BatchedWriterOptions<K, V>) {
    this.timer = setInterval(() => void this.flush(), opts.flushMs).unref();
  }

  /** Entries waiting for a write. */
  get size(): number {
    return this.pending.size;
  }

  /** Sets the entry of `key` to `update(its waiting value, if any)`; ignored for a new key past `maxKeys`. */
  note(key: K, update: (current: V | undefined) => V): void {
    const current = this.pending.get(key);
    if (current === undefined && this.opts.maxKeys !== undefined && this.pending.size >= this.opts.maxKeys) return;
    this.pending.set(key, update(current));
  }

  /**
   * Writes what was noted before this call; resolves when it is written or its write failed (never
   * rejects). A call while a write runs waits for it and then for one more write, shared by every
   * call made meanwhile.
   */
  flush(): Promise<void> {
    if (this.writing === undefined) return this.startWrite();
    this.queued ??= this.writing.then(() => {
      this.queued = undefined;
      return this.startWrite();
    });
    return this.queued;
  }

  /** Stops the timer and writes what is left (one attempt). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private startWrite(): Promise<void> {
    const write = this.writeBatch().finally(() => {
      if (this.writing === write) this.writing = undefined;
    });
    this.writing = write;
    return write;
  }

  private async writeBatch(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.opts.write(batch);
    } catch (err) {
      if (this.opts.onFailure === 'retry') {
        const max = this.opts.maxKeys ?? Infinity;
        for (const [key, value] of batch) if (!this.pending.has(key) && this.pending.size < max) this.pending.set(key, value);
      }
      this.opts.onError(err, batch);
    }
  }
}
