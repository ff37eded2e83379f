import { ArbiterError, type WireError } from '@arbiter/contracts';

/**
 * The framing of messages that carry many items (`exec.eval` requests and replies): one header line
 * of JSON, a newline, then the items' raw JSON texts back to back. The header's `ends[i]` is the
 * byte offset (from the first item) where item `i` ends. Items are never JSON text inside JSON: a
 * receiver that only forwards an item hands its bytes on without decoding them, and one that needs
 * it decodes exactly its bytes, once.
 *
 * INVARIANT: `JSON.stringify` never writes a raw newline (newlines in strings are escaped), so the
 * first `\n` of a frame ends its header.
 */

const NEWLINE = 0x0a;

/** An item of a frame being built: JSON text, or its UTF-8 bytes. */
export type FrameItem = string | Uint8Array;

/**
 * Encodes `header` plus `ends` (computed here) and the items. One pass to size the items, one
 * write of each: strings are encoded straight into the frame. `rawFields` are header fields whose
 * values are JSON texts already (built by the database, say): written as they are, never parsed.
 */
export function encodeFrame(header: Record<string, unknown>, items: readonly FrameItem[], rawFields?: Record<string, string>): Buffer {
  const ends = new Array<number>(items.length);
  let offset = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    offset += typeof item === 'string' ? Buffer.byteLength(item, 'utf8') : item.byteLength;
    ends[i] = offset;
  }
  let head = JSON.stringify({ ...header, ends });
  if (rawFields !== undefined) {
    const raw = Object.entries(rawFields).map(([name, json]) => `${JSON.stringify(name)}:${json}`);
    if (raw.length > 0) head = `${head.slice(0, -1)},${raw.join(',')}}`;
  }
  const headBytes = Buffer.byteLength(head, 'utf8');
  const out = Buffer.allocUnsafe(headBytes + 1 + offset);
  out.write(head, 0, 'utf8');
  out[headBytes] = NEWLINE;
  let at = headBytes + 1;
  for (const item of items) {
    if (typeof item === 'string') at += out.write(item, at, 'utf8');
    else {
      out.set(item, at);
      at += item.byteLength;
    }
  }
  return out;
}

/** A decoded frame: its header (not validated beyond `ends`) and a view of each item's bytes. */
export interface DecodedFrame {
  header: Record<string, unknown>;
  /** Item `i`'s bytes: views into the message, never copies. */
  items: Uint8Array[];
}

/** The header line of `bytes` parsed as JSON (a frame's, or a whole message without a newline, such as an error envelope). */
export function frameHeader(bytes: Uint8Array): { header: unknown; bodyStart: number } {
  const nl = bytes.indexOf(NEWLINE);
  const end = nl < 0 ? bytes.byteLength : nl;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, end).toString('utf8');
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (err) {
    throw new ArbiterError('bad_request', 'malformed frame: the header is not JSON', undefined, { cause: err });
  }
  return { header, bodyStart: nl < 0 ? bytes.byteLength : nl + 1 };
}

/** Decodes a frame; `bad_request` when its header is not a JSON object whose `ends` fit the items exactly. */
export function decodeFrame(bytes: Uint8Array): DecodedFrame {
  const { header, bodyStart } = frameHeader(bytes);
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new ArbiterError('bad_request', 'malformed frame: the header is not an object');
  }
  return itemsOf(header as Record<string, unknown>, bytes, bodyStart);
}

/**
 * Decodes a frame a service answered (a handler's {@link ReplyBytes}): the remote error when the
 * reply is an error envelope, `internal` when it is not a frame.
 */
export function decodeFrameReply(bytes: Uint8Array, name: string): DecodedFrame {
  const { header, bodyStart } = frameHeader(bytes);
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new ArbiterError('internal', `malformed reply from \`${name}\``);
  }
  const h = header as { ok?: unknown; error?: WireError };
  if (h.ok === false && h.error !== undefined) throw ArbiterError.fromWire(h.error);
  try {
    return itemsOf(header as Record<string, unknown>, bytes, bodyStart);
  } catch (err) {
    throw new ArbiterError('internal', `malformed reply from \`${name}\``, undefined, { cause: err });
  }
}

function itemsOf(header: Record<string, unknown>, bytes: Uint8Array, bodyStart: number): DecodedFrame {
  const ends = (header as { ends?: unknown }).ends;
  if (!Array.isArray(ends)) throw new ArbiterError('bad_request', 'malformed frame: the header has no `ends`');
  const bodyLength = bytes.byteLength - bodyStart;
  const items = new Array<Uint8Array>(ends.length);
  let from = 0;
  for (let i = 0; i < ends.length; i++) {
    const to: unknown = ends[i];
    if (typeof to !== 'number' || !Number.isInteger(to) || to < from || to > bodyLength) {
      throw new ArbiterError('bad_request', `malformed frame: \`ends[${i}]\` does not fit the items`);
    }
    items[i] = bytes.subarray(bodyStart + from, bodyStart + to);
    from = to;
  }
  if (from !== bodyLength) throw new ArbiterError('bad_request', 'malformed frame: bytes after the last item');
  return { header, items };
}
