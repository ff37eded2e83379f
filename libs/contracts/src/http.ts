import { z } from 'zod';
import { ErrorCode, ErrorReason } from './errors.js';

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
