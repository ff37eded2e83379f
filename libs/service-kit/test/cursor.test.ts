import { isArbiterError } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cursorField, decodeCursor, encodeCursor, pageFrom } from '../src/cursor.js';

const forge = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');

function refusal(cursor: string, schema: z.ZodType): unknown {
  try {
    decodeCursor(cursor, schema);
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal');
}

describe('the cursor codec', () => {
  const Schema = z.object({
    at: cursorField.timestamp(),
    id: cursorField.uuid(),
    k: cursorField.text(10).optional(),
    v: cursorField.int4().optional(),
  });
  const ok = { at: '2026-01-02T03:04:05.000Z', id: '0190a0b0-0000-7000-8000-000000000001' };

  it('round-trips what it encodes', () => {
    expect(decodeCursor(encodeCursor({ ...ok, k: 'ä😀', v: 2 ** 31 - 1 }), Schema)).toEqual({ ...ok, k: 'ä😀', v: 2 ** 31 - 1 });
  });

  it.each([
    ['not base64url', '%%%'],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['too long', 'a'.repeat(513)],
    ['empty', ''],
    ['a wrong type', forge({ ...ok, id: 42 })],
    ['a non-UUID id', forge({ ...ok, id: 'x' })],
    ['a year PostgreSQL cannot hold', forge({ ...ok, at: '-271821-04-20T00:00:00.000Z' })],
    ['year 0', forge({ ...ok, at: '0000-01-01T00:00:00.000Z' })],
    ['U+0000', forge({ ...ok, k: 'a\u0000' })],
    ['an unpaired surrogate', forge({ ...ok, k: '\ud800' })],
    ['text too long', forge({ ...ok, k: 'x'.repeat(11) })],
    ['a number past int4', forge({ ...ok, v: 2 ** 31 })],
    ['a negative number', forge({ ...ok, v: -1 })],
  ])('refuses %s with 400 invalid_cursor', (_what, cursor) => {
    const err = refusal(cursor, Schema);
    expect(isArbiterError(err, 'invalid_cursor')).toBe(true);
    expect((err as { status: number }).status).toBe(400);
  });

  it('pages: the cursor of the last kept row, null on the last page', () => {
    const rows = [1, 2, 3];
    const page = pageFrom(
      rows,
      2,
      (r) => r * 10,
      (r) => ({ n: r }),
    );
    expect(page.items).toEqual([10, 20]);
    expect(decodeCursor(page.nextCursor!, z.object({ n: z.number() }))).toEqual({ n: 2 });
    expect(
      pageFrom(
        rows,
        3,
        (r) => r,
        (r) => ({ n: r }),
      ).nextCursor,
    ).toBeNull();
  });
});
