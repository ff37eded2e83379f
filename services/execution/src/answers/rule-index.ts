import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BatchedWriter } from '@arbiter/service-kit/lifecycle';

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
  /** Epoch ms (written as ISO 8601 at the flush: a date string per run was a cost of every run). */
  firstSeenAt: number;
  lastSeenAt: number;
}

/** Bounds of the index: every rule sent to `/run` is user input, so neither its age nor its size may grow without end. */
export interface RuleIndexBounds {
  /** A record not run for this long expires (its TTL is renewed on every write). */
  ttlSeconds: number;
  /** At most this many records; the least recently run are removed beyond it. */
  maxRules: number;
}

const DEFAULT_BOUNDS: RuleIndexBounds = { ttlSeconds: 86_400, maxRules: 10_000 };

/**
 * The Redis index of rule texts run by this service, keyed by their sha256:
 * `${prefix}:rule:{hash}` (a hash of {@link RuleRecord} fields) and the sorted set `${prefix}:rules`
 * (hash → last run, in ms). Both are bounded ({@link RuleIndexBounds}): records expire when not
 * run for `ttlSeconds`, and beyond `maxRules` the least recently run are deleted.
 * Runs are counted in memory (at most `maxRules` distinct rules per interval) and written in one
 * pipeline per interval, so a reply never waits on Redis; a failed write is logged and its counts dropped.
 */
export class RuleIndex {
  private readonly writer: BatchedWriter<string, Pending>;
  private readonly bounds: RuleIndexBounds;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
    flushIntervalMs = 1000,
    bounds: Partial<RuleIndexBounds> = {},
  ) {
    this.bounds = { ...DEFAULT_BOUNDS, ...bounds };
    this.writer = new BatchedWriter({
      flushMs: flushIntervalMs,
      write: (batch) => this.write(batch),
      onFailure: 'drop',
      onError: (err, batch) => this.logger.warn({ err, rules: batch.size }, 'rule index write failed: counts dropped'),
      maxKeys: this.bounds.maxRules,
    });
  }

  /** Key of one rule's record. */
  key(hash: string): string {
    return `${this.prefix}:rule:${hash}`;
  }

  /** Key of the set of every indexed hash. */
  get setKey(): string {
    return `${this.prefix}:rules`;
  }

  /** Counts `runs` runs of the rule `hash` (default one), `compiles` of them compiled by a worker for the run. */
  note(hash: string, size: number, compiles: boolean | number, runs = 1): void {
    const compiled = typeof compiles === 'number' ? compiles : compiles ? 1 : 0;
    const now = Date.now();
    this.writer.note(hash, (p) => {
      if (p === undefined) return { size, runs, compiles: compiled, firstSeenAt: now, lastSeenAt: now };
      p.runs += runs;
      p.compiles += compiled;
      p.lastSeenAt = now;
      return p;
    });
  }

  /** Writes the pending counts now; resolves when they are written (or dropped on failure). */
  flush(): Promise<void> {
    return this.writer.flush();
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
  close(): Promise<void> {
    return this.writer.close();
  }

  private async write(batch: ReadonlyMap<string, Pending>): Promise<void> {
    const { ttlSeconds, maxRules } = this.bounds;
    const pipe = this.redis.pipeline();
    for (const [hash, p] of batch) {
      const key = this.key(hash);
      pipe
        .hsetnx(key, 'size', p.size)
        .hsetnx(key, 'firstSeenAt', new Date(p.firstSeenAt).toISOString())
        .hset(key, 'lastSeenAt', new Date(p.lastSeenAt).toISOString())
        .hincrby(key, 'runs', p.runs)
        .hincrby(key, 'compiles', p.compiles)
        .expire(key, ttlSeconds)
        .zadd(this.setKey, p.lastSeenAt, hash);
    }
    // Members whose record has expired leave the set too; the set itself expires with its last record.
    pipe
      .zremrangebyscore(this.setKey, '-inf', `(${Date.now() - ttlSeconds * 1000}`)
      .expire(this.setKey, ttlSeconds)
      .zcard(this.setKey);
    const results = (await pipe.exec()) ?? [];
    const failed = results.find(([err]) => err);
    if (failed?.[0]) throw failed[0];
    const count = Number(results.at(-1)?.[1] ?? 0);
    if (count > maxRules) await this.evict(count - maxRules);
  }

  /** Deletes the `n` least recently run records. */
  private async evict(n: number): Promise<void> {
    const oldest = await this.redis.zrange(this.setKey, 0, n - 1);
    if (oldest.length === 0) return;
    await this.redis
      .multi()
      .del(...oldest.map((h) => this.key(h)))
      .zrem(this.setKey, ...oldest)
      .exec();
  }
}
