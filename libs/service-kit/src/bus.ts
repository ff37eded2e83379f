import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { z } from 'zod';
import { busMetrics } from './metrics.js';
import { connectNats, type NatsSecurity, type NatsTuning } from './nats.js';
import { BusClient, type RequestOptions } from './bus/client.js';
import { BusServer, type ServiceDef } from './bus/server.js';
import type { DecodedFrame } from './frame.js';

export { REQUEST_ID_HEADER } from './bus/headers.js';
export { BusClient, type RequestOptions } from './bus/client.js';
export {
  BusServer,
  defineEndpoint,
  ReplyBytes,
  type EndpointDef,
  type HandlerContext,
  type RawEndpointDef,
  type ServiceDef,
} from './bus/server.js';

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
   * Sends `payload` as JSON and decodes the reply as a frame (an endpoint answering
   * {@link ReplyBytes}): its header unchecked beyond `ends` (the endpoint's contract, checked by its
   * tests) and views of its items. Throws as {@link request} does; `internal` for a reply that is
   * not a frame.
   */
  requestFrame(name: string, payload: unknown, opts?: RequestOptions): Promise<DecodedFrame>;
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
  const client = new BusClient(nc, opts.prefix, logger);
  return new NatsBus(
    client,
    new BusServer(nc, (name) => client.subject(name), logger, opts.metrics ? busMetrics(opts.metrics) : undefined),
  );
}

/** A {@link Bus}: the {@link BusClient} and {@link BusServer} of one connection. */
class NatsBus implements Bus {
  private closing: Promise<void> | undefined;

  constructor(
    private readonly client: BusClient,
    private readonly server: BusServer,
  ) {}

  get nc(): NatsConnection {
    return this.client.nc;
  }

  get prefix(): string {
    return this.client.prefix;
  }

  subject(name: string): string {
    return this.client.subject(name);
  }

  request<T>(name: string, payload: unknown, reply: z.ZodType<T>, opts?: RequestOptions): Promise<T> {
    return this.client.request(name, payload, reply, opts);
  }

  requestRaw(name: string, body: Uint8Array, opts?: RequestOptions): Promise<Uint8Array> {
    return this.client.requestRaw(name, body, opts);
  }

  requestData(name: string, payload: unknown, opts?: RequestOptions): Promise<Uint8Array> {
    return this.client.requestData(name, payload, opts);
  }

  requestFrame(name: string, payload: unknown, opts?: RequestOptions): Promise<DecodedFrame> {
    return this.client.requestFrame(name, payload, opts);
  }

  serve(def: ServiceDef): Promise<void> {
    return this.server.serve(def);
  }

  connected(): boolean {
    return this.client.connected();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    await this.server.stop();
    if (!this.client.nc.isClosed()) await this.client.nc.drain();
  }
}
