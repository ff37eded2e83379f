import { connectServiceBus, EvalClient, type Bus, type RunningService, type ServiceKit } from '@arbiter/service-kit';
import { mcpBusEndpoint } from './bus-endpoint.js';
import type { McpConfig } from './config.js';

/** A running mcp service, with its bus exposed for tests. */
export interface RunningMcp extends RunningService {
  bus: Bus;
}

/**
 * Serves `mcp.http` in the `mcp` queue group: the gateway carries each `POST /mcp` exchange over the
 * bus with the caller's principal. The service has no listener of its own.
 */
export async function startMcp(kit: ServiceKit<McpConfig>): Promise<RunningMcp> {
  const { config, logger } = kit;
  const bus = await connectServiceBus(kit);
  try {
    await bus.serve({
      name: 'mcp',
      version: kit.version,
      description: 'MCP rule tools (Streamable HTTP over the bus)',
      endpoints: {
        http: mcpBusEndpoint({
          bus,
          evals: new EvalClient(bus, { coalesce: config.EXEC_COALESCE }),
          logger,
          timeoutMs: config.MCP_TIMEOUT_MS,
          version: kit.version,
        }),
      },
    });
  } catch (err) {
    await bus.close();
    throw err;
  }
  logger.info({ prefix: config.NATS_SUBJECT_PREFIX }, 'mcp service started');
  return { bus, ready: () => bus.connected(), close: () => bus.close() };
}
