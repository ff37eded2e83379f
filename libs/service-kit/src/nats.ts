import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { ArbiterError } from '@arbiter/contracts';
import { natsServers } from './config.js';
import { redactCredentials } from './logger.js';

/**
 * How a service proves itself to NATS and protects the connection (the `NatsConfig` part's
 * security variables): its own user and password (deploy/nats/nats-server.conf gives each service
 * one, allowed only its subjects) or a `.creds` file for JWT-based servers, and TLS.
 */
export interface NatsSecurity {
  user?: string;
  password?: string;
  /** A NATS `.creds` file. */
  credsFile?: string;
  /** TLS: the CA that signed the server's certificate, and a client certificate for mutual TLS. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

/** How a connection notices a server that stopped answering (the `NatsConfig` part's `NATS_PING_INTERVAL_MS` and `NATS_CONNECT_TIMEOUT_MS`). */
export interface NatsTuning {
  /** Ping interval; the server counts as gone after {@link MAX_PINGS_OUT} unanswered pings. 10 s when absent. */
  pingIntervalMs?: number;
  /** Deadline of opening a connection to one server (nats.js waits 20 s by default). 3 s when absent. */
  connectTimeoutMs?: number;
}

/** Unanswered pings after which a connection is dropped and the client reconnects (to another server of a cluster). */
export const MAX_PINGS_OUT = 2;
const DEFAULT_PING_INTERVAL_MS = 10_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

/** The {@link NatsTuning} of a service configuration that composes `NatsConfig`. */
export function natsTuningOf(config: { NATS_PING_INTERVAL_MS?: number; NATS_CONNECT_TIMEOUT_MS?: number }): NatsTuning {
  return {
    ...(config.NATS_PING_INTERVAL_MS !== undefined ? { pingIntervalMs: config.NATS_PING_INTERVAL_MS } : {}),
    ...(config.NATS_CONNECT_TIMEOUT_MS !== undefined ? { connectTimeoutMs: config.NATS_CONNECT_TIMEOUT_MS } : {}),
  };
}

/** The {@link NatsSecurity} of a service configuration that composes `NatsConfig`. */
export function natsSecurityOf(config: {
  NATS_USER?: string;
  NATS_PASSWORD?: string;
  NATS_CREDS_FILE?: string;
  NATS_TLS?: boolean;
  NATS_TLS_CA_FILE?: string;
  NATS_TLS_CERT_FILE?: string;
  NATS_TLS_KEY_FILE?: string;
}): NatsSecurity {
  const tlsFiles = { caFile: config.NATS_TLS_CA_FILE, certFile: config.NATS_TLS_CERT_FILE, keyFile: config.NATS_TLS_KEY_FILE };
  const anyTls = config.NATS_TLS === true || Object.values(tlsFiles).some((f) => f !== undefined);
  return {
    ...(config.NATS_USER !== undefined ? { user: config.NATS_USER } : {}),
    ...(config.NATS_PASSWORD !== undefined ? { password: config.NATS_PASSWORD } : {}),
    ...(config.NATS_CREDS_FILE !== undefined ? { credsFile: config.NATS_CREDS_FILE } : {}),
    ...(anyTls ? { tls: Object.fromEntries(Object.entries(tlsFiles).filter(([, v]) => v !== undefined)) } : {}),
  };
}

/**
 * Connection options every connection of a service uses: every server of `url` (one address, or a
 * cluster's as a comma-separated list: the first connection tries each in turn, and a lost
 * connection moves to another), reconnect forever after the first success, pings that notice a
 * silent server, no async stack capture per request, and the service's credentials and TLS settings.
 */
export function natsConnectionOptions(url: string, name: string, security: NatsSecurity = {}, tuning: NatsTuning = {}): ConnectionOptions {
  return {
    servers: natsServers(url),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: tuning.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS,
    maxPingOut: MAX_PINGS_OUT,
    timeout: tuning.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    noAsyncTraces: true,
    ...(security.user !== undefined ? { user: security.user } : {}),
    ...(security.password !== undefined ? { pass: security.password } : {}),
    ...(security.credsFile !== undefined ? { authenticator: credsAuthenticator(readFileSync(security.credsFile)) } : {}),
    ...(security.tls !== undefined ? { tls: security.tls } : {}),
  };
}

/** Opens a NATS connection with {@link natsConnectionOptions}; a failure names the (redacted) addresses. */
export async function connectNats(
  url: string,
  name: string,
  security: NatsSecurity = {},
  tuning: NatsTuning = {},
): Promise<NatsConnection> {
  try {
    return await connect(natsConnectionOptions(url, name, security, tuning));
  } catch (err) {
    const shown = natsServers(url).map(redactCredentials).join(',');
    throw new ArbiterError('dependency_unavailable', `cannot connect to NATS at \`${shown}\``, undefined, { cause: err });
  }
}
