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
 * connection moves to another), reconnect forever after the first success, no async stack capture
 * per request, and the service's credentials and TLS settings.
 */
export function natsConnectionOptions(url: string, name: string, security: NatsSecurity = {}): ConnectionOptions {
  return {
    servers: natsServers(url),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    noAsyncTraces: true,
    ...(security.user !== undefined ? { user: security.user } : {}),
    ...(security.password !== undefined ? { pass: security.password } : {}),
    ...(security.credsFile !== undefined ? { authenticator: credsAuthenticator(readFileSync(security.credsFile)) } : {}),
    ...(security.tls !== undefined ? { tls: security.tls } : {}),
  };
}

/** Opens a NATS connection with {@link natsConnectionOptions}; a failure names the (redacted) addresses. */
export async function connectNats(url: string, name: string, security: NatsSecurity = {}): Promise<NatsConnection> {
  try {
    return await connect(natsConnectionOptions(url, name, security));
  } catch (err) {
    const shown = natsServers(url).map(redactCredentials).join(',');
    throw new ArbiterError('dependency_unavailable', `cannot connect to NATS at \`${shown}\``, undefined, { cause: err });
  }
}
