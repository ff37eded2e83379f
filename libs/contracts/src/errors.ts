import { z } from 'zod';
import { ERROR_CODES, type ErrorReason as PlainErrorReason, type WireError as PlainWireError } from './error-codes.js';

// The catalogue, the status mapping and the error class live in `error-codes.ts` (no zod, for
// browsers); this module adds their schemas.
export { ArbiterError, isArbiterError, isErrorCode, statusOf, RULE_TOO_LARGE, isRuleTooLarge, ERROR_CODES } from './error-codes.js';

/** Every error code the service can answer with ({@link ERROR_CODES}). */
export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** One reason behind a 400 or 422 (e.g. a failing saved test, a bad schema path). */
export const ErrorReason = z.object({ code: z.string(), message: z.string(), path: z.string().optional() });
export type ErrorReason = z.infer<typeof ErrorReason>;

/** The error part of a NATS reply envelope; also the core of an RFC 9457 problem body. */
export const WireError = z.object({
  code: ErrorCode,
  message: z.string(),
  status: z.number().int(),
  errors: z.array(ErrorReason).optional(),
});
export type WireError = z.infer<typeof WireError>;

// The schemas' types and the plain ones are the same shapes.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameShapes: [Same<ErrorReason, PlainErrorReason>, Same<WireError, PlainWireError>] = [true, true];
void sameShapes;
