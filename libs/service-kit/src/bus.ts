import {
  headers as natsHeaders,
  ClosedConnectionError,
  DrainingConnectionError,
  type Msg,
  type NatsConnection,
} from '@nats-io/transport-node';
import { Svcm, ServiceError, type Service } from '@nats-io/services';
import { ArbiterError, exceedsDepth, isArbiterError, MAX_JSON_DEPTH, replyEnvelope, type WireError } from '@arbiter/contracts';
import type { Logger } from 'pino';
import { unknown as zUnknown, type z } from 'zod';
import { isDatabaseUnavailable } from './db-faults.js';
import type { Registry } from 'prom-client';
import { busMetrics, type BusMetrics } from './metrics.js';
import { connectNats, type NatsSecurity, type NatsTuning } from './nats.js';
import { RequestMiss, RequestMux } from './request-mux.js';

/** NATS header carrying the caller's request id, so a request can be followed across services. */
export const REQUEST_ID_HEADER = 'Arbiter-Request-Id';

const DEFAULT_TIMEOUT_MS = 5000;

/** Envelope schemas built once per reply schema: building one per request made zod recompile it every time. */
type Envelope = ReturnType<typeof replyEnvelope<z.ZodType>>;
const envelopes = new WeakMap<z.ZodType, Envelope>();
function envelopeOf(reply: z.ZodType): Envelope {
  let schema = envelopes.get(reply);
  if (!schema) {
    schema = replyEnvelope(reply);
    envelopes.set(reply, schema);
  }
  return schema;
}

// INVARIANT: @nats-io/services (3.0.0-25, its latest) pins a pre-release copy of nats-core whose
// types differ nominally from the transport's; the runtime shapes are the same, so the casts are safe.
type SvcmConnection = ConstructorParameters<typeof Svcm>[0];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Options of {@link Bus.request}. */
export interface RequestOptions {
  /** Reply deadline; 5000 ms when absent. */
  timeoutMs?: number;
  /** Sent as {@link REQUEST_ID_HEADER}. */
  requestId?: string;
}

/** What a handler learns about the message besides its validated body. */
export interface HandlerContext {
  subject: string;
  requestId?: string;
  /** The bus logger, bound to the subject and request id. */
  logger: Logger;
}

/** One request/reply endpoint: its subject (relative to the prefix), request schema and handler. */
export interface EndpointDef<S extends z.ZodType = z.ZodType> {
  subject: string;
  request: S;
  // A method, so its parameter is bivariant: an endpoint of any request schema fits `EndpointDef`.
  handler(req: z.infer<S>, ctx: HandlerContext): Promise<unknown>;
}

/**
 * An endpoint of bytes (e.g. a frame, `frame.ts`): its handler gets the message body as it came and
 * returns the reply body. A throw is answered with the usual error envelope, so a caller sees an
 * envelope (whole message failed) or the handler's bytes.
 */
export interface RawEndpointDef {
  subject: string;
  raw: true;
  handler(data: Uint8Array, ctx: HandlerContext): Promise<Uint8Array>;
}

/** Types a handler's request from its schema; returns `def` unchanged. */
export function defineEndpoint<S extends z.ZodType>(def: EndpointDef<S>): EndpointDef<S> {
  return def;
}

/** A framework service: one queue group (its name) shared by its replicas. */
export interface ServiceDef {
  name: string;
  version: string;
  description?: string;
  /** Keyed by endpoint name (a subject token such as `run`). */
  endpoints: Record<string, EndpointDef | RawEndpointDef>;
}

/** The NATS connection of one service process, with prefixed subjects and JSON envelopes. */
export interface Bus {
  readonly nc: NatsConnection;
  readonly prefix: string;
  /** `'exec.run'` → `${prefix}.exec.run`. */
  subject(name: string): string;
  /**
   * Sends `payload` as JSON and returns the reply's `data`, validated by `reply`. Throws
   * {@link ArbiterError}: `dependency_unavailable` when nobody listens, `timeout` when nobody answers
   * in time, `payload_too_large` above the server's max payload, the remote error for an error envelope.
   */
  request<T>(name: string, payload: unknown, reply: z.ZodType<T>, opts?: RequestOptions): Promise<T>;
  /**
   * Sends `body` as it is and returns the reply body as it came (for {@link RawEndpointDef}s): the
   * caller decodes it. Throws as {@link request} does, except for the reply's contents.
   */
  requestRaw(name: string, body: Uint8Array, opts?: RequestOptions): Promise<Uint8Array>;
  /**
   * Sends `payload` as JSON and returns the reply's `data` as raw JSON, without decoding it (for a
   * caller that only forwards it: its shape is the endpoint's contract, checked by its tests).
   * Throws as {@link request} does.
   */
  requestData(name: string, payload: unknown, opts?: RequestOptions): Promise<Uint8Array>;
  /**
   * Starts a `@nats-io/services` service whose endpoints validate requests with zod and always reply
   * with an envelope: `bad_request` for a bad body, the thrown {@link ArbiterError}, or `internal`
   * (logged, details hidden) for anything else. Resolves once the server has the subscriptions.
   */
  serve(def: ServiceDef): Promise<void>;
  /** True while the connection is up (false while reconnecting or after close). */
  connected(): boolean;
  /** Stops the services (no new requests), waits for in-flight handlers, then drains the connection. */
  close(): Promise<void>;
}

