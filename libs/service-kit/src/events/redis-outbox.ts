import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ArbiterEvent } from '@arbiter/contracts';
import type { Redis } from 'ioredis';
import type { ClaimedEvent, OutboxStore } from './outbox.js';

const GROUP = 'relay';
/** An entry a relay claimed but did not acknowledge within this time is claimed again by any relay. */
const DEFAULT_LEASE_MS = 30_000;

type StreamEntry = [id: string, fields: string[]];

function eventOf(fields: string[]): ArbiterEvent | undefined {
  const i = fields.indexOf('event');
  if (i < 0 || i + 1 >= fields.length) return undefined;
  try {
    return JSON.parse(fields[i + 1]) as ArbiterEvent;
  } catch {
    return undefined;
  }
}

/**
 * An outbox in a Redis stream, for a service without a database of its own on its hot path (the
 * execution service's `executed` events: docs/design/events-and-audit.md keeps PostgreSQL off the run path). Events
 * survive the process and JetStream outages; replicas share one consumer group, entries a dead relay
 * held (or failed to publish) are reclaimed after the lease (30 s), and acknowledged entries are deleted. The stream is
 * capped at `maxLength` entries (oldest trimmed) so an outage of JetStream cannot grow it without bound.
 */
export class RedisOutbox implements OutboxStore {
  readonly name: string;
  private readonly consumer = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private ready: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly opts: { maxLength?: number; leaseMs?: number } = {},
  ) {
    this.name = `redis:${key}`;
  }

  /** Appends `events` to the stream (one round trip). */
  enqueue(events: readonly ArbiterEvent[]): Promise<void> {
    return this.enqueueSerialized(events.map((e) => JSON.stringify(e)));
  }

  /** Appends events already serialised with `JSON.stringify` (one round trip), for callers that measured them. */
  async enqueueSerialized(events: readonly string[]): Promise<void> {
    if (events.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const e of events) pipeline.xadd(this.key, 'MAXLEN', '~', this.opts.maxLength ?? 1_000_000, '*', 'event', e);
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([err]) => err !== null);
    if (failed) throw failed[0]!;
  }

  async claim(limit: number): Promise<ClaimedEvent[]> {
    try {
      return await this.claimEntries(limit);
    } catch (err) {
      // The stream (and its group) went away, e.g. a Redis restart without persistence: recreate next time.
      if (err instanceof Error && err.message.includes('NOGROUP')) this.ready = undefined;
      throw err;
    }
  }

  private async claimEntries(limit: number): Promise<ClaimedEvent[]> {
    await this.ensureGroup();
    // Entries whose relay died (or failed to publish them) first, then new ones.
    const [, stale] = (await this.redis.xautoclaim(
      this.key,
      GROUP,
      this.consumer,
      this.opts.leaseMs ?? DEFAULT_LEASE_MS,
      '0-0',
      'COUNT',
      limit,
    )) as [string, StreamEntry[]];
    const entries: StreamEntry[] = [...stale];
    if (entries.length < limit) {
      const fresh = (await this.redis.xreadgroup(
        'GROUP',
        GROUP,
        this.consumer,
        'COUNT',
        limit - entries.length,
        'STREAMS',
        this.key,
        '>',
      )) as Array<[string, StreamEntry[]]> | null;
      for (const [, list] of fresh ?? []) entries.push(...list);
    }
    const claimed: ClaimedEvent[] = [];
    const broken: string[] = [];
    for (const [id, fields] of entries) {
      const event = eventOf(fields);
      if (event) claimed.push({ ref: id, event, attempts: 0 });
      else broken.push(id);
    }
    if (broken.length > 0) await this.markSent(broken); // unreadable entries would be retried forever
    return claimed;
  }

  async markSent(refs: string[]): Promise<void> {
    if (refs.length === 0) return;
    await this.redis
      .multi()
      .xack(this.key, GROUP, ...refs)
      .xdel(this.key, ...refs)
      .exec();
  }

  /** Leaves the entries pending: they are claimed again once their lease lapses. */
  async markFailed(): Promise<void> {}

  /** Deletes the entries, like {@link markSent}: the stream keeps nothing once it is acknowledged. */
  markDropped(refs: string[]): Promise<void> {
    return this.markSent(refs);
  }

  async backlog(): Promise<{ pending: number; oldestSeconds: number }> {
    const pending = await this.redis.xlen(this.key);
    if (pending === 0) return { pending, oldestSeconds: 0 };
    const first = (await this.redis.xrange(this.key, '-', '+', 'COUNT', 1)) as StreamEntry[];
    const millis = Number(first[0]?.[0].split('-')[0] ?? Date.now());
    return { pending, oldestSeconds: Math.max(0, (Date.now() - millis) / 1000) };
  }

  /** Forgets this process's consumer once it holds nothing (called at shutdown). */
  async close(): Promise<void> {
    const pending = (await this.redis.xpending(this.key, GROUP, '-', '+', 1, this.consumer).catch(() => [])) as unknown[];
    if (pending.length === 0) await this.redis.xgroup('DELCONSUMER', this.key, GROUP, this.consumer).catch(() => undefined);
  }

  private ensureGroup(): Promise<void> {
    this.ready ??= this.redis
      .xgroup('CREATE', this.key, GROUP, '0', 'MKSTREAM')
      .then(
        () => undefined,
        (err: Error) => {
          if (!err.message.includes('BUSYGROUP')) throw err;
        },
      )
      .catch((err: unknown) => {
        this.ready = undefined;
        throw err;
      });
    return this.ready;
  }
}
