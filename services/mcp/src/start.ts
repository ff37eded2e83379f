import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectBus } from '@arbiter/service-kit';
import type { Logger } from './logger.js';
import { buildMcpHandler } from './app.js';
import { mcpBusEndpoint } from './bus-endpoint.js';
import type { McpConfig } from './config.js';

/** A running mcp service. */
export interface RunningMcp {
  /** The bound port (useful with `MCP_PORT=0`). */
  port: number;
  /** True while the bus is connected. */
  ready(): boolean;
  /** Stops accepting connections, lets in-flight requests finish, then drains the bus. */
  stop(): Promise<void>;
}

/** The package version, reported as the MCP server version. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/** Connects to NATS and listens on `HOST:MCP_PORT` (in-process use: tests, a one-process stack). */
export async function startMcp(config: McpConfig, logger: Logger): Promise<RunningMcp> {
  const bus = await connectBus({ url: config.NATS_URL, prefix: config.NATS_SUBJECT_PREFIX, name: 'mcp', logger });
  const version = packageVersion();
  // The gateway forwards /mcp over the bus (queue group `mcp`); the HTTP listener serves direct
  // internal callers with the same tools.
  await bus.serve({
    name: 'mcp',
    version,
    description: 'MCP rule tools (Streamable HTTP over the bus)',
    endpoints: { http: mcpBusEndpoint({ bus, logger, timeoutMs: config.MCP_TIMEOUT_MS, version }) },
  });
  const server = createServer(buildMcpHandler({ bus, logger, config, version }));
  server.keepAliveTimeout = 5000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.MCP_PORT, config.HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await bus.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  logger.info({ host: config.HOST, port, path: '/mcp' }, 'mcp service listening');
  let stopping: Promise<void> | undefined;
  return {
    port,
    ready: () => bus.connected(),
    stop: () =>
      (stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await closed;
        await bus.close();
      })()),
  };
}
