/** Text lines of a streamed body, decoded as UTF-8 (the last line need not end with a newline). */
export async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.search(/\r\n|\n|\r/)) >= 0) {
        // A `\r` ending the chunk may be the first half of `\r\n`: wait for the next one.
        if (cut === buffer.length - 1 && buffer[cut] === '\r') break;
        const line = buffer.slice(0, cut);
        buffer = buffer.slice(cut + (buffer.startsWith('\r\n', cut) ? 2 : 1));
        yield line;
      }
    }
    buffer += decoder.decode();
    // What is left holds no line break but perhaps a final `\r` that waited for a `\n`.
    if (buffer.endsWith('\r')) yield buffer.slice(0, -1);
    else if (buffer !== '') yield buffer;
  } finally {
    reader.releaseLock();
  }
}

/** One server-sent event. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/**
 * The events of a `text/event-stream` body (the WHATWG format: `event:`, `data:` lines joined by
 * newlines, comments ignored, a blank line dispatches; the type defaults to `message`).
 */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  let event = '';
  let data: string[] = [];
  for await (const line of lines(body)) {
    if (line === '') {
      if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
      event = '';
      data = [];
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
}
