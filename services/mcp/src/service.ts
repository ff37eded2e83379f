import { EvalClient, startService, type Bus, type RunningService, type ServiceKit } from '@arbiter/service-kit';
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
export function startMcp(kit: ServiceKit<McpConfig>): Promise<RunningMcp> {
  return startService(kit, async (s) => {
    const { config, logger } = kit;
    const bus = await s.bus();
    await s.serve(bus, {
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
    return { bus, ready: () => bus.connected() };
  });
}
