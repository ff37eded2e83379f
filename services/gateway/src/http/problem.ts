import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ArbiterError, isArbiterError, PROBLEM_CONTENT_TYPE, problemOf, type ErrorCode, type ErrorReason } from '@arbiter/contracts';

export { PROBLEM_CONTENT_TYPE, problemOf } from '@arbiter/contracts';
import { isDatabaseUnavailable } from '@arbiter/service-kit';
import { RetryLaterError } from '../errors.js';
import { answeredWhileBodyArrives } from './slow-bodies.js';

/** `retry-after` of a 503 (a dependency down): long enough not to hammer it, short enough to recover soon. */
const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/**
 * Classifies anything thrown while handling a request as an {@link ArbiterError}: our own errors
 * pass through; fastify's parser, limit and schema errors get their catalogue code; anything
 * else is `internal` with a generic detail (the cause is logged, never shown).
 */
export function toArbiterError(err: unknown): ArbiterError {
  if (isArbiterError(err)) return err;
  if (hasZodFastifySchemaValidationErrors(err)) return validationError(err);
  if (isDatabaseUnavailable(err)) {
    return new ArbiterError('dependency_unavailable', 'the database is unavailable; retry later', undefined, { cause: err });
  }
  const fe = err as Partial<FastifyError>;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ArbiterError('payload_too_large', 'request body is larger than the limit', undefined, { cause: err });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ArbiterError('unsupported_media_type', 'request body must be `application/json`', undefined, { cause: err });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ArbiterError('bad_request', 'request body is not valid JSON', undefined, { cause: err });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ArbiterError('bad_request', 'request body is empty but the content type is `application/json`', undefined, { cause: err });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ArbiterError('bad_request', 'request body size does not match `content-length`', undefined, { cause: err });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ArbiterError('validation_failed', 'a path parameter is longer than 300 characters', [
        { code: 'too_long', message: 'longer than 300 characters', path: 'params' },
      ]);
    case 'FST_ERR_BAD_URL':
      return new ArbiterError('bad_request', 'the URL is not valid (a bad percent-encoding?)', undefined, { cause: err });
    default:
      break;
  }
  // fastify's JSON parser reports malformed bodies as a SyntaxError with status 400
  if (err instanceof SyntaxError && fe.statusCode === 400) {
    return new ArbiterError('bad_request', 'request body is not valid JSON', undefined, { cause: err });
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500 && fe.code?.startsWith('FST_')) {
    return new ArbiterError(fe.statusCode === 404 ? 'not_found' : 'bad_request', oneLine(fe.message ?? 'bad request'), undefined, {
      cause: err,
    });
  }
  return new ArbiterError('internal', 'internal error; the request id is logged with the cause', undefined, { cause: err });
}

function validationError(err: {
  validation: Array<{ instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }>;
  validationContext?: string;
}): ArbiterError {
  const where = err.validationContext ?? 'body';
  const reasons: ErrorReason[] = [];
  for (const v of err.validation) {
    const base = [where, ...v.instancePath.split('/').filter((p) => p !== '')].join('.');
    const unknownKeys = v.keyword === 'unrecognized_keys' && Array.isArray(v.params.keys) ? (v.params.keys as string[]) : [];
    if (unknownKeys.length > 0) {
      for (const k of unknownKeys) reasons.push({ code: 'unrecognized_key', message: 'unknown field', path: `${base}.${k}` });
    } else {
      // A refinement names its reason in `params.reason` (e.g. `too_deep`); zod calls them all `custom`.
      const custom = v.keyword === 'custom' ? (v.params.params as { reason?: unknown } | undefined)?.reason : undefined;
      reasons.push({ code: typeof custom === 'string' ? custom : v.keyword, message: oneLine(v.message ?? 'invalid value'), path: base });
    }
  }
  const first = reasons[0];
  const detail = first ? `request ${where} is invalid: \`${first.path}\`: ${first.message}` : `request ${where} is invalid`;
  return new ArbiterError('validation_failed', detail, reasons);
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Sends `err` as a problem document with its status (and logs it: 5xx as errors, with the cause). */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, thrown: unknown): FastifyReply {
  const err = toArbiterError(thrown);
  if (err.status >= 500) request.log.error({ err: thrown, code: err.code }, `request failed: ${err.code}`);
  else request.log.info({ code: err.code, status: err.status, detail: err.message }, 'request refused');
  if (err instanceof RetryLaterError) reply.header('retry-after', String(err.retryAfterSeconds));
  else if (err.status === 503) reply.header('retry-after', String(DEPENDENCY_RETRY_AFTER_SECONDS));
  return reply
    .status(err.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemOf(err, String(request.id)));
}

/** Makes every error and unknown route of `app` answer with a problem document. */
export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => sendProblem(request, reply, error));
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, new ArbiterError('not_found', `no route \`${request.method} ${request.url.split('?')[0]}\``)),
  );
}

/**
 * fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (malformed request line or
 * headers, a body shorter than its `content-length` followed by more bytes, headers too large) or
 * that did not arrive within `BODY_TIMEOUT_MS` (408) gets a problem document too, then the
 * connection is closed.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // The request was answered before its body arrived: a second answer would corrupt the first; only close.
  if (answeredWhileBodyArrives(socket)) {
    socket.destroy(err);
    return;
  }
  let status = 400;
  const code: ErrorCode = 'bad_request';
  let detail = 'the request is not valid HTTP (e.g. a body that does not match `content-length`, or a malformed header)';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    detail = 'the request was not received in time';
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    detail = 'the request headers are too large';
  }
  const body = JSON.stringify({ ...problemOf(new ArbiterError(code, detail), randomUUID()), status });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : status === 408 ? 'Request Timeout' : 'Request Header Fields Too Large'}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
