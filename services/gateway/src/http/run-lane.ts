import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import { MAX_JSON_DEPTH, RunRequest, runOptionsOf } from '@arbiter/contracts';
import { capabilityRefusal, rateLimitHeaders, trustProxyOption } from '@arbiter/key-auth';
import type { Caller, CallerAuthenticator } from '../caller.js';
import type { ExecutionAnswer, ExecutionClient } from '../clients/execution-client.js';
import { parseItemsBody, rawItemsOf } from './json-body.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/**
 * What the lane learnt of a request it handed to fastify (docs/design/run-lane.md): the outcome of
 * its key lookup (so the request is never looked up and counted twice), the body it read (replayed
 * to fastify's parser), its request id and, when it ran the evaluation, the answers.
 */
export interface LaneHandOver {
  readonly id: string;
  readonly auth: { caller: Caller } | { error: unknown };
  readonly body: Buffer;
  readonly answers?: Promise<ExecutionAnswer[]>;
}

const HANDED_OVER = Symbol('arbiter.runLane');

type LaneRequest = IncomingMessage & { [HANDED_OVER]?: LaneHandOver };

/** What the lane handed over with `raw`, if it took it first. */
export function handedOver(raw: IncomingMessage): LaneHandOver | undefined {
  return (raw as LaneRequest)[HANDED_OVER];
}

/** The lane's options. */
export interface RunLaneOptions {
  readonly authenticator: CallerAuthenticator;
  readonly execution: ExecutionClient;
  readonly bodyLimit: number;
  /** fastify's `trustProxy` setting as configured (`TRUST_PROXY`), for the client address. */
  readonly trustProxy: boolean | number | string[];
  /** Makes the request id of a request (the `x-request-id` it sent when safe, else a new one). */
  readonly requestIdOf: (req: IncomingMessage) => string;
  /** Counts an answered request in the HTTP metrics, as fastify's `onResponse` hook does. */
  readonly answered?: (method: string, route: string, status: number, seconds: number) => void;
  /** Called once per answered request (the access log's sampling). */
  readonly completed?: (id: string, status: number, ms: number) => void;
}

const JSON_ONLY = 'application/json';
const ANSWER_TYPE = 'application/json; charset=utf-8';

/** The client address as fastify's `request.ip` gives it under `trustProxy`. */
function addressFinder(trust: boolean | number | string[]): (req: IncomingMessage) => string | undefined {
  const option = trustProxyOption(trust);
  if (option === false) return (req) => req.socket.remoteAddress;
  const fn = typeof option === 'function' ? option : option === true ? () => true : proxyAddr.compile(option);
  return (req) => {
    const all = proxyAddr.all(req, fn);
    return all[all.length - 1];
  };
}

/**
 * The lane of `POST /run` (docs/design/run-lane.md): a request that is plainly a run — `POST /run`,
 * `content-type: application/json`, one `x-api-key`, a `content-length` within the body limit —
 * is read and answered here without fastify's per-request machinery, as long as every step
 * succeeds: the key lookup (the same one, counting the request), the `view` right, the rate limit,
 * the body's parse and schema and the evaluation's answer. At the first step that does not
 * succeed the request goes on to fastify with what the lane learnt ({@link LaneHandOver}), which
 * answers it as it answers every request: the same problem documents, headers and logs, the lookup
 * never repeated. Every other request goes to fastify untouched.
 */
export function installRunLane(app: FastifyInstance, opts: RunLaneOptions): void {
  const server: Server = app.server;
  const fastifyHandlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  const addressOf = addressFinder(opts.trustProxy);
  const toFastify = (req: IncomingMessage, res: ServerResponse): void => {
    for (const handler of fastifyHandlers) handler.call(server, req, res);
  };

  const handOver = (req: LaneRequest, res: ServerResponse, what: LaneHandOver): void => {
    req[HANDED_OVER] = what;
    toFastify(req, res);
  };

  const run = async (req: LaneRequest, res: ServerResponse, key: string, started: number): Promise<void> => {
    const id = opts.requestIdOf(req);
    const lookup = opts.authenticator.byApiKey(key, addressOf(req) ?? '').then(
      (caller) => ({ caller }),
      (error: unknown) => ({ error }),
    );
    const body = await bodyOf(req);
    if (body === undefined) return; // the client went away: nothing to answer (fastify would not either)
    const auth = await lookup;
    const stop = (answers?: Promise<ExecutionAnswer[]>) => handOver(req, res, { id, auth, body, ...(answers ? { answers } : {}) });
    if (!('caller' in auth)) return stop();
    const { principal, rate } = auth.caller;
    if (capabilityRefusal(principal, 'view') !== undefined || (rate !== null && rate.current > rate.max)) return stop();
    let request: RunRequest;
    let items: ReturnType<typeof rawItemsOf>;
    try {
      const parsed = parseItemsBody(body, MAX_JSON_DEPTH, { key: 'data', as: 'value' });
      const checked = RunRequest.safeParse(parsed.value);
      if (!checked.success) return stop();
      request = checked.data;
      items = rawItemsOf(parsed.rawItems, [request.data]);
    } catch {
      return stop();
    }
    const answers = opts.execution.run(principal, request.rule, items, runOptionsOf(id, request));
    let answer: ExecutionAnswer | undefined;
    try {
      [answer] = await answers;
    } catch {
      return stop(answers);
    }
    if (!(answer instanceof Uint8Array)) return stop(answers);
    res.writeHead(200, {
      [REQUEST_ID_HEADER]: id,
      ...(rate !== null ? rateLimitHeaders(rate) : {}),
      'content-type': ANSWER_TYPE,
      'content-length': answer.byteLength,
    });
    res.end(answer);
    const ms = performance.now() - started;
    opts.answered?.('POST', '/run', 200, ms / 1000);
    opts.completed?.(id, 200, ms);
  };

  server.removeAllListeners('request');
  server.on('request', (req: LaneRequest, res: ServerResponse) => {
    const key = req.headers['x-api-key'];
    const length = req.headers['content-length'];
    if (
      req.method !== 'POST' ||
      req.url !== '/run' ||
      req.headers['content-type'] !== JSON_ONLY ||
      typeof key !== 'string' ||
      key === '' ||
      length === undefined ||
      !(Number(length) > 0 && Number(length) <= opts.bodyLimit) ||
      req.headers['transfer-encoding'] !== undefined ||
      req.headers.expect !== undefined
    ) {
      toFastify(req, res);
      return;
    }
    const started = performance.now();
    run(req, res, key, started).catch((err: unknown) => {
      // A fault of the lane itself: fastify answers as for any request it could not serve.
      if (!res.headersSent && handedOver(req) === undefined) {
        handOver(req, res, { id: opts.requestIdOf(req), auth: { error: err }, body: Buffer.alloc(0) });
      }
    });
  });
}

/** The whole body of `req`, or undefined when the client went away before it arrived. */
function bodyOf(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.once('close', () => {
      if (!req.complete) resolve(undefined);
    });
  });
}

/**
 * fastify's side of the lane: a request the lane handed over is parsed from the body the lane
 * read (a stream of it in place of the request's, which the lane has drained).
 */
export function replayHandedOverBodies(app: FastifyInstance): void {
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const lane = handedOver(request.raw);
    if (lane === undefined) return done(null, payload);
    const replay = Readable.from([lane.body], { objectMode: false }) as Readable & { receivedEncodedLength?: number };
    replay.receivedEncodedLength = lane.body.byteLength;
    done(null, replay);
  });
}
