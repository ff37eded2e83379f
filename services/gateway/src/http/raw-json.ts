import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { ArbiterError, type ProblemDetails } from '@arbiter/contracts';
import type { ExecutionAnswer } from '../clients/execution-client.js';
import { executionError } from '../clients/execution-retry.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A view of `bytes` as a Buffer (no copy). */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Sends `body`, raw JSON from the execution service, as the 200 answer: no parse, no schema, no
 * stringify on the way (the body is the contract's shape, checked by the execution service's tests).
 */
export function sendJson(reply: FastifyReply, body: Uint8Array): FastifyReply {
  return reply.type(JSON_TYPE).send(bufferOf(body));
}

/** Sends a single evaluation's answer, or throws its error (the per-caller limit as a 429 with `retry-after`). */
export function sendAnswer(reply: FastifyReply, answer: ExecutionAnswer | undefined): FastifyReply {
  if (answer === undefined) throw new ArbiterError('internal', 'the evaluation gave no answer');
  if (answer instanceof ArbiterError) throw executionError(answer);
  return sendJson(reply, answer);
}

const OPEN = Buffer.from('{"results":[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

/** Above this many bytes a batch answer is streamed from its parts rather than copied into one buffer. */
const STREAM_ABOVE_BYTES = 1024 * 1024;

/**
 * Sends `{"results":[…]}` made of answers' raw JSON and problem objects, in order, without decoding
 * the answers. A large answer (long traces of many items) is written part by part, never copied
 * into one buffer: that copy of tens of megabytes held the event loop and the heap.
 */
export function sendResults(reply: FastifyReply, results: ReadonlyArray<Uint8Array | ProblemDetails>): FastifyReply {
  const parts: Buffer[] = [OPEN];
  let bytes = OPEN.byteLength + CLOSE.byteLength;
  results.forEach((r, i) => {
    if (i > 0) parts.push(COMMA);
    const part = r instanceof Uint8Array ? bufferOf(r) : Buffer.from(JSON.stringify(r));
    parts.push(part);
    bytes += part.byteLength + 1;
  });
  parts.push(CLOSE);
  reply.type(JSON_TYPE);
  return bytes > STREAM_ABOVE_BYTES ? reply.send(Readable.from(parts)) : reply.send(Buffer.concat(parts));
}
