import { describe, expect, it } from 'vitest';
import { decodeFrame, encodeFrame, frameHeader } from '../src/frame.js';

const decoder = new TextDecoder();
const text = (b: Uint8Array) => decoder.decode(b);

describe('frames', () => {
  it('carries items as raw JSON slices after a one-line header, never as JSON text inside JSON', () => {
    const items = ['{"a":1}', '{"b":"naïve ✓ \\n"}', new TextEncoder().encode('[1,2]'), '{}'];
    const frame = encodeFrame({ kind: 'test' }, items);
    const nl = frame.indexOf(0x0a);
    const sizes = items.map((i) => (typeof i === 'string' ? Buffer.byteLength(i) : i.byteLength));
    const ends = sizes.map((_, i) => sizes.slice(0, i + 1).reduce((a, b) => a + b, 0));
    expect(JSON.parse(frame.subarray(0, nl).toString('utf8'))).toEqual({ kind: 'test', ends });
    // The items follow the header verbatim.
    expect(frame.subarray(nl + 1).toString('utf8')).toBe('{"a":1}{"b":"naïve ✓ \\n"}[1,2]{}');
    const decoded = decodeFrame(frame);
    expect(decoded.header).toEqual({ kind: 'test', ends });
    expect(decoded.items.map(text)).toEqual(['{"a":1}', '{"b":"naïve ✓ \\n"}', '[1,2]', '{}']);
    // Views into the message, not copies.
    expect(decoded.items[0].buffer).toBe(frame.buffer);
  });

  it('reads a message without a newline as a header alone (an error envelope)', () => {
    const envelope = new TextEncoder().encode('{"ok":false,"error":{"code":"internal"}}');
    expect(frameHeader(envelope).header).toEqual({ ok: false, error: { code: 'internal' } });
  });

  it('refuses frames whose offsets do not fit their items', () => {
    const bad = (header: string, body: string) => new TextEncoder().encode(`${header}\n${body}`);
    expect(() => decodeFrame(bad('not json', ''))).toThrow(/header is not JSON/);
    expect(() => decodeFrame(bad('[1]', ''))).toThrow(/not an object/);
    expect(() => decodeFrame(bad('{}', ''))).toThrow(/no `ends`/);
    expect(() => decodeFrame(bad('{"ends":[3,2]}', 'abc'))).toThrow(/ends\[1\]/);
    expect(() => decodeFrame(bad('{"ends":[5]}', 'abc'))).toThrow(/ends\[0\]/);
    expect(() => decodeFrame(bad('{"ends":[2]}', 'abc'))).toThrow(/after the last item/);
    expect(() => decodeFrame(bad('{"ends":[1.5]}', 'abc'))).toThrow(/ends\[0\]/);
  });
});
