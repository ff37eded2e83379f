import { ArbiterError } from '@arbiter/contracts';
import type { z } from 'zod';

/** Opaque list cursor: base64url of a small JSON object. */
export function encodeCursor(value: object): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Reads a cursor made by {@link encodeCursor}; `bad_request` when it was not. */
export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch (err) {
    throw new ArbiterError('bad_request', `invalid cursor \`${cursor.slice(0, 64)}\``, undefined, { cause: err });
  }
}

/** Splits a `limit + 1` fetch into the page and the cursor of the next one (null on the last page). */
export function pageFrom<R, I>(
  rows: R[],
  limit: number,
  toItem: (r: R) => I,
  cursorOf: (last: R) => object,
): { items: I[]; nextCursor: string | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { items: page.map(toItem), nextCursor: more ? encodeCursor(cursorOf(page[page.length - 1])) : null };
}
