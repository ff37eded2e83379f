import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FrameItem } from '@arbiter/service-kit';

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body's text as it came (set by the JSON parser), for routes that forward it unchanged. */
    rawJson: string | null;
    /** The body's `items` array (or `data` object) as found by {@link installItemsBodyParser}: its bytes and the elements' ranges. */
    rawItems: RawItems | null;
  }
}

/** A batch body's bytes and the byte ranges of its `items` (see {@link scanJsonBody}). */
export interface RawItems {
  readonly bytes: Buffer;
  readonly elements: ScannedElements;
}
import { ArbiterError, checkUrl, MAX_JSON_DEPTH, parseJsonBody } from '@arbiter/contracts';

export { checkUrl, parseJsonBody } from '@arbiter/contracts';
import { scanJsonBody, type ScannedElements } from './json-items.js';

/** `application/json` or any `…+json` type, for the routes whose body is optional. */
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/**
 * The body of `request` as JSON text: as it came when the JSON parser read it (its value is the
 * validated body: the route's schema accepted it as it is), else written from the parsed body.
 */
export function rawBodyOf(request: FastifyRequest): string {
  return request.rawJson ?? JSON.stringify(request.body);
}

type Done = (err: Error | null, body?: unknown) => void;

function parseInto(text: string, maxDepth: number, done: Done): void {
  try {
    done(null, parseJsonBody(text, maxDepth));
  } catch (err) {
    done(err as Error, undefined);
  }
}

/** Replaces fastify's JSON parser with {@link parseJsonBody} (same body limit and content-length checks, done by fastify before it). */
export function installJsonBodyParser(app: FastifyInstance, maxDepth: number = MAX_JSON_DEPTH): void {
  app.removeContentTypeParser('application/json');
  app.decorateRequest('rawJson', null);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      const value = parseJsonBody(body as string, maxDepth);
      request.rawJson = body as string;
      done(null, value);
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      checkUrl(request.url);
      done();
    } catch (err) {
      done(err as Error);
    }
  });
}

/**
 * For an encapsulated plugin whose JSON bodies carry data forwarded as it came: an `items` array
 * forwarded item by item (the batch routes), or a `data` object (`POST /run`; `key` names the
 * member, scanned as one value). The body is read as bytes and scanned once ({@link scanJsonBody}), which gives its depth
 * (no walk of the parsed value) and each item's byte range, kept as `request.rawItems` so the items
 * travel as the bytes they came as. Otherwise the same checks as {@link installJsonBodyParser}.
 */
export function installItemsBodyParser(
  app: FastifyInstance,
  maxDepth: number = MAX_JSON_DEPTH,
  member: { key: string; as: 'elements' | 'value' } = { key: 'items', as: 'elements' },
): void {
  app.removeContentTypeParser('application/json');
  app.decorateRequest('rawItems', null);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      const parsed = parseItemsBody(body as Buffer, maxDepth, member);
      request.rawJson = parsed.text;
      request.rawItems = parsed.rawItems;
      done(null, parsed.value);
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

/** A body read by {@link parseItemsBody}: its text, its value and, where they can stand for the items, the items' bytes. */
export interface ParsedItemsBody {
  readonly text: string;
  readonly value: unknown;
  readonly rawItems: RawItems | null;
}

/**
 * Parses a JSON body whose `member` is forwarded as it came (see {@link installItemsBodyParser}):
 * scanned once for its depth and the member's byte ranges, then parsed with the edge's checks.
 * Throws as {@link parseJsonBody} does.
 */
export function parseItemsBody(bytes: Buffer, maxDepth: number, member: { key: string; as: 'elements' | 'value' }): ParsedItemsBody {
  const text = bytes.toString('utf8');
  const scan = scanJsonBody(bytes, member.key, member.as);
  const value = parseJsonBody(text, maxDepth, scan.depth);
  // Bytes that are not UTF-8 were read with U+FFFD in their place: such items are written again from the value.
  const rawItems = scan.elements !== null && isUtf8(bytes) ? { bytes, elements: scan.elements } : null;
  return { text, value, rawItems };
}

/**
 * The items of a batch body (or the `data` of a run, as `[data]`) as frame items: each one's bytes
 * as it came (a view, no copy), or its parsed value written again where its bytes cannot stand for
 * it (a lossy number, no scan, a count that disagrees with the parsed body).
 */
export function itemsOf(request: FastifyRequest, items: readonly unknown[]): FrameItem[] {
  return rawItemsOf(request.rawItems, items);
}

/** {@link itemsOf} of a body's scanned items `raw` and its parsed `items`. */
export function rawItemsOf(raw: RawItems | null, items: readonly unknown[]): FrameItem[] {
  if (raw === null || raw.elements.starts.length !== items.length) return items.map((data) => JSON.stringify(data));
  const { bytes, elements } = raw;
  const out: FrameItem[] = new Array<FrameItem>(items.length);
  for (let i = 0; i < items.length; i++) out[i] = bytes.subarray(elements.starts[i], elements.ends[i]);
  for (const i of elements.lossy) out[i] = JSON.stringify(items[i]);
  return out;
}

/**
 * For an encapsulated plugin whose POSTs take an optional body (the review and restore routes):
 * an empty body (or none) is `{}` whatever its `content-type` (clients commonly send
 * `content-type: application/json` on every call); a non-empty one must be JSON (any `…+json`
 * type, else 415) and is parsed by {@link parseJsonBody} with the same checks as every other body.
 */
export function acceptEmptyBodies(app: FastifyInstance, maxDepth: number = MAX_JSON_DEPTH): void {
  app.addHook('preValidation', async (request) => {
    request.body ??= {};
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, {});
    if (!JSON_TYPE.test(request.headers['content-type'] ?? '')) {
      return done(new ArbiterError('unsupported_media_type', 'request body must be `application/json` (or empty)'), undefined);
    }
    parseInto(text, maxDepth, done);
  });
}