/** Connects to NATS; after the first connection succeeds, it reconnects forever. */
export async function connectBus(opts: {
  url: string;
  prefix: string;
  name: string;
  logger: Logger;
  security?: NatsSecurity;
  tuning?: NatsTuning;
  /** Where the requests this bus serves are counted and timed (`arbiter_bus_*`). */
  metrics?: Registry;
}): Promise<Bus> {
  const logger = opts.logger.child({ component: 'bus' });
  const nc = await connectNats(opts.url, opts.name, opts.security, opts.tuning);
  return new NatsBus(nc, opts.prefix, logger, opts.metrics ? busMetrics(opts.metrics) : undefined);
}

class NatsBus implements Bus {
  private readonly services: Service[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private readonly requests: RequestMux;
  private isUp = true;
  private closing: Promise<void> | undefined;

  constructor(
    readonly nc: NatsConnection,
    readonly prefix: string,
    private readonly logger: Logger,
    private readonly metrics?: BusMetrics,
  ) {
    this.requests = new RequestMux(nc);
    void this.watchStatus();
  }

  subject(name: string): string {
    return `${this.prefix}.${name}`;
  }

  connected(): boolean {
    return this.isUp && !this.nc.isClosed();
  }

  async request<T>(name: string, payload: unknown, reply: z.ZodType<T>, opts: RequestOptions = {}): Promise<T> {
    this.checkUp(name);
    const msg = await this.send(name, encoder.encode(encodeRequest(payload, name)), opts);
    return decodeReply(msg, name, reply);
  }

  async requestRaw(name: string, body: Uint8Array, opts: RequestOptions = {}): Promise<Uint8Array> {
    this.checkUp(name);
    const msg = await this.send(name, body, opts);
    throwServiceError(msg, name);
    return msg.data;
  }

  async requestData(name: string, payload: unknown, opts: RequestOptions = {}): Promise<Uint8Array> {
    this.checkUp(name);
    const msg = await this.send(name, encoder.encode(encodeRequest(payload, name)), opts);
    throwServiceError(msg, name);
    return dataOf(msg.data, name);
  }

  /** While the connection is known to be down nats.js would buffer the message and the caller would wait its whole deadline: fail at once (503). */
  private checkUp(name: string): void {
    if (this.nc.isClosed()) throw new ArbiterError('dependency_unavailable', `the bus is closed: cannot send \`${name}\``);
    if (!this.isUp) throw new ArbiterError('dependency_unavailable', `the bus is disconnected: cannot send \`${name}\``);
  }

  private async send(name: string, body: Uint8Array, opts: RequestOptions): Promise<Msg> {
    const subject = this.subject(name);
    const maxPayload = this.nc.info?.max_payload;
    if (maxPayload !== undefined && body.length > maxPayload) {
      throw new ArbiterError('payload_too_large', `request to \`${name}\` is ${body.length} bytes: the bus limit is ${maxPayload} bytes`);
    }
    const headers = opts.requestId ? natsHeaders() : undefined;
    if (opts.requestId) headers?.set(REQUEST_ID_HEADER, opts.requestId);
    try {
      return await this.requests.request(subject, body, {
        timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        ...(headers ? { headers } : {}),
      });
    } catch (err) {
      throw requestFailure(err, name);
    }
  }

  async serve(def: ServiceDef): Promise<void> {
    const service = await new Svcm(this.nc as unknown as SvcmConnection).add({
      name: def.name,
      version: def.version,
      description: def.description,
      queue: def.name,
    });
    this.services.push(service);
    for (const [endpointName, endpoint] of Object.entries(def.endpoints)) {
      const subject = this.subject(endpoint.subject);
      service.addEndpoint(endpointName, {
        subject,
        handler: (err, msg) => {
          if (err) {
            this.logger.error({ err, subject }, 'endpoint subscription failed');
            return;
          }
          this.track(this.handle(endpoint, endpoint.subject, msg as unknown as Msg));
        },
      });
    }
    await this.nc.flush();
    this.logger.info({ serviceName: def.name, subjects: Object.values(def.endpoints).map((e) => this.subject(e.subject)) }, 'serving');
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    await Promise.allSettled(this.services.map((s) => s.stop()));
    await Promise.allSettled([...this.inflight]);
    if (!this.nc.isClosed()) await this.nc.drain();
  }

  private track(p: Promise<void>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  private async handle(endpoint: EndpointDef | RawEndpointDef, name: string, msg: Msg): Promise<void> {
    const requestId = msg.headers?.get(REQUEST_ID_HEADER) || undefined;
    // The child logger is made only when something logs: most requests never do.
    let child: Logger | undefined;
    const base = this.logger;
    const ctx: HandlerContext = {
      subject: name,
      requestId,
      get logger() {
        child ??= base.child({ subject: name, ...(requestId ? { requestId } : {}) });
        return child;
      },
    };
    const started = performance.now();
    let envelope: { ok: true; data: unknown } | { ok: false; error: WireError } | Uint8Array;
    try {
      envelope =
        'raw' in endpoint
          ? await endpoint.handler(msg.data, ctx)
          : { ok: true, data: await endpoint.handler(parseRequest(endpoint.request, msg, name), ctx) };
    } catch (err) {
      envelope = { ok: false, error: toWire(err, ctx.logger) };
    }
    const replaced = respond(msg, envelope, ctx, this.nc.info?.max_payload);
    const outcome = replaced ?? (envelope instanceof Uint8Array || envelope.ok ? 'ok' : envelope.error.code);
    this.metrics?.observe(name, outcome, (performance.now() - started) / 1000);
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect') {
        this.isUp = false;
        this.requests.failAll(new RequestMiss('disconnected'));
        this.logger.warn({ server: s.server }, 'NATS disconnected');
      } else if (s.type === 'reconnect') {
        this.isUp = true;
        this.logger.info({ server: s.server }, 'NATS reconnected');
      } else if (s.type === 'error') {
        this.logger.error({ err: s.error }, 'NATS error');
      }
    }
    this.isUp = false;
    this.requests.failAll(new RequestMiss('closed'));
  }
}

