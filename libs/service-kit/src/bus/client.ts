import {
  headers as natsHeaders,
  ClosedConnectionError,
  DrainingConnectionError,
  type Msg,
  type NatsConnection,
} from '@nats-io/transport-node';
import { ServiceError } from '@nats-io/services';
import { ArbiterError, replyEnvelope } from '@arbiter/contracts';
import type { Logger } from 'pino';
import { unknown as zUnknown, type z } from 'zod';
import { RequestMiss, RequestMux } from '../request-mux.js';
import { decodeFrameReply, type DecodedFrame } from '../frame.js';
import { REQUEST_ID_HEADER } from './headers.js';

/** The calling half of the bus: requests with deadlines, reply envelopes turned back into values or {@link ArbiterError}s. */

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

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Options of {@link Bus.request}. */
export interface RequestOptions {
  /** Reply deadline; 5000 ms when absent. */
  timeoutMs?: number;
  /** Sent as {@link REQUEST_ID_HEADER}. */
  requestId?: string;
}

/** Sends requests on one connection and tracks whether it is up (requests fail at once while it is not). */
export class BusClient {
  private readonly requests: RequestMux;
  private isUp = true;

  constructor(
    readonly nc: NatsConnection,
    readonly prefix: string,
    private readonly logger: Logger,
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

  async requestFrame(name: string, payload: unknown, opts: RequestOptions = {}): Promise<DecodedFrame> {
    this.checkUp(name);
    const msg = await this.send(name, encoder.encode(encodeRequest(payload, name)), opts);
    throwServiceError(msg, name);
    return decodeFrameReply(msg.data, name);
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
