import { ArbiterError, isArbiterError, isRuleTooLarge, type ProblemDetails } from '@arbiter/contracts';
import { problemOf, toArbiterError } from './http/problem.js';

/** Options of {@link runItems}. */
export interface BatchRunOptions {
  /** Items in flight at once. */
  wave: number;
  /** The `instance` of item problems (the HTTP request id). */
  requestId: string;
  /** Told of items that failed with a server fault (logged by the caller). */
  onFault?: (err: unknown) => void;
}

/**
 * Runs `items` with `runOne`, at most `wave` at a time (each wave's requests leave in one turn,
 * so the bus coalescer sends them as one message), and answers in order: an item's value, or
 * the RFC 9457 problem its own request would have answered. A `not_found` (the base or record
 * the whole call names is unknown or deleted) or a rule too large fails the call instead: it is not
 * about one item.
 */
export async function runItems<I, R>(
  items: readonly I[],
  runOne: (item: I) => Promise<R>,
  opts: BatchRunOptions,
): Promise<Array<R | ProblemDetails>> {
  const results: Array<R | ProblemDetails> = new Array<R | ProblemDetails>(items.length);
  for (let start = 0; start < items.length; start += opts.wave) {
    const wave = items.slice(start, start + opts.wave);
    const settled = await Promise.allSettled(wave.map(runOne));
    for (let i = 0; i < settled.length; i++) {
      const s = settled[i];
      if (s.status === 'fulfilled') {
        results[start + i] = s.value;
        continue;
      }
      if (isArbiterError(s.reason, 'not_found') || isRuleTooLarge(s.reason)) throw s.reason;
      const err = toArbiterError(s.reason);
      if (err.status >= 500) opts.onFault?.(s.reason);
      results[start + i] = problemOf(err, opts.requestId);
    }
  }
  return results;
}

/** Refuses a batch of more than `max` items with 413 before anything runs. */
export function checkBatchSize(count: number, max: number): void {
  if (count > max) throw new ArbiterError('payload_too_large', `a batch may carry at most ${max} items; this one has ${count}`);
}
