import { ArbiterError, isStorableText } from '@arbiter/contracts';
import { z } from 'zod';

/**
 * The one codec of every opaque list cursor (`?cursor=`): base64url of a small JSON object. A
 * cursor comes back from the client, so it is input like any other: {@link decodeCursor} checks
 * every field against a schema built from {@link cursorField} before anything reaches SQL, and
 * answers anything else with 400 `invalid_cursor`.
 */

/** Longest cursor text accepted (the list queries also bound `cursor` to 512 characters). */
const MAX_CURSOR_LENGTH = 512;

/** Text PostgreSQL can compare: no U+0000, no unpaired UTF-16 surrogate, at most `max` characters. */
function storableText(max: number) {
  return z.string().max(max).refine(isStorableText, 'must not contain U+0000 or an unpaired surrogate');
}

/** Fields a cursor is made of, each bounded to what its column can hold. */
export const cursorField = {
  /** A UUID (ids of records, keys, events). */
  uuid: () => z.uuid(),
  /** An ISO 8601 UTC timestamp in years 1–9999 (PostgreSQL's `timestamptz` holds them; JavaScript's extremes it does not). */
  timestamp: () =>
    z.iso.datetime().refine((s) => {
      const year = new Date(s).getUTCFullYear();
      return year >= 1 && year <= 9999;
    }, 'must be a time in years 1 to 9999'),
  /** Text compared with a text column (a user id, a name). */
  text: (max = 1000) => storableText(max),
  /** A version number: a PostgreSQL `integer`. */
  int4: () =>
    z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1),
} as const;

/** The cursor of `value` (a small object of {@link cursorField} values). */
export function encodeCursor(value: object): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** The value inside a cursor made by {@link encodeCursor} and valid for `schema`; 400 `invalid_cursor` for anything else. */
export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  const refuse = (cause?: unknown): ArbiterError =>
    new ArbiterError(
      'invalid_cursor',
      `invalid cursor \`${cursor.slice(0, 40)}\`: pass a \`nextCursor\` of this list unchanged, or omit it for the first page`,
      undefined,
      cause === undefined ? undefined : { cause },
    );
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refuse();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch (err) {
    throw refuse(err);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw refuse(parsed.error);
  return parsed.data;
}

/** Splits a `limit + 1` fetch into the page and the cursor of the next one (null on the last page). */
export function pageFrom<R, I>(
  rows: readonly R[],
  limit: number,
  toItem: (r: R) => I,
  cursorOf: (last: R) => object,
): { items: I[]; nextCursor: string | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { items: page.map(toItem), nextCursor: more ? encodeCursor(cursorOf(page[page.length - 1])) : null };
}
