import {
  ArbiterError,
  ExecBatchRequest,
  ExecSubject,
  isArbiterError,
  MAX_JSON_DEPTH,
  textJsonDepth,
  type ExecBatchItem,
  type ExecBatchReply,
  type ExecBatchResult,
  type WireError,
} from '@arbiter/contracts';
import { defineEndpoint, type EndpointDef, type HandlerContext } from '@arbiter/service-kit';

/** Bytes kept free in a batch reply for its envelope. */
const ENVELOPE_BYTES = 1024;

/**
 * `exec.batch`: several requests of the evaluation subjects in one message. Each item is parsed
 * and handled exactly as its own subject's endpoint would (`items` maps a subject to it), all at
 * once, so the pool can hand them to one worker together; the reply carries each item's answer or
 * error in order, and one bad item (not JSON, too deep, refused, failed) never fails the others.
 * Answers that would take the reply past `maxReplyBytes` are replaced by `result_too_large`; the
 * caller sends those again on their own subjects.
 */
export function batchEndpoint(items: ReadonlyMap<string, EndpointDef>, maxReplyBytes: number): EndpointDef {
  return defineEndpoint({
    subject: ExecSubject.batch,
    request: ExecBatchRequest,
    handler: async (req, ctx): Promise<ExecBatchReply> =>
      fitReply(await Promise.all(req.items.map((item) => runItem(items, item, ctx))), maxReplyBytes),
  });
}

/**
 * The answer of a batch: results past what fits in `maxReplyBytes` become `result_too_large` (the
 * caller asks for those again). Room for every item's marker is kept from the start and given
 * back as an item fits, so the markers themselves never take the reply past the limit.
 */
export function fitReply(results: ExecBatchResult[], maxReplyBytes: number): ExecBatchReply {
  // Mostly everything fits: one serialization of the whole instead of one per result.
  if (Buffer.byteLength(JSON.stringify(results), 'utf8') <= maxReplyBytes - ENVELOPE_BYTES) return { results };
  const tooLarge = failed(new ArbiterError('result_too_large', 'this answer did not fit in the batch reply; send the request on its own'));
  // Each entry also takes a comma in the array.
  const markerBytes = Buffer.byteLength(JSON.stringify(tooLarge), 'utf8') + 1;
  let room = maxReplyBytes - ENVELOPE_BYTES - markerBytes * results.length;
  return {
    results: results.map((result) => {
      const bytes = Buffer.byteLength(JSON.stringify(result), 'utf8') + 1;
      if (bytes <= room + markerBytes) {
        room -= bytes - markerBytes;
        return result;
      }
      return tooLarge;
    }),
  };
}

/** One item's answer, or its error (an unexpected one is logged and answered `internal`). */
export async function settleItem(run: Promise<unknown>, ctx: HandlerContext, subject: string): Promise<ExecBatchResult> {
  try {
    return { ok: true, data: await run };
  } catch (err) {
    if (!isArbiterError(err)) ctx.logger.error({ err, subject }, 'batch item failed');
    return failed(isArbiterError(err) ? err : new ArbiterError('internal', 'internal error'));
  }
}

async function runItem(items: ReadonlyMap<string, EndpointDef>, item: ExecBatchItem, ctx: HandlerContext): Promise<ExecBatchResult> {
  const endpoint = items.get(item.subject);
  const run = (async () => {
    if (endpoint === undefined) throw new ArbiterError('bad_request', `\`${item.subject}\` cannot be batched`);
    return endpoint.handler(parseItem(endpoint, item), { ...ctx, subject: item.subject, requestId: item.requestId });
  })();
  return settleItem(run, ctx, item.subject);
}

/** Parses one item as the bus parses a request of its subject: depth first, then JSON, then the schema. */
function parseItem(endpoint: EndpointDef, item: ExecBatchItem): unknown {
  if (textJsonDepth(item.payload, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new ArbiterError('validation_failed', `request to \`${item.subject}\` is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let body: unknown;
  try {
    body = JSON.parse(item.payload);
  } catch (err) {
    throw new ArbiterError('bad_request', `request to \`${item.subject}\` is not JSON`, undefined, { cause: err });
  }
  const parsed = endpoint.request.safeParse(body);
  if (parsed.success) return parsed.data;
  const reasons = parsed.error.issues.map((i) => ({ code: i.code, message: i.message, path: i.path.join('.') }));
  throw new ArbiterError(
    'bad_request',
    `invalid request to \`${item.subject}\`: ${reasons.map((r) => `${r.path || '(root)'}: ${r.message}`).join('; ')}`,
    reasons,
  );
}

function failed(err: ArbiterError): { ok: false; error: WireError } {
  return { ok: false, error: err.toWire() };
}
