import { isArbiterError } from '@arbiter/contracts';
import { RetryLaterError } from '../errors.js';

/**
 * `retry-after` (seconds) of the execution service's per-caller limit (429 `rate_limited`: the
 * caller already has EXEC_CALLER_MAX evaluations queued or running; each takes at most a task
 * time-out, usually milliseconds).
 */
export const EXECUTION_RETRY_AFTER_SECONDS = 1;

/** The execution service's answer, with its per-caller limit turned into a 429 that carries `retry-after`. */
export function executionAnswer<T>(reply: Promise<T>): Promise<T> {
  return reply.catch((err: unknown) => {
    throw executionError(err);
  });
}

/** The execution service's per-caller limit as a 429 that carries `retry-after`; any other error unchanged. */
export function executionError<E>(err: E): E | RetryLaterError {
  return isArbiterError(err, 'rate_limited') ? new RetryLaterError('rate_limited', err.message, EXECUTION_RETRY_AFTER_SECONDS) : err;
}