/** JSON of a request; a value too deep for `JSON.stringify`'s recursion is the caller's `validation_failed`, not a crash. */
function encodeRequest(payload: unknown, name: string): string {
  try {
    return JSON.stringify(payload);
  } catch (err) {
    if (err instanceof RangeError) {
      throw new ArbiterError('validation_failed', `request to \`${name}\` is nested too deeply to send`, undefined, { cause: err });
    }
    throw err;
  }
}

function parseRequest(schema: z.ZodType, msg: Msg, name: string): unknown {
  // One decode of the bytes; depth first, on the text: neither zod nor a handler may recurse over a
  // value deeper than any request may be.
  const text = decoder.decode(msg.data);
  if (exceedsDepth(text, MAX_JSON_DEPTH)) {
    throw new ArbiterError('validation_failed', `request to \`${name}\` is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ArbiterError('bad_request', `request to \`${name}\` is not JSON`, undefined, { cause: err });
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const reasons = parsed.error.issues.map((i) => ({ code: i.code, message: i.message, path: i.path.join('.') }));
  throw new ArbiterError(
    'bad_request',
    `invalid request to \`${name}\`: ${reasons.map((r) => `${r.path || '(root)'}: ${r.message}`).join('; ')}`,
    reasons,
    {
      cause: parsed.error,
    },
  );
}

function toWire(err: unknown, logger: Logger): WireError {
  if (isArbiterError(err)) {
    if (err.status >= 500) logger.warn({ err }, 'request failed');
    return err.toWire();
  }
  if (isDatabaseUnavailable(err)) {
    logger.warn({ err }, 'request failed: the database is unavailable');
    return new ArbiterError('dependency_unavailable', 'the database is unavailable; retry later').toWire();
  }
  logger.error({ err }, 'handler failed');
  return new ArbiterError('internal', 'internal error').toWire();
}

/** Sends the envelope; returns the error code sent instead when it could not be (too large, or failed). */
function respond(
  msg: Msg,
  envelope: unknown,
  ctx: HandlerContext,
  maxPayload: number | undefined,
): 'result_too_large' | 'internal' | undefined {
  try {
    const body = envelope instanceof Uint8Array ? envelope : encoder.encode(JSON.stringify(envelope));
    if (maxPayload !== undefined && body.length > maxPayload) {
      ctx.logger.warn({ bytes: body.length, maxPayload }, 'reply larger than the bus limit');
      const error = new ArbiterError(
        'result_too_large',
        `the result of \`${ctx.subject}\` is ${body.length} bytes and the bus limit is ${maxPayload} bytes: ask for less`,
      );
      msg.respond(JSON.stringify({ ok: false, error: error.toWire() }));
      return 'result_too_large';
    }
    msg.respond(body);
    return undefined;
  } catch (err) {
    ctx.logger.error({ err }, 'reply could not be sent');
    msg.respond(JSON.stringify({ ok: false, error: new ArbiterError('internal', 'reply could not be sent').toWire() }));
    return 'internal';
  }
}

/** A reply the services framework itself answered with an error header (e.g. a handler it could not run). */
function throwServiceError(msg: Msg, name: string): void {
  if (msg.headers === undefined) return;
  const serviceError = ServiceError.toServiceError(msg as unknown as Parameters<typeof ServiceError.toServiceError>[0]);
  if (serviceError) {
    throw new ArbiterError('internal', `\`${name}\` failed: ${serviceError.message}`, undefined, { cause: serviceError });
  }
}

function decodeReply<T>(msg: Msg, name: string, reply: z.ZodType<T>): T {
  throwServiceError(msg, name);
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(msg.data));
  } catch (err) {
    throw new ArbiterError('internal', `malformed reply from \`${name}\``, undefined, { cause: err });
  }
  const parsed = envelopeOf(reply).safeParse(body);
  if (!parsed.success) {
    throw new ArbiterError('internal', `malformed reply from \`${name}\``, undefined, { cause: parsed.error });
  }
  if (!parsed.data.ok) throw ArbiterError.fromWire(parsed.data.error);
  return parsed.data.data as T;
}

