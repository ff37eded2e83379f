import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A running ops server. */
export interface OpsServer {
  /** The bound port (useful when started on port 0). */
  port: number;
  close(): Promise<void>;
}

/** How long `/readyz` waits for the readiness check before it answers 503. */
const READY_TIMEOUT_MS = 1000;

/**
 * Plain HTTP endpoints for orchestrators: `GET /healthz` (200 while the process runs),
 * `GET /readyz` (200 when `ready()` says so within a second, else 503) and `GET /metrics`
 * (Prometheus text).
 */
export async function startOpsServer(opts: {
  port: number;
  host?: string;
  ready: () => boolean | Promise<boolean>;
  registry: Registry;
  readyTimeoutMs?: number;
}): Promise<OpsServer> {
  const server = createServer((req, res) => {
    void route(req, res, opts).catch(() => send(res, 500, 'application/json', '{"status":"error"}'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  opts: { ready: () => boolean | Promise<boolean>; registry: Registry; readyTimeoutMs?: number },
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'application/json', '{"status":"method_not_allowed"}');
  switch (path) {
    case '/healthz':
      return send(res, 200, 'application/json', '{"status":"ok"}');
    case '/readyz': {
      const ready = await withinDeadline(opts.ready, opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
      return ready
        ? send(res, 200, 'application/json', '{"status":"ready"}')
        : send(res, 503, 'application/json', '{"status":"not_ready"}');
    }
    case '/metrics':
      return send(res, 200, opts.registry.contentType, await opts.registry.metrics());
    default:
      return send(res, 404, 'application/json', '{"status":"not_found"}');
  }
}

/** The check's answer, or false when it throws or takes longer than `ms`. */
async function withinDeadline(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      Promise.resolve()
        .then(check)
        .catch(() => false),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body);
}
