import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

// The request deadlines every HTTP door sets (`BODY_TIMEOUT_MS`) are in @arbiter/key-auth.
export { DEFAULT_BODY_TIMEOUT_MS, requestDeadlines } from '@arbiter/key-auth';

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
