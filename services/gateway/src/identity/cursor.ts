import { ArbiterError } from '@arbiter/contracts';

/** Opaque list cursor: the sort key of the last item returned, base64url-encoded. */
export function encodeCursor(lastKey: string): string {
  return Buffer.from(JSON.stringify({ after: lastKey }), 'utf8').toString('base64url');
}

/** The sort key inside a cursor from {@link encodeCursor}; `bad_request` when it was not made by us. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { after?: unknown }).after === 'string') {
      return (parsed as { after: string }).after;
    }
  } catch {
    // fall through: not one of our cursors
  }
  throw new ArbiterError('bad_request', `invalid cursor \`${cursor.slice(0, 40)}\``);
}

/** Splits `limit + 1` fetched rows into a page and the cursor of the next page (null at the end). */
export function pageFrom<R, T>(
  rows: R[],
  limit: number,
  keyOf: (row: R) => string,
  map: (row: R) => T,
): { items: T[]; nextCursor: string | null } {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(map), nextCursor: more && last !== undefined ? encodeCursor(keyOf(last)) : null };
}
