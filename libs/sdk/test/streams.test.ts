/** The stream parsers: NDJSON lines and server-sent events, over bodies cut at any byte. */
import { describe, expect, it } from 'vitest';
import { lines, serverSentEvents } from '../src/streams.js';

/** A body delivered in chunks of `size` bytes (multi-byte characters split on purpose). */
function body(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) controller.close();
      else {
        controller.enqueue(bytes.slice(at, at + size));
        at += size;
      }
    },
  });
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('lines', () => {
  it('splits on \\n, \\r\\n and \\r, keeps a last line without newline, decodes UTF-8 across chunks', async () => {
    for (const size of [1, 2, 3, 64]) {
      expect(await collect(lines(body('één\r\ntwee\nthree\rvier', size)))).toEqual(['één', 'twee', 'three', 'vier']);
      expect(await collect(lines(body('a\r\n\r\nb\r', size)))).toEqual(['a', '', 'b']);
    }
  });
});

describe('serverSentEvents', () => {
  it('dispatches on a blank line, joins data lines, skips comments, defaults the type', async () => {
    const text =
      ': hello\n\nevent: revision\ndata: {"revision":3}\n\ndata: a\ndata: b\n\nevent: ping\ndata:{"revision":3}\n\nevent: cut\ndata: x';
    for (const size of [1, 5, 1000]) {
      expect(await collect(serverSentEvents(body(text, size)))).toEqual([
        { event: 'revision', data: '{"revision":3}' },
        { event: 'message', data: 'a\nb' },
        { event: 'ping', data: '{"revision":3}' },
      ]);
    }
    // CRLF line ends cut between `\r` and `\n` do not end an event early
    for (const size of [1, 2, 7]) {
      expect(await collect(serverSentEvents(body('data: a\r\ndata: b\r\n\r\n', size)))).toEqual([{ event: 'message', data: 'a\nb' }]);
    }
  });
});
