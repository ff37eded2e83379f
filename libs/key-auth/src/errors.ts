import { ArbiterError, type ErrorCode } from '@arbiter/contracts';

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
