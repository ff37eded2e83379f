// The error catalogue and the error class without zod, so browser code (the console, through
// `@arbiter/sdk/client`) can import them (`@arbiter/contracts/error-codes`) without pulling the
// schemas into its bundle; `errors.ts` builds the zod enum and schemas from them.

/**
 * Every error code the service can answer with. A code without a status in {@link statusOf}
 * fails `tsc`, so the catalogue and the HTTP mapping cannot drift apart.
 */
export const ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'invalid_cursor',
  'unauthenticated',
  'forbidden',
  'separation_of_duties',
  'not_found',
  'conflict',
  'review_stale',
  'not_approved',
  'version_immutable',
  'too_many_api_keys',
  'payload_too_large',
  'unsupported_media_type',
  'cannot_publish',
  'coverage_below_minimum',
  'result_too_large',
  'rate_limited',
  'dependency_unavailable',
  'timeout',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN: ReadonlySet<string> = new Set(ERROR_CODES);

/** Whether `value` is a code of the catalogue. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && KNOWN.has(value);
}

/** HTTP status of each code (docs/api.md#conventions). */
export function statusOf(code: ErrorCode): number {
  switch (code) {
    case 'bad_request':
    case 'validation_failed':
    case 'invalid_cursor':
      return 400;
    case 'unauthenticated':
      return 401;
    case 'forbidden':
    case 'separation_of_duties':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
    case 'review_stale':
    case 'not_approved':
    case 'version_immutable':
    case 'too_many_api_keys':
      return 409;
    case 'payload_too_large':
      return 413;
    case 'unsupported_media_type':
      return 415;
    case 'cannot_publish':
    case 'coverage_below_minimum':
    case 'result_too_large':
      return 422;
    case 'rate_limited':
      return 429;
    case 'internal':
      return 500;
    case 'dependency_unavailable':
      return 503;
    case 'timeout':
      return 504;
  }
}

/** One reason behind a 400 or 422 (e.g. a failing saved test, a bad schema path). */
export interface ErrorReason {
  code: string;
  message: string;
  path?: string | undefined;
}

/** The error part of a NATS reply envelope; also the core of an RFC 9457 problem body. */
export interface WireError {
  code: ErrorCode;
  message: string;
  status: number;
  errors?: ErrorReason[] | undefined;
}

/**
 * The service's one error type: a catalogue code, its status and a one-line detail. Clients (the
 * SDK) throw it for every problem answer too, with the request id the answer named.
 */
export class ArbiterError extends Error {
  override readonly name = 'ArbiterError';
  readonly status: number;
  /** The id of the HTTP request that failed (the problem's `instance`), when the error came from an answer. */
  readonly requestId?: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: ErrorReason[],
    options?: { cause?: unknown; requestId?: string },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.status = statusOf(code);
    if (options?.requestId !== undefined) this.requestId = options.requestId;
  }

  /** The one-line detail (the problem's `detail`): the message. */
  get detail(): string {
    return this.message;
  }

  /** The envelope form of this error. */
  toWire(): WireError {
    return { code: this.code, message: this.message, status: this.status, ...(this.errors ? { errors: this.errors } : {}) };
  }

  /** Rebuilds an error received in a reply envelope. */
  static fromWire(wire: WireError): ArbiterError {
    return new ArbiterError(wire.code, wire.message, wire.errors);
  }
}

/** Predicate for {@link ArbiterError}, optionally of one code. */
export function isArbiterError(err: unknown, code?: ErrorCode): err is ArbiterError {
  return err instanceof ArbiterError && (code === undefined || err.code === code);
}

/** Reason of a `payload_too_large` about the rule text itself (path `rule`): it concerns a whole batch call, never one item. */
export const RULE_TOO_LARGE = 'rule_too_large';

/** Whether `err` refuses the rule text as too large (see {@link RULE_TOO_LARGE}). */
export function isRuleTooLarge(err: unknown): boolean {
  return isArbiterError(err, 'payload_too_large') && (err.errors ?? []).some((e) => e.code === RULE_TOO_LARGE);
}
