import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonDepth } from '@arbiter/contracts';
import { scanJsonBody } from '../src/http/json-items.js';

const bytesOf = (text: string) => Buffer.from(text, 'utf8');

/** The elements' texts as the scanner cut them. */
function texts(text: string): string[] | null {
  const bytes = bytesOf(text);
  const { elements } = scanJsonBody(bytes, 'items');
  if (elements === null) return null;
  return elements.starts.map((s, i) => bytes.subarray(s, elements.ends[i]).toString('utf8'));
}

describe('scanJsonBody', () => {
  it('cuts the items of a batch body as they were written', () => {
    expect(texts('{"rule":"x","items":[{"a":1},{"b":[2,3]}],"trace":false}')).toEqual(['{"a":1}', '{"b":[2,3]}']);
  });

  it('keeps whitespace inside an item and drops it around', () => {
    expect(texts('{ "items" : [ \n\t{ "a" : 1 } ,\r\n { } ] }')).toEqual(['{ "a" : 1 }', '{ }']);
  });

  it('answers no element for an empty array', () => {
    expect(texts('{"items":[]}')).toEqual([]);
    expect(texts('{"items":[ \n ]}')).toEqual([]);
  });

  it('is not misled by brackets, commas, quotes and keys inside strings', () => {
    const body = '{"rule":"items: [1, 2]","items":[{"s":"],[{\\"items\\":[}"},{"t":"\\\\"},"a,b"]}';
    expect(texts(body)).toEqual(['{"s":"],[{\\"items\\":[}"}', '{"t":"\\\\"}', '"a,b"']);
  });

  it('reads multi-byte UTF-8 and escapes as bytes', () => {
    const body = '{"items":[{"name":"Zoë 日本 🎉","u":"\\u00e9\\ud83c\\udf89"}]}';
    expect(texts(body)).toEqual(['{"name":"Zoë 日本 🎉","u":"\\u00e9\\ud83c\\udf89"}']);
  });

  it('takes the last of duplicate `items` keys, as JSON.parse does, and keys written with escapes', () => {
    expect(texts('{"items":[1],"items":[{"x":2}]}')).toEqual(['{"x":2}']);
    expect(texts('{"items":[1],"items":null}')).toBeNull();
    expect(texts('{"\\u0069tems":[true]}')).toEqual(['true']);
  });

  it('finds nothing when the body is not an object or has no such array', () => {
    expect(texts('[{"items":[1]}]')).toBeNull();
    expect(texts('{"a":{"items":[1]}}')).toBeNull();
    expect(texts('{"items":{"0":1}}')).toBeNull();
  });

  it('scanned as a value, cuts an object member (`data` of POST /run) as it was written, the last of duplicates', () => {
    const value = (text: string) => {
      const bytes = bytesOf(text);
      const { elements } = scanJsonBody(bytes, 'data', 'value');
      return elements === null ? null : elements.starts.map((s, i) => bytes.subarray(s, elements.ends[i]).toString('utf8'));
    };
    expect(value('{"rule":"x","data" : { "a" : [1, {"b":"}"}] } ,"trace":false}')).toEqual(['{ "a" : [1, {"b":"}"}] }']);
    expect(value('{"data":{}}')).toEqual(['{}']);
    expect(value('{"data":{"a":1},"data":{"b":2}}')).toEqual(['{"b":2}']);
    expect(value('{"data":[{"a":1}]}')).toBeNull();
    expect(value('{"data":null}')).toBeNull();
    const scan = scanJsonBody(bytesOf('{"data":{"a":{"b":[1e400]}}}'), 'data', 'value');
    expect(scan.elements?.depths).toEqual([3]);
    expect(scan.elements?.lossy).toEqual([0]);
  });

  it("measures the body's depth and each item's", () => {
    const scan = scanJsonBody(bytesOf('{"items":[1,{},{"a":[[{}]]},[]]}'), 'items');
    expect(scan.depth).toBe(6);
    expect(scan.elements?.depths).toEqual([0, 1, 4, 1]);
  });

  it('marks items whose numbers JSON.stringify would write otherwise (−0, overflow, exponents)', () => {
    const scan = scanJsonBody(
      bytesOf(`{"items":[{"a":1.5},{"a":-0},{"a":1e400},{"a":-0.0},{"a":-0.5},{"a":${'9'.repeat(400)}},[-12,0]]}`),
      'items',
    );
    expect(scan.elements?.lossy).toEqual([1, 2, 3, 5]);
  });

  it('agrees with JSON.parse on any JSON value', () => {
    const space = fc.constantFrom('', ' ', '\n', '\t', '\r\n ');
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 6 }), { maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), space, (items, other, ws) => {
        const body = `{${ws}"other"${ws}:${ws}${JSON.stringify(other)},${ws}"items":${ws}[${ws}${items
          .map((item) => JSON.stringify(item, null, ws === '' ? undefined : 1))
          .join(`${ws},${ws}`)}${ws}]${ws}}`;
        const parsed = JSON.parse(body) as { items: unknown[] };
        const bytes = bytesOf(body);
        const scan = scanJsonBody(bytes, 'items');
        expect(scan.depth).toBe(jsonDepth(parsed));
        const els = scan.elements!;
        expect(els.starts.length).toBe(parsed.items.length);
        parsed.items.forEach((item, i) => {
          const text = bytes.subarray(els.starts[i], els.ends[i]).toString('utf8');
          expect(text.trim()).toBe(text);
          expect(JSON.parse(text)).toStrictEqual(item);
          expect(els.depths[i]).toBe(jsonDepth(item));
          // An element not marked lossy means, parsed, what its parsed value written again means.
          if (!els.lossy.includes(i)) expect(JSON.parse(text)).toStrictEqual(JSON.parse(JSON.stringify(item)));
        });
      }),
      { numRuns: 300 },
    );
  });
});