const OK_PREFIX = encoder.encode('{"ok":true,"data":');

/**
 * The `data` of a reply envelope as raw JSON. `respond` writes an answer as `JSON.stringify({ok:
 * true, data})`, which is always the prefix above, the data, and `}`: the data is sliced out, not
 * decoded. Anything else (an error envelope) is decoded and thrown.
 */
function dataOf(body: Uint8Array, name: string): Uint8Array {
  if (body.byteLength > OK_PREFIX.byteLength && body[body.byteLength - 1] === 0x7d && OK_PREFIX.every((b, i) => body[i] === b)) {
    return body.subarray(OK_PREFIX.byteLength, body.byteLength - 1);
  }
  let envelope: unknown;
  try {
    envelope = JSON.parse(decoder.decode(body));
  } catch (err) {
    throw new ArbiterError('internal', `malformed reply from \`${name}\``, undefined, { cause: err });
  }
  const parsed = WireEnvelope.safeParse(envelope);
  if (parsed.success && !parsed.data.ok) throw ArbiterError.fromWire(parsed.data.error);
  throw new ArbiterError('internal', `malformed reply from \`${name}\``);
}

const WireEnvelope = replyEnvelope(zUnknown());

function requestFailure(err: unknown, name: string): ArbiterError {
  if (err instanceof RequestMiss) {
    switch (err.reason) {
      case 'no_responders':
        return new ArbiterError('dependency_unavailable', `no service answers \`${name}\``, undefined, { cause: err });
      case 'timeout':
        return new ArbiterError('timeout', `\`${name}\` did not answer in time`, undefined, { cause: err });
      case 'disconnected':
      case 'closed':
        return new ArbiterError('dependency_unavailable', `the bus connection was lost before \`${name}\` answered`, undefined, {
          cause: err,
        });
    }
  }
  if (hasCause(err, (e) => e instanceof ClosedConnectionError || e instanceof DrainingConnectionError)) {
    return new ArbiterError('dependency_unavailable', `the bus is closed: cannot send \`${name}\``, undefined, { cause: err });
  }
  return new ArbiterError('internal', `\`${name}\` request failed`, undefined, { cause: err });
}

function hasCause(err: unknown, test: (e: unknown) => boolean): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if (test(e)) return true;
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}
