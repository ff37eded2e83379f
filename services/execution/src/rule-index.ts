import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** One rule of the index, as stored in Redis. */
export interface RuleRecord {
  hash: string;
  /** UTF-8 size of the rule text. */
  size: number;
  firstSeenAt: string;
  lastSeenAt: string;
  runs: number;
  /** Worker compiles of this text (at most one per worker while it stays cached). */
  compiles: number;
}

interface Pending {
  size: number;
  runs: number;
  compiles: number;
  firstSeenAt: string;
  lastSeenAt: string;
}

/**
 * The Redis index of rule texts run by this service, keyed by their sha256:
 * `${prefix}:rule:{hash}` (a hash of {@link RuleRecord} fields) and the set `${prefix}:rules`.
 * Runs are counted in memory and written in one pipeline per interval, so a reply never waits on
 * Redis; a failed write is logged and its counts dropped.
 */
export class RuleIndex {
  private pending = new Map<string, Pending>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
    flushIntervalMs = 1000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushIntervalMs).unref();
  }

  /** Key of one rule's record. */
  key(hash: string): string {
    return `${this.prefix}:rule:${hash}`;
  }

  /** Key of the set of every indexed hash. */
  get setKey(): string {
    return `${this.prefix}:rules`;
  }

  /** Counts one run of the rule `hash`; `compiled` when a worker compiled it for this run. */
  note(hash: string, size: number, compiled: boolean): void {
    const now = new Date().toISOString();
    const p = this.pending.get(hash);
    if (p) {
      p.runs++;
      if (compiled) p.compiles++;
      p.lastSeenAt = now;
    } else {
      this.pending.set(hash, { size, runs: 1, compiles: compiled ? 1 : 0, firstSeenAt: now, lastSeenAt: now });
    }
  }

  /** Writes the pending counts now; resolves when they are written (or dropped on failure). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /** Reads one record; null when the hash is not indexed. */
  async get(hash: string): Promise<RuleRecord | null> {
    const h = await this.redis.hgetall(this.key(hash));
    if (h.size === undefined) return null;
    return {
      hash,
      size: Number(h.size),
      firstSeenAt: h.firstSeenAt ?? '',
      lastSeenAt: h.lastSeenAt ?? '',
      runs: Number(h.runs ?? 0),
      compiles: Number(h.compiles ?? 0),
    };
  }

  /** Stops the timer and writes what is pending. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const pipe = this.redis.pipeline();
    for (const [hash, p] of batch) {
      const key = this.key(hash);
      pipe
        .hsetnx(key, 'size', p.size)
        .hsetnx(key, 'firstSeenAt', p.firstSeenAt)
        .hset(key, 'lastSeenAt', p.lastSeenAt)
        .hincrby(key, 'runs', p.runs)
        .hincrby(key, 'compiles', p.compiles)
        .sadd(this.setKey, hash);
    }
    try {
      const results = (await pipe.exec()) ?? [];
      const failed = results.find(([err]) => err);
      if (failed?.[0]) throw failed[0];
    } catch (err) {
      this.logger.warn({ err, rules: batch.size }, 'rule index write failed: counts dropped');
    }
  }
}
