import { ArbiterError, problemOf, type ErrorCode, type ProblemDetails } from '@arbiter/contracts';

/** An error whose answer tells the client when to try again (`retry-after`, in seconds). */
export class RetryLaterError extends ArbiterError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, message);
  }
}

/** `retry-after` of a 503 (a dependency down): long enough not to hammer it, short enough to recover soon. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/** How an HTTP door answers `err`: its status, the problem document, and `retry-after` on a 429 or 503. */
export function problemAnswer(
  err: ArbiterError,
  requestId: string,
): { status: number; headers: Record<string, string>; body: ProblemDetails } {
  const retryAfter =
    err instanceof RetryLaterError ? err.retryAfterSeconds : err.status === 503 ? DEPENDENCY_RETRY_AFTER_SECONDS : undefined;
  return {
    status: err.status,
    headers: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
    body: problemOf(err, requestId),
  };
}
