import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { Svcm, type Service } from '@nats-io/services';
import {
  ArbiterError,
  exceedsDepth,
  isArbiterError,
  MAX_JSON_DEPTH,
  pingSubject,
  type PingReply,
  type WireError,
} from '@arbiter/contracts';
import type { Logger } from 'pino';
import { z } from 'zod';
import { isDatabaseUnavailable } from '../db-faults.js';
import type { BusMetrics } from '../metrics.js';
import { REQUEST_ID_HEADER } from './headers.js';

/** The endpoint name of the readiness probe every service answers (`<queue group>._ping`). */
const READY_ENDPOINT = '_ready';

/** The serving half of the bus: framework services whose endpoints validate requests and always answer with an envelope. */

// INVARIANT: @nats-io/services (3.0.0-25, its latest) pins a pre-release copy of nats-core whose
// types differ nominally from the transport's; the runtime shapes are the same, so the casts are safe.
type SvcmConnection = ConstructorParameters<typeof Svcm>[0];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

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

/**
 * What a validated endpoint's handler returns to answer with bytes of its own making (a frame,
 * `frame.ts`) instead of an envelope around its value: sent as they are. Errors still answer with
 * the error envelope, so the caller's decoder tells the two apart (`decodeFrameReply`).
 */
export class ReplyBytes {
  constructor(readonly bytes: Uint8Array) {}
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

/** Serves {@link ServiceDef}s on one connection and tracks the handlers in flight. */
export class BusServer {
  private readonly services: Service[] = [];
  private readonly inflight = new Set<Promise<void>>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly subject: (name: string) => string,
    private readonly logger: Logger,
    private readonly metrics?: BusMetrics,
  ) {}

  async serve(def: ServiceDef): Promise<void> {
    const service = await new Svcm(this.nc as unknown as SvcmConnection).add({
      name: def.name,
      version: def.version,
      description: def.description,
      queue: def.name,
    });
    this.services.push(service);
    // `<queue group>._ping` last: a replica that answers it has subscribed every endpoint before it
    // (one connection's subscriptions reach the server in order), so a ping says the service serves.
    // The subject and its endpoint name are reserved: a service's own endpoint may not take either.
    const pingAt = pingSubject(def.name);
    for (const [endpointName, endpoint] of Object.entries(def.endpoints)) {
      if (endpointName === READY_ENDPOINT || endpoint.subject === pingAt) {
        throw new Error(
          `service ${def.name}: endpoint ${endpointName} (${endpoint.subject}) takes the readiness probe's reserved name or subject`,
        );
      }
    }
    const ping = defineEndpoint({
      subject: pingAt,
      request: z.unknown(),
      handler: async (): Promise<PingReply> => ({ service: def.name, version: def.version }),
    });
    for (const [endpointName, endpoint] of Object.entries({ ...def.endpoints, [READY_ENDPOINT]: ping })) {
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

  /** Stops the services (no new requests) and waits for the handlers in flight. */
  async stop(): Promise<void> {
    await Promise.allSettled(this.services.map((s) => s.stop()));
    await Promise.allSettled([...this.inflight]);
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
      if ('raw' in endpoint) envelope = await endpoint.handler(msg.data, ctx);
      else {
        const data = await endpoint.handler(parseRequest(endpoint.request, msg, name), ctx);
        envelope = data instanceof ReplyBytes ? data.bytes : { ok: true, data };
      }
    } catch (err) {
      envelope = { ok: false, error: toWire(err, ctx.logger) };
    }
    const replaced = respond(msg, envelope, ctx, this.nc.info?.max_payload);
    const outcome = replaced ?? (envelope instanceof Uint8Array || envelope.ok ? 'ok' : envelope.error.code);
    this.metrics?.observe(name, outcome, (performance.now() - started) / 1000);
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
