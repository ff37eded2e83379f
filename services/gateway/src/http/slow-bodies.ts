import type { ServerOptions } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Default of `BODY_TIMEOUT_MS`: the time a client has to send a whole request, headers and body. */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** After a refusal answered before its body arrived, the rest of the body may take this long (at most the body time-out). */
const REFUSED_BODY_GRACE_MS = 5_000;

/**
 * Sockets whose request was answered while its body was still arriving: a later time-out of that
 * request must not write a second answer after the first, only close the connection.
 */
const answeredBeforeBody = new WeakSet<Socket>();

/** Whether `socket`'s current request has been answered already (see {@link closeAfterUnfinishedBodies}). */
export function answeredWhileBodyArrives(socket: Socket): boolean {
  return answeredBeforeBody.has(socket);
}

/**
 * fastify's options that bound how long a request may take to arrive, by Node's own HTTP server:
 * the whole request (headers and body) within `timeoutMs` (`requestTimeout`; fastify's default, 0,
 * would let a body shorter than its `content-length` hold the connection for ever), the headers
 * within the same time (Node checks the request deadline only when the headers deadline is not
 * longer), and the check that finds late requests run often enough that one is closed soon after
 * its deadline (Node's default looks every 30 s). A late request is answered 408 by the client
 * error handler, then its connection is closed.
 */
export function requestDeadlines(timeoutMs: number): { requestTimeout: number; http: ServerOptions } {
  return {
    requestTimeout: timeoutMs,
    http: {
      headersTimeout: timeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeoutMs / 10))),
    },
  };
}

/**
 * Closes the connection of a request answered before its body arrived (a 401, 403, 413, 415 or
 * 429 refused at the edge, or any answer that did not need the body) when the rest of the body
 * does not follow within a short grace (at most `timeoutMs`). Node reads and drops the rest of
 * such a body so the connection can serve the next request; a client that sends it slowly, or
 * never, would hold the connection until the request deadline, or for ever once answered. A
 * client that sends its whole body at once keeps its connection, and reads the answer either way.
 */
export function closeAfterUnfinishedBodies(app: FastifyInstance, timeoutMs: number): void {
  const graceMs = Math.min(REFUSED_BODY_GRACE_MS, timeoutMs);
  app.addHook('onResponse', (request, _reply, done) => {
    const req = request.raw;
    const socket: unknown = req.socket;
    // Only connections of the HTTP server (requests made with `inject` have a stand-in socket).
    if (req.complete || !(socket instanceof Socket) || socket.destroyed) return done();
    answeredBeforeBody.add(socket);
    const timer = setTimeout(() => {
      request.log.info({ graceMs }, 'connection closed: the body of an answered request did not arrive in time');
      socket.destroy();
    }, graceMs);
    timer.unref();
    const finished = () => {
      clearTimeout(timer);
      answeredBeforeBody.delete(socket);
      req.off('end', finished);
      socket.off('close', finished);
    };
    req.once('end', finished);
    socket.once('close', finished);
    done();
  });
}
