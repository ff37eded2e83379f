import type { RunnableKind } from '@arbiter/contracts';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { indexEntries, type IndexEntries } from './domain/index-entries.js';
import { allRecordsOfBase, getBase } from './repositories/records.js';
import { findShadow } from './repositories/shadows.js';
import { timelineRowsOfBase } from './repositories/timeline.js';
import { findRollout } from './repositories/rollouts.js';

/**
 * Writes a base's entries unless Redis already holds a higher revision of that base (a later
 * commit, written by a faster replica). KEYS: base key, then record keys; ARGV: rev, base value,
 * record values in KEYS order.
 */
const WRITE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
local rev = tonumber(ARGV[1])
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and type(decoded) == 'table' and tonumber(decoded.rev) and tonumber(decoded.rev) > rev then
    return 0
  end
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], ARGV[i + 1])
end
return 1
`;

/**
 * Keeps the Redis runnable index current from PostgreSQL. The registry calls {@link refresh} after
 * each commit and before replying. A base whose write failed is retried in the background until
 * it succeeds.
 */
export class RunnableIndexWriter {
  private readonly dirty = new Map<string, RunnableKind>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly db: Knex,
    private readonly prefix: string,
    private readonly logger: Logger,
    retryMs = 1000,
  ) {
    this.timer = setInterval(() => void this.retry(), retryMs).unref();
  }

  /** Rebuilds the entries of one base from PostgreSQL and writes them; returns them (null for an unknown base). */
  async refresh(kind: RunnableKind, baseId: string): Promise<IndexEntries | null> {
    try {
      const base = await getBase(this.db, baseId);
      if (!base) return null;
      const entries = indexEntries(
        this.prefix,
        base,
        await allRecordsOfBase(this.db, baseId),
        await timelineRowsOfBase(this.db, baseId),
        Date.now(),
        await findRollout(this.db, baseId),
        await findShadow(this.db, baseId),
      );
      await this.write(entries);
      this.dirty.delete(baseId);
      return entries;
    } catch (err) {
      this.dirty.set(baseId, kind);
      throw err;
    }
  }

  /** Bases whose last write failed and wait for a retry. */
  get pending(): number {
    return this.dirty.size;
  }

  /** Stops the retry timer. */
  close(): void {
    clearInterval(this.timer);
  }

  private async write(e: IndexEntries): Promise<void> {
    const keys = [e.baseKey, ...e.records.map((r) => r.key), ...(e.timeline ? [e.timeline.key] : [])];
    const values = [
      JSON.stringify(e.base),
      ...e.records.map((r) => JSON.stringify(r.value)),
      ...(e.timeline ? [JSON.stringify(e.timeline.value)] : []),
    ];
    await this.redis.eval(WRITE_SCRIPT, keys.length, ...keys, String(e.rev), ...values);
  }

  private async retry(): Promise<void> {
    for (const [baseId, kind] of [...this.dirty]) {
      try {
        await this.refresh(kind, baseId);
        this.logger.info({ baseId }, 'runnable index repaired');
      } catch (err) {
        this.logger.warn({ err, baseId }, 'runnable index write failed again');
        return;
      }
    }
  }
}
