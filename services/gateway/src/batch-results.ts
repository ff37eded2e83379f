import { ArbiterError, isRuleTooLarge, type ProblemDetails } from '@arbiter/contracts';
import type { ExecutionAnswer } from './clients/execution-client.js';
import { problemOf } from './http/problem.js';

/** Options of {@link batchResults}. */
export interface BatchResultOptions {
  /** The `instance` of item problems (the HTTP request id). */
  requestId: string;
  /** Told of items that failed with a server fault (logged by the caller). */
  onFault?: (err: ArbiterError) => void;
  /** A `not_found` fails the whole call (the base or record the call names is unknown or deleted): it is not about one item. */
  notFoundFailsCall?: boolean;
}

/**
 * A batch call's `results`: each item's answer (raw JSON, forwarded as it is), or the RFC 9457
 * problem its own request would have answered. A rule too large (and, for the stored forms, an
 * unknown or deleted base) fails the whole call instead: it is not about one item.
 */
export function batchResults(answers: readonly ExecutionAnswer[], opts: BatchResultOptions): Array<Uint8Array | ProblemDetails> {
  return answers.map((answer) => {
    if (!(answer instanceof ArbiterError)) return answer;
    if (opts.notFoundFailsCall && answer.code === 'not_found') throw answer;
    // A rule too large is about the call, not one item: one 413 for the whole call.
    if (isRuleTooLarge(answer)) throw answer;
    if (answer.status >= 500) opts.onFault?.(answer);
    return problemOf(answer, opts.requestId);
  });
}

/** Refuses a batch of more than `max` items with 413 before anything runs. */
export function checkBatchSize(count: number, max: number): void {
  if (count > max) throw new ArbiterError('payload_too_large', `a batch may carry at most ${max} items; this one has ${count}`);
}
