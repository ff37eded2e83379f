import { z } from 'zod';
import { type ArbiterError, ErrorCode, ErrorReason } from './errors.js';

/** RFC 9457 problem details, the body of every non-2xx HTTP answer (docs/api.md#conventions). */
export const ProblemDetails = z.object({
  type: z.string().describe('URI naming the error code'),
  title: z.string().describe('Short summary of the error code'),
  status: z.number().int(),
  detail: z.string().describe('What went wrong in this request'),
  code: ErrorCode,
  instance: z.string().describe('Request id of the failed request'),
  errors: z.array(ErrorReason).optional().describe('The failing fields or reasons, when several'),
});
export type ProblemDetails = z.infer<typeof ProblemDetails>;

/**
 * A yes/no query parameter (`all`, `deleted`, `dryRun`, …): exactly `true` or `false` (anything else
 * is 400), read as a boolean. Every route spells its flags this way.
 */
export const QueryFlag = z.enum(['true', 'false']).transform((v) => v === 'true');

/** Query of every list endpoint: `?limit=` (default 50, max 200) and an opaque `?cursor=`. Unknown parameters are ignored. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size (1–200)'),
  cursor: z.string().min(1).max(512).optional().describe('Opaque cursor from a previous page'),
});
export type PageQuery = z.infer<typeof PageQuery>;

/** A page of a list as a type (clients such as the console read pages of many item types). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A page of a list: `{items, nextCursor}`; `nextCursor` is null on the last page. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable() });
}

/** Media type of every error answer (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Prefix of the problem `type` URI; the code follows (one stable URI per code). */
const PROBLEM_TYPE_BASE = 'urn:arbiter:error:';

const TITLES: Record<ErrorCode, string> = {
  bad_request: 'Bad request',
  validation_failed: 'Validation failed',
  invalid_cursor: 'Invalid cursor',
  unauthenticated: 'Unauthenticated',
  forbidden: 'Forbidden',
  separation_of_duties: 'Separation of duties',
  not_found: 'Not found',
  conflict: 'Conflict',
  review_stale: 'Review is stale',
  not_approved: 'Not approved',
  version_immutable: 'Version is immutable',
  too_many_api_keys: 'Too many API keys',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  cannot_publish: 'Cannot publish',
  coverage_below_minimum: 'Coverage below the minimum',
  result_too_large: 'Result too large',
  rate_limited: 'Too many requests',
  dependency_unavailable: 'Dependency unavailable',
  timeout: 'Timed out',
  internal: 'Internal error',
};

/** The RFC 9457 body for an {@link ArbiterError} answered to request `requestId`. */
export function problemOf(err: ArbiterError, requestId: string): ProblemDetails {
  return {
    type: PROBLEM_TYPE_BASE + err.code,
    title: TITLES[err.code],
    status: err.status,
    detail: err.message,
    code: err.code,
    instance: requestId,
    ...(err.errors !== undefined && err.errors.length > 0 ? { errors: err.errors } : {}),
  };
}
