import {
  ArbiterError,
  EXEC_BATCH_MAX_ITEMS,
  ExecBatchItemSubject,
  ExecBatchReply,
  ExecSubject,
  type ExecBatchItem,
  type ExecBatchResult,
} from '@arbiter/contracts';
import type { z } from 'zod';
import type { Bus, RequestOptions } from './bus.js';

/** Bytes kept free in a batch message for its envelope and JSON punctuation. */
const ENVELOPE_BYTES = 4096;
/** Max payload assumed before the server has said (NATS's default). */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
const BATCHABLE = new Set<string>(ExecBatchItemSubject.options);

interface Pending {
  readonly name: string;
  readonly payload: unknown;
  readonly reply: z.ZodType;
  readonly opts: RequestOptions;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/** Options of {@link ExecCoalescer}. */
export interface ExecCoalescerOptions {
  /** Off: every request goes on its own subject, as without the coalescer. */
  enabled: boolean;
  /** Items per batch message; default (and at most) `EXEC_BATCH_MAX_ITEMS`. */
  maxItems?: number;
}

/** Counters for the benchmark and tests: batch messages sent and the items they carried. */
export interface CoalescerStats {
  /** Requests sent on their own subject (alone in their turn, or not batchable). */
  single: number;
  batches: number;
  batchedItems: number;
}

/**
 * Sends the evaluation requests (`exec.run`, `exec.stored.*`) made in the same event-loop turn as
 * one `exec.batch` message, with no timer: the flush runs in `setImmediate`, right after the
 * turn's I/O callbacks. A request alone in its turn goes on its own subject unchanged, so at low
 * load nothing changes; under load batches grow by themselves. Batches are split to stay under
 * the item limit and the bus's max payload; each caller gets its own item's answer or error, as
 * its own subject would have given it (an answer too large for the batch reply is asked again alone).
 */
export class ExecCoalescer implements Pick<Bus, 'request'> {
  private pending: Pending[] = [];
  private scheduled = false;
  private readonly maxItems: number;
  private readonly counts: CoalescerStats = { single: 0, batches: 0, batchedItems: 0 };

  constructor(
    private readonly bus: Pick<Bus, 'request' | 'nc'>,
    private readonly opts: ExecCoalescerOptions,
  ) {
    this.maxItems = Math.min(Math.max(1, opts.maxItems ?? EXEC_BATCH_MAX_ITEMS), EXEC_BATCH_MAX_ITEMS);
  }

  request<T>(name: string, payload: unknown, reply: z.ZodType<T>, opts: RequestOptions = {}): Promise<T> {
    if (!this.opts.enabled || !BATCHABLE.has(name)) return this.single(name, payload, reply, opts);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ name, payload, reply, opts, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Requests sent alone and in batches so far. */
  stats(): CoalescerStats {
    return { ...this.counts };
  }

  private single<T>(name: string, payload: unknown, reply: z.ZodType<T>, opts: RequestOptions): Promise<T> {
    this.counts.single++;
    return this.bus.request(name, payload, reply, opts);
  }

  private sendAlone(p: Pending): void {
    this.single(p.name, p.payload, p.reply, p.opts).then(p.resolve, p.reject);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const turn = this.pending;
    this.pending = [];
    if (turn.length === 1) return this.sendAlone(turn[0]);
    const room = (this.bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - ENVELOPE_BYTES;
    let group: Array<{ p: Pending; item: ExecBatchItem }> = [];
    let bytes = 0;
    for (const p of turn) {
      let item: ExecBatchItem;
      try {
        item = {
          subject: p.name as ExecBatchItemSubject,
          payload: JSON.stringify(p.payload),
          ...(p.opts.requestId !== undefined ? { requestId: p.opts.requestId } : {}),
        };
      } catch {
        // Too deep for JSON.stringify: sent alone, the bus answers it as it would have.
        this.sendAlone(p);
        continue;
      }
      // The payload travels as a JSON string: quotes and backslashes are escaped once more.
      const size = Buffer.byteLength(JSON.stringify(item), 'utf8') + 1;
      if (size > room) {
        this.sendAlone(p); // the bus refuses it with payload_too_large, as it would have alone
        continue;
      }
      if (group.length === this.maxItems || bytes + size > room) {
        this.send(group);
        group = [];
        bytes = 0;
      }
      group.push({ p, item });
      bytes += size;
    }
    if (group.length > 0) this.send(group);
  };

  private send(group: Array<{ p: Pending; item: ExecBatchItem }>): void {
    if (group.length === 1) return this.sendAlone(group[0].p);
    this.counts.batches++;
    this.counts.batchedItems += group.length;
    const timeoutMs = Math.max(...group.map(({ p }) => p.opts.timeoutMs ?? 0)) || undefined;
    this.bus
      .request(ExecSubject.batch, { items: group.map((g) => g.item) }, ExecBatchReply, timeoutMs !== undefined ? { timeoutMs } : {})
      .then(
        (reply) => {
          if (reply.results.length !== group.length) {
            const err = new ArbiterError('internal', `malformed reply from \`${ExecSubject.batch}\`: wrong number of results`);
            for (const { p } of group) p.reject(err);
            return;
          }
          group.forEach(({ p }, i) => this.settle(p, reply.results[i]));
        },
        (err: unknown) => {
          for (const { p } of group) p.reject(err);
        },
      );
  }

  private settle(p: Pending, result: ExecBatchResult): void {
    if (result.ok) {
      const parsed = p.reply.safeParse(result.data);
      if (parsed.success) p.resolve(parsed.data);
      else p.reject(new ArbiterError('internal', `malformed reply from \`${p.name}\``, undefined, { cause: parsed.error }));
    } else if (result.error.code === 'result_too_large') {
      this.sendAlone(p);
    } else {
      p.reject(ArbiterError.fromWire(result.error));
    }
  }
}
